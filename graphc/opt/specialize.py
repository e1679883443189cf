"""Specialization: replace general Ops by faster special cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.opt.engine import register
from graphc.opt.utils import const_like, fit, make_const, owner_is, scalar_const
from graphc.scalar import basic as ps
from graphc.tensor import math as m
from graphc.tensor.math import CAReduce, mul, neg

if TYPE_CHECKING:
    from graphc.graph.fg import FunctionGraph


TAGS = ("specialize", "fast_run")


@register("specialize", *TAGS, tracks=(type(ps.pow),))
def pow_specialize(fgraph: FunctionGraph, node):
    # x ** 2 -> sqr(x);  x ** 0.5 -> sqrt(x);  x ** 1 -> x;  x ** -1 -> 1 / x (float x)
    x, e = node.inputs
    v = scalar_const(e)
    out = node.outputs[0]
    if v is None or x.type.ndim != out.type.ndim:
        return None
    if v == 2:
        return [fit(out, m.sqr(x))]
    if v == 1:
        return [fit(out, x)]
    if out.type.dtype in ps.FLOAT_DTYPES:
        if v == 0.5:
            return [fit(out, m.sqrt(x))]
        if v == -1:
            return [fit(out, m.true_div(const_like(1, out), x))]
    return None


@register("specialize", *TAGS, tracks=(ps.Mul,))
def mul_minus_one(fgraph: FunctionGraph, node):
    # mul(-1, x) -> neg(x)
    if len(node.inputs) != 2:
        return None
    for c, x in (node.inputs, node.inputs[::-1]):
        v = scalar_const(c)
        if v is not None and v == -1 and scalar_const(x) is None:
            out = node.outputs[0]
            if out.type.dtype not in ps.FLOAT_DTYPES:
                return None
            return [fit(out, neg(x))]
    return None


@register("specialize", *TAGS, tracks=(CAReduce,))
def sum_of_mul_const(fgraph: FunctionGraph, node):
    # sum(c * x, axis) -> c * sum(x, axis)   (c a broadcastable constant)
    if not isinstance(node.op.scalar_op, ps.Add) or node.op.dtype is not None:
        return None
    inner = owner_is(node.inputs[0], ps.Mul)
    if inner is None or len(fgraph.clients[node.inputs[0]]) != 1:
        return None
    consts = [i for i in inner.inputs if scalar_const(i) is not None]
    rest = [i for i in inner.inputs if scalar_const(i) is None]
    if len(consts) != 1 or not rest:
        return None
    out = node.outputs[0]
    x = rest[0] if len(rest) == 1 else inner.op.make_node(*rest).outputs[0]
    if x.type.shape != node.inputs[0].type.shape:
        return None
    s = node.op(x)
    c = make_const(scalar_const(consts[0]), consts[0].type.dtype, s.type.ndim)

    new = mul(c, s)
    if new.type.dtype != out.type.dtype:
        return None
    return [fit(out, new)]
