"""Canonicalization: put expressions in one normal form so later rewrites match them.

Not rewritten on purpose: ``x / x -> 1`` (wrong where x is 0, inf or nan) and ``x * 0 -> 0``
(wrong for inf and nan). ``x - x -> 0`` is rewritten, as in Theano (it differs from numpy
only where x is inf or nan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Constant, ancestors
from graphc.opt.engine import register
from graphc.opt.utils import (
    const_like,
    fit,
    is_const,
    make_const,
    owner_is,
    scalar_const,
    scalar_op,
)
from graphc.scalar import basic as ps
from graphc.tensor.basic import Alloc, MakeVector, Reshape, Shape, Shape_i, shape_tuple
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import add, cast, second
from graphc.tensor.subtensor import AdvancedIncSubtensor, AdvancedIncSubtensor1, IncSubtensor

if TYPE_CHECKING:
    from graphc.graph.basic import Apply, Variable
    from graphc.graph.fg import FunctionGraph


CHEAP = ("canonicalize", "fast_run", "fast_compile")
FULL = ("canonicalize", "fast_run")

MAX_FLAT_INPUTS = 32


@register("canonicalize", *CHEAP, tracks=(ps.Add, ps.Mul))
def flatten_add_mul(fgraph: FunctionGraph, node):
    # add(add(a, b), c) -> add(a, b, c)   (likewise mul; inner node of the same dtype, one client)
    # At most MAX_FLAT_INPUTS inputs: flattening a chain of thousands into one node would
    # rebuild ever larger nodes (quadratic compile time) for no gain in the fused loop.
    kind = type(node.op.scalar_op)
    dtype = node.outputs[0].type.dtype
    new_inputs, changed = [], False
    room = MAX_FLAT_INPUTS - len(node.inputs)
    for i in node.inputs:
        inner = owner_is(i, kind)
        if (inner is not None and i.type.dtype == dtype and len(fgraph.clients[i]) == 1
                and not inner.op.inplace_pattern and len(inner.inputs) - 1 <= room):  # fmt: skip
            new_inputs.extend(inner.inputs)
            room -= len(inner.inputs) - 1
            changed = True
        else:
            new_inputs.append(i)
    if not changed:
        return None
    return [fit(node.outputs[0], node.op.make_node(*new_inputs).outputs[0])]


_INCREMENTS = (IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor)


def _zeros(v) -> bool:
    """``v`` is ``Alloc(0, ...)``: zeros of a shape (a gradient's zeros_like)."""
    return v.owner is not None and isinstance(v.owner.op, Alloc) and is_const(v.owner.inputs[0], 0)


@register("canonicalize", *FULL, tracks=(ps.Add,))
def serialize_inc_subtensor(fgraph: FunctionGraph, node):
    # add(inc(z, a, i), inc(z, b, j), w) -> inc(inc(add(z, z, w), a, i), b, j): Theano's
    # local_IncSubtensor_serialize. The gradient of several slices of one variable is a
    # sum of arrays of its size, each zero but for its slice; chained, the increments go
    # into one array (in place after the first, once the inplace pass has run).
    out = node.outputs[0]

    def movable(v) -> bool:
        n = v.owner
        return (n is not None and isinstance(n.op, _INCREMENTS) and not n.op.inplace
                and not n.op.set_instead_of_inc and v.type == out.type
                and len(fgraph.clients[v]) == 1)  # fmt: skip

    moving = [v for v in node.inputs if movable(v)]
    if not moving:
        return None
    rest = [v for v in node.inputs if not movable(v)]
    for v in moving:  # one copy of a zero array serves as the base of all
        base = v.owner.inputs[0]
        if not (base in rest and _zeros(base)):
            rest.append(base)
    tip = add(*rest) if len(rest) > 1 else rest[0]
    for v in moving:
        tip = v.owner.op(tip, *v.owner.inputs[1:])
    return [fit(out, tip)]


@register("canonicalize", *CHEAP, tracks=(ps.Add, ps.Mul))
def collect_constants(fgraph: FunctionGraph, node):
    # add(x, 1, 2) -> add(x, 3);  mul(x, 1) -> x;  add(x, 0) -> x;  mul(x, 0) stays
    out = node.outputs[0]
    consts = [i for i in node.inputs if scalar_const(i) is not None]
    rest = [i for i in node.inputs if scalar_const(i) is None]
    if not consts or not rest:
        return None
    if out.type.dtype == "bool":
        return None
    identity = node.op.scalar_op.identity
    if len(consts) == 1 and not is_const(consts[0], identity):
        return None
    with np.errstate(all="ignore"):
        value = node.op.scalar_op.impl(*[np.asarray(scalar_const(c)) for c in consts])
    if np.asarray(value) != identity:
        rest = [*rest, const_like(value, out)]
    if len(rest) == 1:
        return [fit(out, rest[0])]
    new = node.op.make_node(*rest).outputs[0]
    if new.type.dtype != out.type.dtype:
        return None
    return [fit(out, new)]


@register("canonicalize", *FULL, tracks=(ps.Sub,))
def sub_self(fgraph: FunctionGraph, node: Apply):
    # x - x -> fill(x, 0)   (note: differs from numpy where x is inf or nan)
    a, b = node.inputs
    if a is not b:
        return None
    out = node.outputs[0]
    return [fit(out, second(a, const_like(0, out)))]


@register("canonicalize", *CHEAP, tracks=(type(ps.neg),))
def double_neg(fgraph: FunctionGraph, node: Apply):
    # -(-x) -> x
    inner = owner_is(node.inputs[0], ps.Neg)
    if inner is None:
        return None
    return [fit(node.outputs[0], inner.inputs[0])]


@register("canonicalize", *FULL, tracks=(type(ps.neg),))
def neg_into_mul(fgraph: FunctionGraph, node):
    # -(c * x) -> (-c) * x   (c a constant)
    inner = owner_is(node.inputs[0], ps.Mul)
    if inner is None or len(fgraph.clients[node.inputs[0]]) != 1:
        return None
    out = node.outputs[0]
    if out.type.dtype not in ps.FLOAT_DTYPES:
        return None
    ins = list(inner.inputs)
    for k, i in enumerate(ins):
        v = scalar_const(i)
        if v is not None:
            ins[k] = const_like(-np.asarray(v, dtype=i.type.dtype), i)
            return [fit(out, inner.op.make_node(*ins).outputs[0])]
    return None


@register("canonicalize", *CHEAP, tracks=(DimShuffle,))
def dimshuffle_of_dimshuffle(fgraph: FunctionGraph, node):
    # dimshuffle(dimshuffle(x, p), q) -> dimshuffle(x, p o q)
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, DimShuffle):
        return None
    order = ["x" if o == "x" else inner.op.new_order[o] for o in node.op.new_order]
    x = inner.inputs[0]
    if order == list(range(x.type.ndim)):
        return [fit(node.outputs[0], x)]
    return [DimShuffle(x.type.ndim, order)(x)]


@register("canonicalize", *CHEAP, tracks=(DimShuffle,))
def useless_dimshuffle(fgraph: FunctionGraph, node):
    # dimshuffle(x, (0, 1, ..., n-1)) -> x
    if list(node.op.new_order) == list(range(node.op.input_ndim)):
        return [node.inputs[0]]
    return None


@register("canonicalize", *CHEAP, tracks=(ps.Cast, ps.Identity))
def useless_cast(fgraph: FunctionGraph, node):
    # cast(x, x.dtype) -> x
    x = node.inputs[0]
    if isinstance(scalar_op(node), ps.Identity) or x.type.dtype == node.outputs[0].type.dtype:
        return [fit(node.outputs[0], x)]
    return None


@register("canonicalize", *CHEAP, tracks=(Reshape,))
def useless_reshape(fgraph: FunctionGraph, node):
    # reshape(x, shape(x)) -> x;  reshape(x, [Shape_i{0}(x), ...]) -> x
    x, shp = node.inputs
    if x.type.ndim != node.op.ndim:
        return None
    if shp.owner is not None and isinstance(shp.owner.op, Shape) and shp.owner.inputs[0] is x:
        return [x]
    if isinstance(shp, Constant) and None not in x.type.shape:
        if tuple(int(s) for s in np.asarray(shp.data)) == x.type.shape:
            return [x]
    if shp.owner is not None and isinstance(shp.owner.op, MakeVector):
        for k, e in enumerate(shp.owner.inputs):
            ok = (e.owner is not None and isinstance(e.owner.op, Shape_i)
                  and e.owner.op.i == k and e.owner.inputs[0] is x)  # fmt: skip
            if not ok and not (x.type.shape[k] is not None and is_const(e, x.type.shape[k])):
                return None
        return [x]
    return None


@register("canonicalize", *CHEAP, tracks=(Shape_i,))
def shape_i_of_node(fgraph: FunctionGraph, node):
    # Shape_i{k}(op(a, b)) -> the k-th entry of op.infer_shape over a's and b's shapes
    v = node.inputs[0]
    k = node.op.i
    if v.type.shape[k] is not None:
        return [make_const(v.type.shape[k], "int64")]
    prod = v.owner
    if prod is None or not hasattr(prod.op, "infer_shape"):
        return None
    shapes = [shape_tuple(i) if hasattr(i.type, "ndim") else None for i in prod.inputs]
    entry = prod.op.infer_shape(fgraph, prod, shapes)[v.index][k]
    if entry is None or entry is v or not hasattr(entry, "type"):
        return None
    if v in _ancestors_upto(entry, prod):
        return None
    return [fit(node.outputs[0], cast(entry, "int64"))]


def _ancestors_upto(var: Variable, stop) -> set:
    return set(ancestors([var], blockers=stop.inputs))


@register("canonicalize", *CHEAP, tracks=(Elemwise,))
def useless_second(fgraph: FunctionGraph, node):
    # fill(x, y) -> y   when y already has x's (static) shape and the output's dtype
    if not isinstance(scalar_op(node), ps.Second):
        return None
    x, y = node.inputs
    out = node.outputs[0]
    if y.type.dtype != out.type.dtype:
        return None
    if y.type.shape == out.type.shape and None not in y.type.shape:
        return [y]
    if y.type.shape == x.type.shape and _same_shape(x, y):
        return [y]
    return None


def _same_shape(x, y, depth: int = 4) -> bool:
    """``y``'s shape surely covers ``x``'s: ``y`` is an Elemwise result (its shape is the
    broadcast of its inputs') with ``x`` among its inputs, recursively."""
    node = y.owner
    if depth == 0 or node is None or not isinstance(node.op, Elemwise):
        return False
    return any(i is x or _same_shape(x, i, depth - 1) for i in node.inputs)
