"""In-place rewrites: outputs reuse an input's buffer when the DestroyHandler allows it.

An Elemwise may be made in place of an input whose axes of unknown size might broadcast:
the C loop and ``perform`` then write into it only when it has the output's shape at run
time, and return a new array otherwise.

Each candidate is tried with ``replace_all_validate``; the DestroyHandler rejects it when the
input is a graph input (explicit, shared, updated or not) or a constant, a view of one, a
graph output, or read by a node that cannot run before the destroyer. So only
intermediates are ever overwritten, and a call that fails part-way leaves every input and
shared variable as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.graph.basic import Constant
from graphc.opt.destroy import get_destroy_handler
from graphc.opt.engine import register
from graphc.opt.utils import size_key as _size_key
from graphc.tensor.elemwise import Elemwise

if TYPE_CHECKING:
    from graphc.graph.basic import Apply, Op
    from graphc.graph.fg import FunctionGraph


TAGS = ("inplace", "fast_run")


def _candidate(var, out, mutable: frozenset = frozenset()) -> bool:
    """``var`` could hold ``out``: an intermediate (or an input the function may overwrite,
    ``In(x, mutable=True)``) of the same dtype and broadcast pattern."""
    return (
        not isinstance(var, Constant)
        and (var.owner is not None or var in mutable)
        and getattr(var.type, "dtype", None) == out.type.dtype
        and var.type.broadcastable == out.type.broadcastable
    )


def _same_size_as_output(node, k: int, memo: dict) -> bool:
    """Input ``k`` of an Elemwise surely has the output's runtime shape (numpy broadcasting
    may grow an axis of unknown size that happens to be 1)."""
    target = node.inputs[k]
    for axis in range(target.type.ndim):
        if target.type.shape[axis] is not None:
            continue
        mine = _size_key(target, axis, memo)
        for j, other in enumerate(node.inputs):
            if j != k and other.type.shape[axis] != 1 and _size_key(other, axis, memo) != mine:
                return False
    return True


def _try(fgraph: FunctionGraph, ctx, node: Apply, new_node) -> bool:
    return ctx.replace(fgraph, list(zip(node.outputs, new_node.outputs)), ctx.current)


@register("inplace", *TAGS, is_global=True)
def elemwise_inplace(fgraph: FunctionGraph, ctx):
    # Elemwise{op}(a, b) -> Elemwise{op, {0: k}}(a, b) for the first input k it may destroy
    memo: dict = {}
    mutable = get_destroy_handler(fgraph).mutable
    for node in fgraph.toposort():
        if node not in fgraph.apply_nodes or not isinstance(node.op, Elemwise):
            continue
        if node.op.inplace_pattern:
            continue
        out = node.outputs[0]
        # inputs surely of the output's size first; then any other candidate (its buffer is
        # used when the broadcast does not grow it at run time, else the output is new)
        # (output 0 of a multi-output loop can only take the buffer of an input it reads:
        # its shape is that of the inputs it reads)
        reads = node.op.output_inputs(node, 0)
        cands = [k for k in reads if _candidate(node.inputs[k], out, mutable)]
        cands.sort(key=lambda k: not _same_size_as_output(node, k, memo))
        for k in cands:
            try:
                new = Elemwise(node.op.scalar_op, {0: k}).make_node(*node.inputs)
            except (TypeError, ValueError):
                continue
            if _try(fgraph, ctx, node, new):
                break


def _inplace_variant(op: Op):
    """The in-place twin of a blas or inc/set_subtensor Op, or None."""
    if getattr(op, "inplace", True) or "inplace" not in getattr(op, "__props__", ()):
        return None
    props = {p: getattr(op, p) for p in op.__props__}
    props["inplace"] = True
    try:
        return type(op)(**props)
    except TypeError:
        return None


@register("inplace", *TAGS, is_global=True)
def destructive_inplace(fgraph: FunctionGraph, ctx):
    # Gemm(z, a, x, y, b) -> Gemm{inplace};  Gemv likewise;  IncSubtensor{Inc} -> {InplaceInc}
    mutable = get_destroy_handler(fgraph).mutable
    for node in fgraph.toposort():
        if node not in fgraph.apply_nodes or isinstance(node.op, Elemwise):
            continue
        op = _inplace_variant(node.op)
        if op is None or op.destroy_map != {0: [0]}:
            continue
        if not _candidate(node.inputs[0], node.outputs[0], mutable):
            continue
        try:
            new = op.make_node(*node.inputs)
        except (TypeError, ValueError):
            continue
        _try(fgraph, ctx, node, new)
