"""R_op rules (forward-mode derivatives) of the tensor Ops, registered in ``graphc.graph.rop``.

Each rule maps a node and its inputs' tangents (None for a zero tangent) to its outputs'
tangents. Ops that are linear in some inputs (the others being indices, shapes or axes)
apply themselves to the tangents; bilinear products use the product rule; the rest have
their derivative written out. ``graphc.gradient.Rop`` differentiates Ops without a rule
here by transposing their gradient (two reverse passes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.graph.rop import register_rop
from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor import subtensor as ts
from graphc.tensor.basic import Alloc, Join, MakeVector, Reshape, SpecifyShape, zeros_like
from graphc.tensor.blas import Dot, Gemm, Gemv, MatMul, dot
from graphc.tensor.contractions import BatchedDot
from graphc.tensor.conv import Conv2d, Conv2dGradInputs, Conv2dGradWeights
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.elemwise_grad import elemwise_rop
from graphc.tensor.extra_ops import CumOp, PermuteAlongAxis, RepeatGrad, RepeatOp, TileGrad, TileOp
from graphc.tensor.math import CAReduce, _restore_axes
from graphc.tensor.nnet import (
    CrossentropyCategorical1Hot,
    CrossentropyCategorical1HotGrad,
    CrossentropySoftmax1Hot,
    CrossentropySoftmax1HotDx,
    LogSoftmax,
    Softmax,
    _pick,
)
from graphc.tensor.print_op import Print

if TYPE_CHECKING:
    from graphc.graph.basic import Apply, Op, Variable

__all__ = ["add_terms", "linear_in"]


def add_terms(*terms):
    """The sum of the terms that are not None (None when all are)."""
    live = [t for t in terms if t is not None]
    if not live:
        return None
    return live[0] if len(live) == 1 else tm.add(*live)


def _not_inplace(op: Op):
    """``op`` itself, or its copy computing into a new buffer (a tangent must not be
    overwritten in place of the value it stands beside)."""
    if not getattr(op, "inplace", False):
        return op
    kw = {p: getattr(op, p) for p in op.__props__}
    kw["inplace"] = False
    return type(op)(**kw)


def linear_in(*positions: int):
    """The rule of an Op linear in the inputs at ``positions`` jointly (the other inputs are
    indices, shapes or values only read for their shape): the Op applied to their tangents
    (zeros where a tangent is None), the other inputs unchanged."""

    def rule(node: Apply, eval_points: list[Variable | None]):
        if all(eval_points[p] is None for p in positions):
            return [None] * len(node.outputs)
        args = list(node.inputs)
        for p in positions:
            ep = eval_points[p]
            args[p] = zeros_like(args[p]) if ep is None else ep
        out = _not_inplace(node.op)(*args)
        return out if isinstance(out, list) else [out]

    return rule


def bilinear(i: int, j: int):
    """The rule of an Op linear in input ``i`` and in input ``j`` separately (a product):
    ``op(di, j) + op(i, dj)``."""

    def rule(node: Apply, eval_points: list[Variable | None]):
        terms = []
        for p in (i, j):
            if eval_points[p] is not None:
                args = list(node.inputs)
                args[p] = eval_points[p]
                terms.append(node.op(*args))
        return [add_terms(*terms)]

    return rule


_LINEAR_IN_FIRST = (
    DimShuffle, Reshape, SpecifyShape, Alloc,
    ts.Subtensor, ts.AdvancedSubtensor1, ts.AdvancedSubtensor,
    RepeatOp, TileOp, RepeatGrad, TileGrad, PermuteAlongAxis,
)  # fmt: skip
register_rop(*_LINEAR_IN_FIRST)(linear_in(0))
register_rop(ts.IncSubtensor, ts.AdvancedIncSubtensor1, ts.AdvancedIncSubtensor)(linear_in(0, 1))
register_rop(Dot, MatMul, BatchedDot, Conv2d)(bilinear(0, 1))
register_rop(Conv2dGradInputs, Conv2dGradWeights)(bilinear(0, 1))
register_rop(Elemwise)(elemwise_rop)


@register_rop(Join, MakeVector)
def _all_linear(node: Apply, eval_points: list[Variable | None]):
    return linear_in(*range(len(node.inputs)))(node, eval_points)


@register_rop(Print)
def _print(node: Apply, eval_points: list[Variable | None]):
    return [eval_points[0]]  # the tangent is not printed


@register_rop(CumOp)
def _cum(node: Apply, eval_points: list[Variable | None]):
    if node.op.mode == "add":
        return linear_in(0)(node, eval_points)
    return NotImplemented  # cumprod: the transposed gradient


# ------------------------------------------------------------------ reductions


@register_rop(CAReduce)
def _careduce(node: Apply, eval_points: list[Variable | None]):
    (v,) = eval_points
    op = node.op
    (x,) = node.inputs
    (z,) = node.outputs
    sop = op.scalar_op
    if v is None or z.dtype not in ps.FLOAT_DTYPES:
        return [None]
    if isinstance(sop, ps.Add):
        return linear_in(0)(node, eval_points)
    if isinstance(sop, ps.Maximum | ps.Minimum):  # the tangent at the extremum (summed over ties)
        hit = tm.cast(tm.eq(x, _restore_axes(z, x.ndim, op.axis)), v.dtype)
        return [tm.sum(v * hit, axis=op.axis)]
    if isinstance(sop, ps.Mul):  # sum over the group of the product of the others times the tangent
        return [tm.sum(v * op._prod_of_others(x), axis=op.axis)]
    return [None]


# ------------------------------------------------------------------ BLAS


def _scaled_update_rop(node: Apply, eval_points: list[Variable | None]):
    """``beta * z + alpha * dot(a, b)`` (Gemv, Gemm) by the product rule."""
    z, alpha, a, b, beta = node.inputs
    dz, dalpha, da, db, dbeta = eval_points
    dprod = add_terms(None if da is None else dot(da, b), None if db is None else dot(a, db))
    return [
        add_terms(
            None if dbeta is None else dbeta * z,
            None if dz is None else beta * dz,
            None if dalpha is None else dalpha * dot(a, b),
            None if dprod is None else alpha * dprod,
        )
    ]


register_rop(Gemv, Gemm)(_scaled_update_rop)


# ------------------------------------------------------------------ nnet


def _softmax_tangent(v, sm, axis: int):
    return (v - tm.sum(v * sm, axis=axis, keepdims=True)) * sm


@register_rop(Softmax)
def _softmax(node: Apply, eval_points: list[Variable | None]):
    (v,) = eval_points
    if v is None:
        return [None]
    return [_softmax_tangent(v, node.outputs[0], node.op.axis % v.ndim)]


@register_rop(LogSoftmax)
def _log_softmax(node: Apply, eval_points: list[Variable | None]):
    (v,) = eval_points
    if v is None:
        return [None]
    ax = node.op.axis % v.ndim
    return [v - tm.sum(v * tm.exp(node.outputs[0]), axis=ax, keepdims=True)]


@register_rop(CrossentropySoftmax1Hot)
def _xent_softmax(node: Apply, eval_points: list[Variable | None]):
    v = eval_points[0]
    if v is None:
        return [None, None]
    y = node.inputs[1]
    sm = node.outputs[1]
    d_nll = tm.sum(v * sm, axis=1) - _pick(v, y)
    return [d_nll, _softmax_tangent(v, sm, 1)]


@register_rop(CrossentropyCategorical1Hot)
def _xent_1hot(node: Apply, eval_points: list[Variable | None]):
    v = eval_points[0]
    if v is None:
        return [None]
    x, y = node.inputs
    return [-_pick(v, y) / _pick(x, y)]


@register_rop(CrossentropySoftmax1HotDx)
def _xent_softmax_dx(node: Apply, eval_points: list[Variable | None]):
    # dnll[:, None] * (sm - onehot(y)): linear in dnll and in sm separately
    d_g, d_sm, _ = eval_points
    g, sm, y = node.inputs
    return [
        add_terms(
            None if d_g is None else node.op(d_g, sm, y),
            None if d_sm is None else d_sm * g.dimshuffle(0, "x"),
        )
    ]


@register_rop(CrossentropyCategorical1HotGrad)
def _xent_1hot_grad(node: Apply, eval_points: list[Variable | None]):
    # -g[i] / x[i, y[i]] at (i, y[i]): linear in g; in x, d(-g / x) = g dx / x**2, which is
    # the Op applied to -g dx / x.
    d_g, d_x, _ = eval_points
    g, x, y = node.inputs
    return [
        add_terms(
            None if d_g is None else node.op(d_g, x, y),
            None if d_x is None else node.op(-g * _pick(d_x, y) / _pick(x, y), x, y),
        )
    ]
