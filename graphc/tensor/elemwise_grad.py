"""Gradients of Elemwise nodes (one rule per scalar Op) and of DimShuffle, written with
tensor operations; registered in ``tensor/elemwise.py``'s ``GRAD_RULES``, which cannot
import the reductions and element-wise math built on its Ops."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.rules import RuleTable
from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor.elemwise import GRAD_RULES, DimShuffle, Elemwise
from graphc.tensor.variable import constant

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from graphc.graph.basic import Apply, Op, Variable
    from graphc.tensor.variable import TensorLike, TensorVariable


def _c(value: float, like: Variable):
    return constant(np.asarray(value, dtype=like.dtype))


# Per scalar Op class: ``rule(inputs, output, output_gradient) -> input gradients``. A
# class may instead carry its rule (``ScalarOp.grad_rule``, for rules the tensor operators
# alone can write): ``rule_of`` finds either.
_RULES: RuleTable[Callable[..., Any]] = RuleTable("Elemwise gradient")


def rule_of(sop: ps.ScalarOp) -> Callable[..., Any] | None:
    """The gradient rule of the scalar Op ``sop``: its class's own ``grad_rule`` when it
    overrides ``ScalarOp.grad_rule``, else the one registered here, else None."""
    if type(sop).grad_rule is not ps.ScalarOp.grad_rule:
        return sop.grad_rule
    return _RULES.get(sop)


@_RULES.register(ps.Add)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    return [g] * len(x)


@_RULES.register(ps.Sub)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    return [g, -g]


@_RULES.register(ps.Mul)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    out = []
    for i in range(len(x)):
        others = [x[j] for j in range(len(x)) if j != i]
        out.append(g * tm.mul(*others) if len(others) > 1 else g * others[0])
    return out


@_RULES.register(ps.True_div)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g / b, -g * a / tm.sqr(b)]


@_RULES.register(ps.Pow)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g * b * a ** (b - 1), g * z * tm.log(a)]


@_RULES.register(ps.Mod)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g, -g * tm.floor(a / b)]


_RULES.add(ps.Neg, lambda x, z, g: [-g])
_RULES.add(ps.Abs, lambda x, z, g: [g * tm.sgn(x[0])])
_RULES.add(ps.Exp, lambda x, z, g: [g * z])
_RULES.add(ps.Exp2, lambda x, z, g: [g * z * _c(np.log(2.0), z)])
_RULES.add(ps.Expm1, lambda x, z, g: [g * (z + _c(1, z))])
_RULES.add(ps.Log, lambda x, z, g: [g / x[0]])
_RULES.add(ps.Log2, lambda x, z, g: [g / (x[0] * _c(np.log(2.0), z))])
_RULES.add(ps.Log10, lambda x, z, g: [g / (x[0] * _c(np.log(10.0), z))])
_RULES.add(ps.Log1p, lambda x, z, g: [g / (x[0] + _c(1, z))])
_RULES.add(ps.Sqrt, lambda x, z, g: [g * _c(0.5, z) / z])
_RULES.add(ps.Sqr, lambda x, z, g: [g * _c(2, z) * x[0]])
_RULES.add(ps.Sin, lambda x, z, g: [g * tm.cos(x[0])])
_RULES.add(ps.Cos, lambda x, z, g: [-g * tm.sin(x[0])])
_RULES.add(ps.Tan, lambda x, z, g: [g * (_c(1, z) + tm.sqr(z))])
_RULES.add(ps.Arcsin, lambda x, z, g: [g / tm.sqrt(_c(1, z) - tm.sqr(x[0]))])
_RULES.add(ps.Arccos, lambda x, z, g: [-g / tm.sqrt(_c(1, z) - tm.sqr(x[0]))])
_RULES.add(ps.Arctan, lambda x, z, g: [g / (_c(1, z) + tm.sqr(x[0]))])
_RULES.add(ps.Sinh, lambda x, z, g: [g * tm.cosh(x[0])])
_RULES.add(ps.Cosh, lambda x, z, g: [g * tm.sinh(x[0])])
_RULES.add(ps.Tanh, lambda x, z, g: [g * (_c(1, z) - tm.sqr(z))])
_RULES.add(ps.Sigmoid, lambda x, z, g: [g * z * (_c(1, z) - z)])
_RULES.add(ps.Softplus, lambda x, z, g: [g * tm.sigmoid(x[0])])
_RULES.add(ps.Erf, lambda x, z, g: [g * _c(2 / np.sqrt(np.pi), z) * tm.exp(-tm.sqr(x[0]))])
_RULES.add(ps.Identity, lambda x, z, g: [g])
_RULES.add(ps.Second, lambda x, z, g: [None, g])


@_RULES.register(ps.Arctan2)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    y, xx = x
    d = tm.sqr(xx) + tm.sqr(y)
    return [g * xx / d, -g * y / d]


@_RULES.register(ps.Maximum)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    pick = tm.ge(a, b)
    return [g * tm.cast(pick, g.dtype), g * tm.cast(tm.invert(pick), g.dtype)]


@_RULES.register(ps.Minimum)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    pick = tm.le(a, b)
    return [g * tm.cast(pick, g.dtype), g * tm.cast(tm.invert(pick), g.dtype)]


@_RULES.register(ps.Clip)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, lo, hi = x
    inside = tm.and_(tm.ge(a, lo), tm.le(a, hi))
    return [g * tm.cast(inside, g.dtype), g * tm.cast(tm.lt(a, lo), g.dtype),
            g * tm.cast(tm.gt(a, hi), g.dtype)]  # fmt: skip


@_RULES.register(ps.Switch)
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    c, a, b = x
    zero = _c(0, g)
    return [None, tm.switch(c, g, zero), tm.switch(c, zero, g)]


@GRAD_RULES.register(DimShuffle)
def dimshuffle_grad(op: Op, inputs: list[Variable], gouts: list[Variable]):
    """Sum the gradient over the axes ``op`` added, then undo its permutation."""
    (g,) = gouts
    if op.augment:
        g = tm.sum(g, axis=op.augment)  # now axis j is input axis shuffle[j]
    order = ["x" if i in op.drop else op.shuffle.index(i) for i in range(op.input_ndim)]
    return [DimShuffle(len(op.shuffle), order)(g)]


@GRAD_RULES.register(Elemwise)
def elemwise_grad(op: Op, inputs: list[Variable], gouts: list[Variable]):
    """Input gradients of ``op(*inputs)`` given the output gradient (one output)."""
    (g,) = gouts
    z = op(*inputs)
    sop = op.scalar_op
    name = sop.name
    if isinstance(sop, ps.Cast):
        x = inputs[0]
        return [tm.cast(g, x.dtype) if x.dtype in ps.FLOAT_DTYPES else None]
    if sop.gradient == "undefined":
        return [None] * len(inputs)
    if sop.gradient == "zero":
        return [tm.second(i, _c(0, i)) if i.dtype in ps.FLOAT_DTYPES else None for i in inputs]
    rule = rule_of(sop)
    if rule is None:
        raise NotImplementedError(f"gradient of Elemwise{{{name}}} is not implemented")
    grads = rule(list(inputs), z, g)
    out = []
    for x, gx in zip(inputs, grads):
        if gx is None or x.dtype not in ps.FLOAT_DTYPES:
            out.append(None)
            continue
        out.append(tm.cast(reduce_to(gx, x), x.dtype))
    return out


def reduce_to(g: TensorLike, x: Variable):
    """Sum ``g`` over the axes along which ``x`` was broadcast (static size 1)."""
    axes = tuple(
        i for i, (xs, gs) in enumerate(zip(x.type.shape, g.type.shape)) if xs == 1 and gs != 1
    )
    if g.ndim > x.ndim:
        lead = tuple(range(g.ndim - x.ndim))
        g = tm.sum(g, axis=lead)
    if axes:
        g = tm.sum(g, axis=axes, keepdims=True)
    return g


def elemwise_rop(node: Apply, eval_points: list[Variable | None]):
    """Directional derivative of an Elemwise node's (single) output: the sum over inputs of
    the partial derivative times the input's tangent. Each rule above is linear in its output
    gradient and element-wise before ``reduce_to``, so given a tangent in place of the output
    gradient its entry for input ``i`` is that input's term."""
    op = node.op
    (z,) = node.outputs
    if z.dtype not in ps.FLOAT_DTYPES:
        return [None]
    sop = op.scalar_op
    inputs = list(node.inputs)
    if isinstance(sop, ps.Cast):
        return [None if eval_points[0] is None else tm.cast(eval_points[0], z.dtype)]
    if sop.gradient != "rule":
        return [None]
    rule = rule_of(sop)
    if rule is None:
        return NotImplemented  # Rop tries the gradient, and names the Op if that fails too
    terms = []
    for i, v in enumerate(eval_points):
        if v is None or inputs[i].dtype not in ps.FLOAT_DTYPES:
            continue
        t = rule(inputs, z, tm.cast(v, z.dtype))[i]
        if t is not None:
            terms.append(t)
    if not terms:
        return [None]
    r = tm.cast(terms[0] if len(terms) == 1 else tm.add(*terms), z.dtype)
    # the terms may all miss an axis their tangents broadcast along (declared size 1, as
    # for grad): give the sum the output's shape
    if any(rs == 1 and zs != 1 for rs, zs in zip(r.type.shape, z.type.shape)):
        r = tm.second(z, r)
    return [r]
