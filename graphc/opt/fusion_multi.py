"""Multi-output fusion: element-wise nodes around a value with several consumers become one
loop producing every value needed outside it.

Single-output fusion (``graphc/opt/fusion.py``) stops at a value with several clients: it
stays a separate node, materialised, and each consumer rereads it. This pass runs after it
and groups the remaining fusable Elemwise nodes (single output, not in place, with C code)
into regions: a region grows from a seed (nodes in schedule order) to producers, consumers
and siblings (nodes reading the same non-constant input) whose output has the seed's static
shape. Each region becomes one Elemwise over a multi-output ``Composite`` whose outputs are
the region's values with a client outside it (a graph output, a reduction, a node of other
shape), in schedule order; inputs are numbered depth first from those outputs.

A region must stay *convex*: no node outside it may be both a descendant and an ancestor of
its members, else the fused node would feed and consume that node (a cycle). Reachability is
kept as bitsets over a schedule; when a region is accepted its members are contracted in the
bitsets (every ancestor of a member reaches everything any member reaches, and vice versa),
so later regions are checked against the graph as it will be after earlier ones are fused.

Each output of the fused node has the broadcast shape of the inputs it depends on (the C
loop writes an output whose inputs are smaller at run time through zero strides), so values
keep their shapes when an axis of unknown size is 1 at run time. A region is not fused when
an output's static type would change.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import new_node_origins
from graphc.opt.engine import register
from graphc.opt.fusion import (
    MAX_INPUTS,
    _fusable,
    _is_const_input,
    _scalar_graph_multi,
    is_heavy,
)
from graphc.scalar.basic import Add, Composite
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import CAReduce, ElemwiseSums

if TYPE_CHECKING:
    from typing import Any

    from graphc.graph.basic import Apply
    from graphc.graph.fg import FunctionGraph


MAX_OUTPUTS = 16  # values one fused loop may write (inputs + outputs stay under the C limit)
MAX_MEMBERS = 256  # nodes in one region (growing checks are quadratic in it)


def _bit_positions(x: int) -> list[int]:
    """The positions of the set bits of ``x`` (>= 0), ascending."""
    if not x:
        return []
    raw = np.frombuffer(x.to_bytes((x.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()


class Reach:
    """Strict ancestors and descendants of every node, as bitsets over ``order``."""

    def __init__(self, fgraph: FunctionGraph) -> None:
        self.order = fgraph.toposort()
        self.pos = {n: k for k, n in enumerate(self.order)}
        anc: list[int] = []
        for n in self.order:
            a = 0
            for i in n.inputs:
                p = i.owner
                if p is not None:
                    j = self.pos[p]
                    a |= anc[j] | (1 << j)
            anc.append(a)
        desc = [0] * len(self.order)
        for k in range(len(self.order) - 1, -1, -1):
            d = 0
            for o in self.order[k].outputs:
                for c, _ in fgraph.clients.get(o, ()):
                    if c != "output":
                        j = self.pos[c]
                        d |= desc[j] | (1 << j)
            desc[k] = d
        self.anc, self.desc = anc, desc

    def bit(self, node: Apply) -> int:
        return 1 << self.pos[node]

    def contract(self, members: list, live: int | None = None) -> None:
        """Treat ``members`` as one node from now on. Only the bitsets of the nodes in
        ``live`` (a bitset; default every node) are kept up to date: the others are never
        read again. A node's bitsets change only when it is an ancestor (or descendant) of
        a member, so only those are visited."""
        bits = au = du = 0
        for m in members:
            k = self.pos[m]
            bits |= 1 << k
            au |= self.anc[k]
            du |= self.desc[k]
        au &= ~bits
        du &= ~bits
        keep = ~0 if live is None else live
        # (anc and desc are transposes: k is in some member's anc iff a member is in
        # desc[k], so the ancestors to update are exactly au's bits)
        down, up = bits | du, bits | au
        desc, anc = self.desc, self.anc
        for k in _bit_positions(au & keep):
            desc[k] |= down
        for k in _bit_positions(du & keep):
            anc[k] |= up
        for m in members:
            k = self.pos[m]
            self.anc[k], self.desc[k] = au, du

    def convex(self, bits: int, au: int, du: int) -> bool:
        """No node outside ``bits`` lies between two of its members."""
        return not (au & du & ~bits)


def _shape(node: Apply) -> tuple:
    return getattr(node.outputs[0].type, "shape", ())


def _neighbours(fgraph: FunctionGraph, node: Apply):
    for i in node.inputs:
        if i.owner is not None:
            yield i.owner
        if not _is_const_input(i):
            for c, _ in fgraph.clients.get(i, ()):
                if c != "output":
                    yield c
    for c, _ in fgraph.clients.get(node.outputs[0], ()):
        if c != "output":
            yield c


def _outputs(fgraph: FunctionGraph, members: list, mset: set) -> list:
    """The members' values needed outside the region, in schedule order."""
    return [
        m.outputs[0]
        for m in members
        if any(c == "output" or c not in mset for c, _ in fgraph.clients.get(m.outputs[0], ()))
    ]


def _grow(fgraph: FunctionGraph, seed: Apply, reach: Reach, taken: set) -> list:
    shape = _shape(seed)
    k0 = reach.pos[seed]
    members, mset = [seed], {seed}
    bits, au, du = 1 << k0, reach.anc[k0], reach.desc[k0]
    # heavy members (ScalarOp.heavy): a heavy node may not join above or below one of them,
    # since one loop would chain the two (paths between members stay in a convex region)
    heavy = bits if is_heavy(seed) else 0
    ext = {i for i in seed.inputs if not _is_const_input(i)}
    queue = deque([seed])
    while queue and len(members) < MAX_MEMBERS:
        m = queue.popleft()
        for n in _neighbours(fgraph, m):
            if n in mset or n in taken or n not in reach.pos or not _fusable(n):
                continue
            if _shape(n) != shape:
                continue
            k = reach.pos[n]
            n_heavy = is_heavy(n)
            if n_heavy and (reach.anc[k] | reach.desc[k]) & heavy:
                continue
            nbits, nau, ndu = bits | (1 << k), au | reach.anc[k], du | reach.desc[k]
            if not reach.convex(nbits, nau, ndu):
                continue
            next_set = mset | {n}
            next_ext = {v for v in ext if v.owner not in next_set} | {
                i for i in n.inputs if i.owner not in next_set and not _is_const_input(i)
            }
            if len(next_ext) > MAX_INPUTS:
                continue
            if len(_outputs(fgraph, [*members, n], next_set)) > MAX_OUTPUTS:
                continue
            members.append(n)
            mset, bits, au, du, ext = next_set, nbits, nau, ndu, next_ext
            heavy |= (1 << k) if n_heavy else 0
            queue.append(n)
    members.sort(key=reach.pos.__getitem__)
    return members


def _fuse(fgraph: FunctionGraph, members: list):
    """The replacement pairs fusing ``members``, or None."""
    mset = set(members)
    outs = _outputs(fgraph, members, mset)
    if not outs:
        return None
    s_in, t_in, s_out = _scalar_graph_multi(outs, mset)
    if not t_in:
        return None
    origins = tuple(dict.fromkeys(o for n in members for o in n.origins))
    with new_node_origins(origins):
        new = Elemwise(Composite(s_in, s_out)).make_node(*t_in)
    if any(n.type != o.type for n, o in zip(new.outputs, outs)):
        return None
    return list(zip(outs, new.outputs))


@register("multi_fusion", "multi_fusion", "fusion", "fast_run", is_global=True)
def fuse_multi_output(fgraph: FunctionGraph, ctx):
    # t = exp(x); [t * 2, tanh(t) + y, sum(t)]
    #   -> t, a, b = Elemwise{Composite{exp(i0), exp(i0) * 2, tanh(exp(i0)) + i1}}(x, y)
    seeds = [n for n in fgraph.toposort() if _fusable(n)]
    if len(seeds) < 2:
        return
    reach = Reach(fgraph)
    live = 0  # the nodes whose bitsets may still be read: seeds not yet in a region
    for seed in seeds:
        live |= reach.bit(seed)
    taken: set = set()
    regions = []
    for seed in seeds:
        if seed in taken:
            continue
        members = _grow(fgraph, seed, reach, taken)
        if len(members) < 2:
            continue
        taken.update(members)
        for m in members:
            live &= ~reach.bit(m)
        reach.contract(members, live)
        regions.append(members)
    for members in regions:
        pairs = _fuse(fgraph, members)
        if pairs:
            ctx.replace(fgraph, pairs, ctx.current)


def _loop_parts(p: Apply):
    """``(inner Composite, tensor inputs, kept, summed)`` of a loop a full sum may join:
    an Elemwise that is not in place (a multi-output one, or one with C code whose value
    has other readers too) or an ElemwiseSums; else None."""
    if isinstance(p.op, ElemwiseSums):
        return p.op.inner, list(p.inputs), p.op.kept, p.op.summed
    if not isinstance(p.op, Elemwise) or p.op.inplace_pattern:
        return None
    if isinstance(p.op.scalar_op, Composite) and len(p.outputs) > 1:
        return p.op.scalar_op, list(p.inputs), tuple(range(len(p.outputs))), ()
    if not _fusable(p):
        return None
    s_in, t_in, s_out = _scalar_graph_multi(p.outputs, {p})
    return Composite(s_in, s_out), t_in, (0,), ()


@register(
    "reduce_fusion", "reduce_fusion", "multi_fusion", "fusion", "fast_run", tracks=(CAReduce,)
)
def fuse_sum_into_loop(fgraph: FunctionGraph, node: Any):
    # t, a = Elemwise{Composite{exp(i0), exp(i0) * 2}}(x); s = Sum(t)
    #   -> a, s = Elemwise{Composite{exp(i0), exp(i0) * 2}; values 1; sums of 0}(x)
    op, x = node.op, node.inputs[0]
    if not isinstance(op.scalar_op, Add) or x.type.ndim == 0:
        return None
    if sorted(op.axis) != list(range(x.type.ndim)):
        return None
    dt = x.type.dtype
    if dt not in ("float32", "float64") or node.outputs[0].type.dtype != dt:
        return None
    p = x.owner
    parts = None if p is None else _loop_parts(p)
    if p is None or parts is None:
        return None
    inner, t_in, kept, summed = parts
    k = kept[p.outputs.index(x)]
    if k in summed:
        return None
    clients = fgraph.clients.get(x, ())
    only_sum = all(c is node for c, _ in clients)
    new_kept = tuple(j for j in kept if not (j == k and only_sum))
    new_summed = (*summed, k)
    if len(t_in) + len(new_kept) + len(new_summed) > 64:
        return None
    origins = tuple(dict.fromkeys((*p.origins, *node.origins)))
    with new_node_origins(origins):
        new = ElemwiseSums(inner, new_kept, new_summed).make_node(*t_in)
    nk = len(new_kept)
    repl = {}
    for old, j in zip(p.outputs[: len(kept)], kept):
        if j in new_kept:
            repl[old] = new.outputs[new_kept.index(j)]
    for old, j in zip(p.outputs[len(kept) :], summed):
        repl[old] = new.outputs[nk + new_summed.index(j)]
    repl[node.outputs[0]] = new.outputs[-1]
    if any(n.type != o.type for o, n in repl.items()):
        return None
    return repl
