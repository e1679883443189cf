"""BLAS specialization: dot -> Dot22 / Gemv, and ``b*z + a*dot(x, y)`` -> Gemm / Gemv."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.opt.engine import register
from graphc.opt.utils import fit, make_const, owner_is, scalar_const, size_key
from graphc.scalar import basic as ps
from graphc.tensor import blas
from graphc.tensor.basic import alloc, shape_tuple
from graphc.tensor.elemwise import DimShuffle
from graphc.tensor.math import neg

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from graphc.graph.fg import FunctionGraph

TAGS = ("specialize", "blas", "fast_run")


def _zeros(n, dtype: DTypeLike):
    return alloc(make_const(0, dtype), n)


def _float_same(*vs) -> bool:
    dts = {v.type.dtype for v in vs}
    return len(dts) == 1 and dts.pop() in ps.FLOAT_DTYPES


@register("specialize", *TAGS, tracks=(blas.Dot,))
def dot_to_blas(fgraph: FunctionGraph, node):
    # dot(X, Y) -> Dot22(X, Y);  dot(A, x) -> Gemv(zeros, 1, A, x, 0);  dot(x, A) -> Gemv(.., A.T)
    if type(node.op) is not blas.Dot:
        return None
    a, b = node.inputs
    out = node.outputs[0]
    if a.type.ndim == 2 and b.type.ndim == 2:
        return [fit(out, blas.dot22(a, b))]
    if not _float_same(a, b, out):
        return None
    if a.type.ndim == 2 and b.type.ndim == 1:
        mat, vec = a, b
    elif a.type.ndim == 1 and b.type.ndim == 2:
        mat, vec = b.T, a
    else:
        return None
    y = _zeros(shape_tuple(mat)[0], out.type.dtype)
    return [fit(out, blas.Gemv()(y, 1.0, mat, vec, 0.0))]


def _coef(v):
    """A 0-d version of a broadcast scalar ``v`` (constant or DimShuffle of a 0-d), else None."""
    c = scalar_const(v)
    if c is not None:
        return make_const(c)
    if v.owner is not None and isinstance(v.owner.op, DimShuffle):
        x = v.owner.inputs[0]
        if x.type.ndim == 0:
            return x
    if v.type.ndim == 0:
        return v
    return None


def _scaled(v):
    """``(alpha, core)`` when ``v`` is ``alpha * core`` (alpha a broadcast scalar)."""
    node = owner_is(v, ps.Mul)
    if node is not None and len(node.inputs) == 2:
        for c, x in (node.inputs, node.inputs[::-1]):
            if all(s == 1 for s in c.type.shape) and not all(s == 1 for s in x.type.shape):
                alpha = _coef(c)
                if alpha is not None:
                    return alpha, x
    return None, v


def _product(v):
    """``(kind, X, Y)`` when ``v`` is a Dot22 / Gemv-from-zero / dot product, else None."""
    node = v.owner
    if node is None:
        return None
    if isinstance(node.op, blas.Dot) and all(i.type.ndim == 2 for i in node.inputs):
        return ("gemm", *node.inputs)
    if isinstance(node.op, blas.Gemv) and not node.op.inplace and scalar_const(node.inputs[4]) == 0:
        if scalar_const(node.inputs[1]) == 1:
            return ("gemv", node.inputs[2], node.inputs[3])
    return None


@register("specialize", *TAGS, tracks=(ps.Add, ps.Sub))
def gemm_from_add(fgraph: FunctionGraph, node):
    # b*z + a*dot(x, y) -> Gemm(z, a, x, y, b);  z - dot(x, y) -> Gemm(z, -1, x, y, 1)
    if len(node.inputs) != 2:
        return None
    out = node.outputs[0]
    sign = -1 if isinstance(node.op.scalar_op, ps.Sub) else 1
    for k in (1, 0) if sign == 1 else (1,):
        z_term, p_term = node.inputs[1 - k], node.inputs[k]
        alpha, core = _scaled(p_term)
        prod = _product(core)
        if prod is None or len(fgraph.clients[core]) != 1:
            continue
        beta, z = _scaled(z_term)
        if z.type.broadcastable != out.type.broadcastable or not _float_same(z, core, out):
            continue
        memo: dict = {}
        same = all(size_key(z, d, memo) == size_key(core, d, memo) for d in range(z.type.ndim))
        if not same and prod[0] != "gemm":
            continue  # z might broadcast at run time; Gemv needs its exact shape
        dt = out.type.dtype
        one = make_const(1, dt)
        alpha = one if alpha is None else alpha
        beta = one if beta is None else beta
        if sign == -1:
            alpha = neg(alpha)
        if prod[0] == "gemm":  # a Gemm that broadcasts when the sizes might differ
            return [fit(out, blas.Gemm(broadcast=not same)(z, alpha, prod[1], prod[2], beta))]
        return [fit(out, blas.Gemv()(z, alpha, prod[1], prod[2], beta))]
    return None
