"""Rewrites of Scan nodes, registered into the rewrite engine by this package.

``scan_save_mem``: a state whose stacked output is only read at its last row (``out[-1]``,
as in ``reduce``, ``result[-1]`` or a Gibbs chain's end) keeps only its final window, so the
loop neither allocates nor fills a buffer of every step (Theano's ``scan_save_mem``). As in
Theano, a loop of zero steps then gives the initial state where ``out[-1]`` of the empty
stacked output would have raised IndexError.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from graphc.graph.basic import ancestors, clone_replace
from graphc.graph.fg import OUTPUT
from graphc.opt.engine import register
from graphc.scan_module.op import Scan, ScanInfo, ScanInner
from graphc.tensor.subtensor import Subtensor

if TYPE_CHECKING:
    from graphc.graph.basic import Apply, Variable
    from graphc.graph.fg import FunctionGraph

__all__ = ["merged_scan", "scan_keep_merge", "scan_merge", "scan_save_mem"]


def _only_last_row_read(fgraph: FunctionGraph, var: Variable, lag: int) -> list | None:
    """The nodes computing ``var[-1]`` (directly or as ``var[lag:][-1]``, the user's view of
    a state's buffer), if nothing else reads ``var``; else None."""
    readers = []
    for client, _ in fgraph.clients.get(var, []):
        if client is OUTPUT or not isinstance(client.op, Subtensor):
            return None
        idx = tuple(client.op.idx_list)
        if idx == (-1,):
            readers.append(client)
            continue
        view = idx[0] if len(idx) == 1 else None
        bounds = (getattr(view, "start", None), getattr(view, "stop", 0), getattr(view, "step", 0))
        if bounds != (lag, None, None):
            return None
        inner = _only_last_row_read(fgraph, client.outputs[0], -1)
        if inner is None:
            return None
        readers += inner
    return readers or None


@register("specialize", "fast_run", "scan", tracks=(Scan,))
def scan_save_mem(fgraph: FunctionGraph, node):
    info = node.op.info
    if info.as_while:
        return None
    keep = list(info.state_last)
    last_reads: dict[int, list] = {}
    for k in range(info.n_states):
        if keep[k]:
            continue
        readers = _only_last_row_read(fgraph, node.outputs[k], info.lags[k])
        if readers is not None:
            keep[k] = True
            last_reads[k] = readers
    if not last_reads:
        return None
    op = Scan(dataclasses.replace(info, state_last=tuple(keep)), node.op.inner)
    new = op(*node.inputs)
    new = new if isinstance(new, list) else [new]
    pairs = {}
    for k, old in enumerate(node.outputs):
        if k in last_reads:
            for reader in last_reads[k]:
                pairs[reader.outputs[0]] = new[k][-1]
        else:
            pairs[old] = new[k]
    return pairs


def _independent(a: Apply, b: Apply) -> bool:
    """Neither node reads (through any path) an output of the other."""
    return not (set(a.outputs) & set(ancestors(b.inputs))) and not (
        set(b.outputs) & set(ancestors(a.inputs))
    )


def _fresh_inner(inner: ScanInner) -> ScanInner:
    """A copy of a step graph with its own placeholders (two loops' steps must not share)."""
    inputs = []
    for v in inner.inputs:
        new = v.type()
        new.name = v.name
        inputs.append(new)
    return ScanInner(inputs, clone_replace(inner.outputs, dict(zip(inner.inputs, inputs))))


def merged_scan(a, b):
    """One Scan node doing the work of ``a`` and ``b`` (same step count), and the pairs
    replacing their outputs."""
    ia, ib = a.op.info, b.op.info
    ina, inb = a.op.inner, _fresh_inner(b.op.inner)
    sa, ta, na = a.op.inner_split()
    sb, tb, nb = Scan(ib, inb).inner_split()

    def split_out(info: ScanInfo, inner: ScanInner) -> tuple[list[Variable], list[Variable]]:
        ns = info.n_states
        return inner.outputs[:ns], inner.outputs[ns : ns + info.n_nit]

    sta, nita = split_out(ia, ina)
    stb, nitb = split_out(ib, inb)
    info = dataclasses.replace(
        ia,
        n_seqs=ia.n_seqs + ib.n_seqs,
        state_taps=ia.state_taps + ib.state_taps,
        state_last=ia.state_last + ib.state_last,
        n_nit=ia.n_nit + ib.n_nit,
        n_nonseqs=ia.n_nonseqs + ib.n_nonseqs,
        name=f"{ia.name or 'scan_fn'}&{ib.name or 'scan_fn'}",
    )
    inputs = sa + sb + [v for t in ta for v in t] + [v for t in tb for v in t] + na + nb
    op = Scan(info, ScanInner(inputs, sta + stb + nita + nitb))
    _, seqa, inita, nona = a.op.outer_split(a.inputs)
    _, seqb, initb, nonb = b.op.outer_split(b.inputs)
    outs = op(a.inputs[0], *seqa, *seqb, *inita, *initb, *nona, *nonb)
    outs = outs if isinstance(outs, list) else [outs]
    na_st, nb_st = ia.n_states, ib.n_states
    new_a = outs[:na_st] + outs[na_st + nb_st : na_st + nb_st + ia.n_nit]
    new_b = outs[na_st : na_st + nb_st] + outs[na_st + nb_st + ia.n_nit :]
    return dict(zip(a.outputs, new_a)) | dict(zip(b.outputs, new_b))


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


@register("merge1", "fast_run", "fast_compile", "scan", tracks=(Scan,))
def scan_keep_merge(fgraph, node):
    """A loop that another loop over the same inputs repeats, with more per-step outputs
    after its own (the copy a gradient makes to keep the step's products for the backward
    loop, ``scan_module/grad.py``), is that loop: its readers read the other's outputs."""
    info, inner = node.op.info, node.op.inner
    n_own = info.n_states + info.n_nit
    for client, _ in fgraph.clients.get(node.inputs[0], []):
        if client is OUTPUT or client is node or not isinstance(client.op, Scan):
            continue
        other = client.op
        if (
            _same(client.inputs, node.inputs)
            and _same(other.inner.inputs, inner.inputs)
            and _same(other.inner.outputs[:n_own], inner.outputs)
            and other.info == dataclasses.replace(info, n_nit=other.info.n_nit)
            and not info.as_while
        ):
            return dict(zip(node.outputs, client.outputs[:n_own]))
    return None


@register("specialize", "fast_run", "scan", "scan_merge", tracks=(Scan,))
def scan_merge(fgraph, node):
    """Two loops over the same number of steps, neither reading the other, become one loop
    whose step does both steps' work (Theano's ``scan_merge``): one VM call per step."""
    info = node.op.info
    if info.as_while:
        return None
    loops = [n for n in fgraph.apply_nodes if isinstance(n.op, Scan) and n is not node]
    if loops:  # in schedule order, so the same graph always merges the same way
        loops = [n for n in fgraph.toposort() if n in loops]
    for other in loops:
        oi = other.op.info
        if (
            oi.as_while
            or other.inputs[0] is not node.inputs[0]
            or oi.truncate_gradient != info.truncate_gradient
            or oi.mode != info.mode
            or not _independent(node, other)
        ):
            continue
        return merged_scan(node, other)
    return None
