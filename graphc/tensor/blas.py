"""Products: ``dot``, ``tensordot``, ``matmul``, ``outer`` and the BLAS-shaped Ops rewrites
introduce (``Dot22``, ``Gemv``, ``Gemm``).

The Python implementations compute products with ``numpy.dot``, so they run in numpy's BLAS
(and its thread pool), as the generated C does (``graphc.linker.blas_lib``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op, Variable
from graphc.scalar.basic import FLOAT_DTYPES
from graphc.tensor.basic import _i64, reshape, shape_tuple
from graphc.tensor.elemwise import DimShuffle, broadcast_static_shapes
from graphc.tensor.math import cast, maximum, mul
from graphc.tensor.math import sum as tsum
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.tensor.variable import TensorLike

__all__ = [
    "Dot", "Dot22", "Gemm", "Gemv", "MatMul", "dot", "dot22", "gemm", "gemv", "matmul",
    "outer", "tensordot",
]  # fmt: skip

_FLOATS = FLOAT_DTYPES


# ------------------------------------------------------------------ BLAS helpers


def _product(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """numpy ``dot`` of vectors / matrices as a new array of ``dtype``."""
    ka, kb = a.shape[-1], b.shape[0 if b.ndim == 1 else -2]
    if ka != kb:
        raise ValueError(
            f"dot: shapes {a.shape} and {b.shape} not aligned: {ka} (dim {a.ndim - 1}) != "
            f"{kb} (dim {max(b.ndim - 2, 0)})"
        )
    if a.ndim == b.ndim == 1 and dtype == "float32":  # a sum: accumulated in float64
        return np.asarray(np.dot(a.astype("float64"), b.astype("float64")), dtype)
    return np.asarray(np.dot(a.astype(dtype, copy=False), b.astype(dtype, copy=False)), dtype)


def _unaliased(dest: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``src``, copied when it shares memory with ``dest`` (which is about to be written)."""
    return src.copy() if np.shares_memory(dest, src) else src


def _scalar(v, dtype: str):
    return np.asarray(v, dtype=dtype)[()]


# ------------------------------------------------------------------ dot


def _check_inner(op: Op, a: Variable, b: Variable, ka: int, kb: int) -> None:
    sa, sb = a.type.shape[ka], b.type.shape[kb]
    if sa is not None and sb is not None and sa != sb:
        raise ValueError(
            f"{op}: inner dimensions do not match ({sa} vs {sb}) for operands {a.type} and {b.type}"
        )


def _out_dtype(a: Variable, b: Variable) -> str:
    return str(np.result_type(np.dtype(a.dtype), np.dtype(b.dtype)))


def _is_float(v: Variable) -> bool:
    return v.dtype in _FLOATS


class Dot(Op):
    """numpy ``dot`` of vectors and matrices (vector.vector is a 0-d tensor)."""

    __props__ = ()

    def __str__(self) -> str:
        return "dot"

    def make_node(self, a: Variable, b: Variable) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim > 2 or b.ndim > 2:
            raise NotImplementedError(
                f"{self} of {a.type} and {b.type}: operands with more than 2 dimensions go "
                "through graphc.tensor.dot (tensordot) or matmul"
            )
        if a.ndim == 0 or b.ndim == 0:
            raise TypeError(f"{self}: operands must be vectors or matrices, got {a.type} and "
                            f"{b.type} (use mul for scalars)")  # fmt: skip
        _check_inner(self, a, b, a.ndim - 1, 0)
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [TensorType(_out_dtype(a, b), shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        a, b = inputs
        output_storage[0][0] = _product(a, b, node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        sa, sb = shapes
        return [tuple(sa[:-1]) + tuple(sb[1:])]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        sa, sb = input_shapes
        k = sa[-1]
        return 2.0 * float(np.prod(sa[:-1])) * float(np.prod(sb[1:])) * k

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        a, b = inputs
        (g,) = gouts
        if a.ndim == 1 and b.ndim == 1:
            ga, gb = g * b, g * a
        elif a.ndim == 2 and b.ndim == 1:
            ga, gb = outer(g, b), dot(a.T, g)
        elif a.ndim == 1:
            ga, gb = dot(b, g), outer(a, g)
        else:
            ga, gb = dot(g, b.T), dot(a.T, g)
        return [_cast_grad(ga, a), _cast_grad(gb, b)]


def _cast_grad(g: Variable, x: Variable):
    return cast(g, x.dtype) if _is_float(x) else None


_dot = Dot()


def dot(a: TensorLike, b: TensorLike):
    """numpy ``dot``, as Theano's: scalars multiply element-wise, vectors and matrices make
    one ``Dot`` node, and an operand with more than 2 dimensions sums over the last axis of
    ``a`` and the second-to-last of ``b`` (the only one of a vector) through ``tensordot``:
    ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.ndim > 2 or b.ndim > 2:
        return tensordot(a, b, [[a.ndim - 1], [max(0, b.ndim - 2)]])
    return _dot(a, b)


# ------------------------------------------------------------------ tensordot


def _axes_lists(
    a: Variable, b: Variable, axes: int | Sequence[int] | None
) -> tuple[list[int], list[int]]:
    if isinstance(axes, int | np.integer):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} is out of range for {a.type} and {b.type}")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        ax_a, ax_b = axes
    except (TypeError, ValueError):
        msg = f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}"
        raise TypeError(msg) from None
    ax_a = [ax_a] if isinstance(ax_a, int | np.integer) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, int | np.integer) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError(f"tensordot: {len(ax_a)} axes of a but {len(ax_b)} of b")
    for ax, v in ((ax_a, a), (ax_b, b)):
        for k in ax:
            if not -v.ndim <= k < v.ndim:
                raise ValueError(f"tensordot: axis {k} is out of range for {v.type}")
    ax_a, ax_b = [int(k) % a.ndim for k in ax_a], [int(k) % b.ndim for k in ax_b]
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
        raise ValueError(f"tensordot: repeated axis in {axes!r}")
    for i, j in zip(ax_a, ax_b):
        sa, sb = a.type.shape[i], b.type.shape[j]
        if sa is not None and sb is not None and sa != sb:
            raise ValueError(f"tensordot: summed axes {i} of a and {j} of b differ ({sa} vs {sb})")
    return ax_a, ax_b


def _prod(items):
    out = _i64(1)
    for s in items:
        out = out * s
    return out


def tensordot(a: TensorLike, b: TensorLike, axes: int | Sequence[Sequence[int]] = 2):
    """numpy ``tensordot``: sum over ``axes`` (an int n: a's last n and b's first n axes, or a
    pair of axis lists); one matrix product between two reshapes, so gradients come from
    ``dot``'s."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    ax_a, ax_b = _axes_lists(a, b, axes)
    free_a = [k for k in range(a.ndim) if k not in ax_a]
    free_b = [k for k in range(b.ndim) if k not in ax_b]
    sa, sb = shape_tuple(a), shape_tuple(b)
    a2 = reshape(
        a.dimshuffle(*free_a, *ax_a), [_prod(sa[k] for k in free_a), _prod(sa[k] for k in ax_a)]
    )
    b2 = reshape(
        b.dimshuffle(*ax_b, *free_b), [_prod(sb[k] for k in ax_b), _prod(sb[k] for k in free_b)]
    )
    out_shape = [sa[k] for k in free_a] + [sb[k] for k in free_b]
    return reshape(_dot(a2, b2), out_shape, ndim=len(out_shape))


# ------------------------------------------------------------------ Dot22


class Dot22(Dot):
    """Matrix-matrix product (``dot`` specialised by rewrites)."""

    def __str__(self) -> str:
        return "Dot22"

    def make_node(self, a: Variable, b: Variable) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim != 2 or b.ndim != 2:
            raise TypeError(f"{self}: operands must be matrices, got {a.type} and {b.type}")
        return super().make_node(a, b)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        a, b = inputs
        (g,) = gouts
        return [_cast_grad(dot22(g, b.T), a), _cast_grad(dot22(a.T, g), b)]


_dot22 = Dot22()


def dot22(a: TensorLike, b: TensorLike):
    return _dot22(a, b)


def outer(a: TensorLike, b: TensorLike):
    """Outer product of two vectors: ``out[i, j] = a[i] * b[j]``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim != 1 or b.ndim != 1:
        raise TypeError(f"outer: operands must be vectors, got {a.type} and {b.type}")
    return mul(DimShuffle(1, [0, "x"])(a), DimShuffle(1, ["x", 0])(b))


# ------------------------------------------------------------------ gemv / gemm


def _as_coef(op: Op, v: TensorLike, name: str):
    if not isinstance(v, Variable) and np.ndim(v) == 0:
        arr = np.asarray(v)
        arr.setflags(write=False)
        return TensorConstant(TensorType(str(arr.dtype), ()), arr)
    v = as_tensor_variable(v)
    if v.ndim != 0:
        raise TypeError(f"{op}: {name} must be a scalar, got {v} of type {v.type}")
    return v


class _ScaledUpdate(Op):
    """``z <- beta * z + alpha * dot(a, b)`` (Gemv, Gemm); with ``inplace`` it overwrites z."""

    __props__ = ("inplace",)

    def __init__(self, inplace: bool = False):
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def _numpy_update(
        self,
        z: np.ndarray,
        alpha: np.generic,
        a: np.ndarray,
        b: np.ndarray,
        beta: np.generic,
        dt: str,
    ) -> np.ndarray:
        """The update, its product through numpy (numpy's BLAS for float32/float64)."""
        prod = alpha * np.dot(a, b)
        res = np.asarray(prod if beta == 0 else beta * z + prod, dtype=dt)
        if self.inplace:
            z[...] = res
            res = z
        return res


class Gemv(_ScaledUpdate):
    """``y <- beta * y + alpha * dot(A, x)``; with ``inplace`` the result overwrites y."""

    def make_node(
        self, y: Variable, alpha: Variable, A: Variable, x: Variable, beta: Variable
    ) -> Apply:
        y, A, x = (as_tensor_variable(v) for v in (y, A, x))
        alpha, beta = _as_coef(self, alpha, "alpha"), _as_coef(self, beta, "beta")
        if y.ndim != 1 or A.ndim != 2 or x.ndim != 1:
            raise TypeError(
                f"{self}: expects (vector y, scalar, matrix A, vector x, scalar), got "
                f"y {y.type}, A {A.type}, x {x.type}"
            )
        if not y.dtype == A.dtype == x.dtype:
            raise TypeError(f"{self}: y, A and x must share a dtype, got y {y.type}, "
                            f"A {A.type}, x {x.type}")  # fmt: skip
        _check_inner(self, A, x, 1, 0)
        m = y.type.shape[0] if y.type.shape[0] is not None else A.type.shape[0]
        if None not in (y.type.shape[0], A.type.shape[0]) and y.type.shape[0] != A.type.shape[0]:
            raise ValueError(f"{self}: y {y.type} and A {A.type} have different lengths")
        return Apply(self, [y, alpha, A, x, beta], [TensorType(y.dtype, (m,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        y, alpha, A, x, beta = inputs
        dt = node.outputs[0].type.dtype
        alpha, beta = _scalar(alpha, dt), _scalar(beta, dt)
        if A.shape[0] != y.shape[0] or A.shape[1] != x.shape[0]:
            raise ValueError(f"{self}: shape mismatch y {y.shape}, A {A.shape}, x {x.shape}")
        if self.inplace:  # y is overwritten while A and x are read: they must not alias it
            A, x = _unaliased(y, A), _unaliased(y, x)  # noqa: N806
        output_storage[0][0] = self._numpy_update(y, alpha, A, x, beta, dt)

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        m, n = input_shapes[2]
        return 2.0 * m * n

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        y, alpha, A, x, beta = inputs
        (g,) = gouts
        return [
            _cast_grad(beta * g, y),
            _cast_grad(tsum(g * dot(A, x)), alpha),
            _cast_grad(alpha * outer(g, x), A),
            _cast_grad(alpha * dot(A.T, g), x),
            _cast_grad(tsum(g * y), beta),
        ]


class Gemm(_ScaledUpdate):
    """``Z <- beta * Z + alpha * dot(X, Y)``; with ``inplace`` the result overwrites Z.

    With ``broadcast`` (never in place) Z and the product broadcast against each other as
    numpy's ``beta * Z + alpha * dot(X, Y)`` would: what the ``gemm_from_add`` rewrite makes
    when it cannot prove their sizes equal (``W - lr * dot(a, b)`` for a shared ``W``).  The
    BLAS path runs whenever Z has the product's shape or broadcasts to it."""

    __props__ = ("inplace", "broadcast")

    def __init__(self, inplace: bool = False, broadcast: bool = False):
        if inplace and broadcast:
            raise TypeError("Gemm: a broadcasting Gemm cannot work in place")
        super().__init__(inplace)
        self.broadcast = bool(broadcast)

    def __str__(self) -> str:
        if self.broadcast:
            return "Gemm{no_inplace,broadcast}"
        return super().__str__()

    def infer_shape(self, fgraph, node, shapes):
        if not self.broadcast:
            return [tuple(shapes[0])]
        sz, sx, sy = shapes[0], shapes[2], shapes[3]
        stat_z = node.inputs[0].type.shape
        stat_p = (node.inputs[2].type.shape[0], node.inputs[3].type.shape[1])
        return [
            tuple(_broadcast_dim((sz[d], stat_z[d]), ((sx[0], sy[1])[d], stat_p[d]))
                  for d in range(2))
        ]  # fmt: skip

    def make_node(
        self, Z: Variable, alpha: Variable, X: Variable, Y: Variable, beta: Variable
    ) -> Apply:  # noqa: N803 - BLAS names
        Z, X, Y = (as_tensor_variable(v) for v in (Z, X, Y))
        alpha, beta = _as_coef(self, alpha, "alpha"), _as_coef(self, beta, "beta")
        if Z.ndim != 2 or X.ndim != 2 or Y.ndim != 2:
            raise TypeError(f"{self}: Z, X and Y must be matrices, got Z {Z.type}, X {X.type}, "
                            f"Y {Y.type}")  # fmt: skip
        if not Z.dtype == X.dtype == Y.dtype:
            raise TypeError(f"{self}: Z, X and Y must share a dtype, got Z {Z.type}, X {X.type}, "
                            f"Y {Y.type}")  # fmt: skip
        _check_inner(self, X, Y, 1, 0)
        shape = []
        for zs, other in ((Z.type.shape[0], X.type.shape[0]), (Z.type.shape[1], Y.type.shape[1])):
            if zs is not None and other is not None and zs != other:
                raise ValueError(f"{self}: Z {Z.type} does not match dot(X {X.type}, Y {Y.type})")
            shape.append(zs if zs is not None else other)
        return Apply(self, [Z, alpha, X, Y, beta], [TensorType(Z.dtype, shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        Z, alpha, X, Y, beta = inputs  # noqa: N806
        dt = node.outputs[0].type.dtype
        alpha, beta = _scalar(alpha, dt), _scalar(beta, dt)
        if self.broadcast and X.shape[1] == Y.shape[0] and Z.shape != (X.shape[0], Y.shape[1]):
            prod = alpha * _product(X, Y, dt)
            res = np.empty(np.broadcast_shapes(Z.shape, prod.shape), dtype=dt)
            res[...] = 0 if beta == 0 else beta * Z  # beta == 0: Z is not read (BLAS's rule)
            res += prod
            output_storage[0][0] = res
            return
        if X.shape[1] != Y.shape[0] or Z.shape != (X.shape[0], Y.shape[1]):
            raise ValueError(f"{self}: shape mismatch Z {Z.shape}, X {X.shape}, Y {Y.shape}")
        if self.inplace:  # Z is overwritten while X and Y are read: they must not alias it
            X, Y = _unaliased(Z, X), _unaliased(Z, Y)  # noqa: N806
        output_storage[0][0] = self._numpy_update(Z, alpha, X, Y, beta, dt)

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        (m, k), (_, n) = input_shapes[2], input_shapes[3]
        return 2.0 * m * n * k

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        Z, alpha, X, Y, beta = inputs  # noqa: N806
        (g,) = gouts
        # (broadcast: summed over static size-1 axes only, as Elemwise gradients are)
        return [
            _cast_grad(beta * g, Z),
            _cast_grad(tsum(g * dot(X, Y)), alpha),
            _cast_grad(alpha * dot(g, Y.T), X),
            _cast_grad(alpha * dot(X.T, g), Y),
            _cast_grad(tsum(g * Z), beta),
        ]


_gemv = Gemv(False)
_gemm = Gemm(False)


def gemv(y: TensorLike, alpha: TensorLike, A: TensorLike, x: TensorLike, beta: TensorLike):  # noqa: N803
    """``beta * y + alpha * dot(A, x)`` as one Gemv node (not in place)."""
    return _gemv(y, alpha, A, x, beta)


def gemm(Z, alpha: TensorLike, X: TensorLike, Y: TensorLike, beta: TensorLike):  # noqa: N803
    """``beta * Z + alpha * dot(X, Y)`` as one Gemm node (not in place)."""
    return _gemm(Z, alpha, X, Y, beta)


# ------------------------------------------------------------------ matmul


def _int_const(v: int) -> TensorConstant:
    arr = np.asarray(v, dtype="int64")
    arr.setflags(write=False)
    return TensorConstant(TensorType("int64", ()), arr)


def _broadcast_dim(da, db):
    """Symbolic size of one broadcast batch axis from ``(symbolic size, static size)`` pairs."""
    cands = [d for d in (da, db) if d[1] != 1]
    known = [d for d in cands if d[1] is not None]
    if known:
        return known[0][0]
    if not cands:
        return da[0]
    return cands[0][0] if len(cands) == 1 else maximum(cands[0][0], cands[1][0])


def _swap_last(x: Variable):
    order = list(range(x.ndim))
    order[-1], order[-2] = order[-2], order[-1]
    return DimShuffle(x.ndim, order)(x)


def _sum_to(g: Variable, x: Variable):
    """Sum ``g`` over the leading axes ``x`` lacks and the batch axes ``x`` broadcast over."""
    lead = g.ndim - x.ndim
    if lead:
        g = tsum(g, axis=tuple(range(lead)))
    axes = tuple(
        i for i, (xs, gs) in enumerate(zip(x.type.shape, g.type.shape)) if xs == 1 and gs != 1
    )
    if axes:
        g = tsum(g, axis=axes, keepdims=True)
    return g


class MatMul(Op):
    """numpy ``matmul``: stacks of matrices with broadcast batch axes; 1-d operands are
    promoted (and the added axis removed) as numpy does."""

    __props__ = ()

    def __str__(self) -> str:
        return "MatMul"

    def make_node(self, a: Variable, b: Variable) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim == 0 or b.ndim == 0:
            raise TypeError(f"{self}: operands must have at least 1 dimension, got {a.type} "
                            f"and {b.type}")  # fmt: skip
        _check_inner(self, a, b, a.ndim - 1, max(b.ndim - 2, 0))
        sa = a.type.shape if a.ndim > 1 else (1,) + a.type.shape
        sb = b.type.shape if b.ndim > 1 else b.type.shape + (1,)
        nb = max(len(sa), len(sb)) - 2
        ba = (1,) * (nb - len(sa) + 2) + sa[:-2]
        bb = (1,) * (nb - len(sb) + 2) + sb[:-2]
        batch = broadcast_static_shapes(self, [ba, bb], [a, b]) if nb else ()
        shape = batch + ((sa[-2],) if a.ndim > 1 else ()) + ((sb[-1],) if b.ndim > 1 else ())
        return Apply(self, [a, b], [TensorType(_out_dtype(a, b), shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        a, b = inputs
        dt = node.outputs[0].type.dtype
        if a.ndim <= 2 and b.ndim <= 2 and (a.ndim == 2 or b.ndim == 2):
            output_storage[0][0] = _product(a, b, dt)
            return
        out = np.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False))
        output_storage[0][0] = np.asarray(out, dtype=dt)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        a, b = node.inputs
        one = _int_const(1)
        sa, ta = list(shapes[0]), a.type.shape
        sb, tb = list(shapes[1]), b.type.shape
        if a.ndim == 1:
            sa, ta = [one, *sa], (1, *ta)
        if b.ndim == 1:
            sb, tb = [*sb, one], (*tb, 1)
        nb = max(len(sa), len(sb)) - 2
        pa = [(one, 1)] * (nb - len(sa) + 2) + list(zip(sa[:-2], ta[:-2]))
        pb = [(one, 1)] * (nb - len(sb) + 2) + list(zip(sb[:-2], tb[:-2]))
        batch = [_broadcast_dim(da, db) for da, db in zip(pa, pb)]
        tail = ([sa[-2]] if a.ndim > 1 else []) + ([sb[-1]] if b.ndim > 1 else [])
        return [tuple(batch) + tuple(tail)]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        a = node.inputs[0]
        k = input_shapes[0][-1]
        return 2.0 * float(np.prod(output_shapes[0])) * k if a.ndim else 0.0

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        a, b = inputs
        (g,) = gouts
        A = a if a.ndim > 1 else DimShuffle(1, ["x", 0])(a)  # noqa: N806
        B = b if b.ndim > 1 else DimShuffle(1, [0, "x"])(b)  # noqa: N806
        G = g  # noqa: N806
        if a.ndim == 1:  # re-insert the row axis matmul removed
            order = list(range(G.ndim))
            order.insert(G.ndim - (0 if b.ndim == 1 else 1), "x")
            G = DimShuffle(g.ndim, order)(G)  # noqa: N806
        if b.ndim == 1:
            G = DimShuffle(G.ndim, [*range(G.ndim), "x"])(G)  # noqa: N806
        ga = _sum_to(matmul(G, _swap_last(B)), A)
        gb = _sum_to(matmul(_swap_last(A), G), B)
        if a.ndim == 1:
            ga = DimShuffle(2, [1])(ga)
        if b.ndim == 1:
            gb = DimShuffle(2, [0])(gb)
        return [_cast_grad(ga, a), _cast_grad(gb, b)]


_matmul = MatMul()


def matmul(a: TensorLike, b: TensorLike):
    """numpy ``matmul`` (the ``@`` operator)."""
    return _matmul(a, b)
