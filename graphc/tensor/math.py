"""Element-wise functions over tensors and reductions (sum, prod, max, min, argmax, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import (
    _ELEMWISE,
    DimShuffle,
    Elemwise,
    broadcast_shape_symbolic,
    elemwise_op,  # noqa: F401  (re-exported: its old home)
)
from graphc.tensor.shape import Shape_i
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable, constant

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import DTypeLike

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

# ------------------------------------------------------------------ element-wise


def _ew(scalar_op: ps.ScalarOp):
    """The tensor function of ``scalar_op``: its Elemwise with numpy broadcasting."""
    op = _ELEMWISE[scalar_op.name]

    def apply(*args: Any):
        return op(*args)

    apply.__name__ = scalar_op.name
    apply.__doc__ = f"Element-wise {scalar_op.name} with numpy broadcasting."
    return apply


add = _ew(ps.add)
mul = _ew(ps.mul)
sub = _ew(ps.sub)
true_div = _ew(ps.true_div)
int_div = _ew(ps.int_div)
mod = _ew(ps.mod)
pow = _ew(ps.pow)
neg = _ew(ps.neg)
abs = _ew(ps.abs_)
sgn = _ew(ps.sgn)
maximum = _ew(ps.maximum)
minimum = _ew(ps.minimum)
exp = _ew(ps.exp)
exp2 = _ew(ps.exp2)
expm1 = _ew(ps.expm1)
log = _ew(ps.log)
log2 = _ew(ps.log2)
log10 = _ew(ps.log10)
log1p = _ew(ps.log1p)
sqrt = _ew(ps.sqrt)
cbrt = _ew(ps.cbrt)
sqr = _ew(ps.sqr)
sin = _ew(ps.sin)
cos = _ew(ps.cos)
tan = _ew(ps.tan)
arcsin = _ew(ps.arcsin)
arccos = _ew(ps.arccos)
arctan = _ew(ps.arctan)
arctan2 = _ew(ps.arctan2)
sinh = _ew(ps.sinh)
cosh = _ew(ps.cosh)
tanh = _ew(ps.tanh)
sigmoid = _ew(ps.sigmoid)
softplus = _ew(ps.softplus)
erf = _ew(ps.erf)
floor = _ew(ps.floor)
ceil = _ew(ps.ceil)
round = _ew(ps.round_half_to_even)
clip = _ew(ps.clip)
eq = _ew(ps.eq)
neq = _ew(ps.neq)
lt = _ew(ps.lt)
gt = _ew(ps.gt)
le = _ew(ps.le)
ge = _ew(ps.ge)
and_ = _ew(ps.and_)
or_ = _ew(ps.or_)
xor = _ew(ps.xor)
invert = _ew(ps.invert)
switch = _ew(ps.switch)
where = switch
second = _ew(ps.second)
fill = second
identity = _ew(ps.identity)
abs_ = abs
divide = true_div
floor_divide = int_div
power = pow
bitwise_and, bitwise_or, bitwise_xor = and_, or_, xor


def cast(x: TensorLike, dtype: str):
    """``x`` converted to ``dtype`` (no node when it already has that dtype)."""
    x = as_tensor_variable(x)
    dtype = str(np.dtype(dtype))
    if x.dtype == dtype:
        return x
    return Elemwise(ps.Cast(dtype))(x)


# ------------------------------------------------------------------ reductions


def normalize_axis(op_name: str, x: Variable, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(x.ndim))
    axes = [axis] if isinstance(axis, int | np.integer) else list(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"{op_name}: axis {a} is out of range for {x.type} ({x})")
        out.append(a % x.ndim if x.ndim else a)
    if len(set(out)) != len(out):
        raise ValueError(f"{op_name}: repeated axis in {axis}")
    return tuple(sorted(out))


class CAReduce(Op):
    """Reduce with a commutative associative scalar Op over ``axis`` (dropping them).

    Sums and products have Theano's dtype rules: ``dtype`` is the output dtype (default:
    the input's, with booleans and integers narrower than 64 bits widened to int64 /
    uint64) and ``acc_dtype`` the accumulator's (default: at least int64 / uint64 for
    integers, float32 for float16 and float64 for float32: a float16 sum returns float16 as
    numpy's, accumulated in float32). What a scalar
    Op does as a reduction is a fact of its class (``ScalarOp.reducer``, ``reduce_name``,
    ``reduce_accumulates``, ``reduce_dtype``, ``identity``)."""

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    _acc_default = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
                    "uint8": "uint64", "uint16": "uint64", "uint32": "uint64",
                    "float16": "float32", "float32": "float64"}  # fmt: skip

    def __init__(
        self,
        scalar_op: ps.ScalarOp,
        axis: tuple[int, ...],
        dtype: DTypeLike | None = None,
        acc_dtype: DTypeLike | None = None,
    ):
        self.scalar_op = scalar_op
        self.axis = tuple(axis)
        self.dtype = None if dtype is None else str(np.dtype(dtype))
        self.acc_dtype = None if acc_dtype is None else str(np.dtype(acc_dtype))
        if scalar_op.reducer is None:
            raise NotImplementedError(f"reduction with {scalar_op}: it declares no reducer")
        self.np_fn = scalar_op.reducer
        if (dtype is not None or acc_dtype is not None) and not scalar_op.reduce_accumulates:
            raise TypeError(f"{self}: only sums and products take a dtype or acc_dtype")

    def __str__(self) -> str:
        name = self.scalar_op.reduce_name or f"Reduce{{{self.scalar_op}}}"
        acc = "" if self.acc_dtype is None else f", acc={self.acc_dtype}"
        return f"{name}{{axis={list(self.axis)}{acc}}}"

    def out_dtype(self, dtype: str) -> str:
        if self.dtype is not None:
            return self.dtype
        if self.scalar_op.reduce_dtype is not None:
            return self.scalar_op.reduce_dtype
        if self.scalar_op.reduce_accumulates:
            return str(self.np_fn(np.ones(1, dtype=dtype)).dtype)
        return dtype

    def accumulator(self, dtype: str) -> str:
        """The dtype a sum or product of a ``dtype`` input accumulates in (the output's
        for the other reductions); a TypeError when ``acc_dtype`` would lose precision."""
        if not self.scalar_op.reduce_accumulates:
            return self.out_dtype(dtype)
        acc = self.acc_dtype
        if acc is None:
            return self._acc_default.get(dtype, dtype)
        discrete_in = dtype in ps.DISCRETE_DTYPES
        if (
            not (discrete_in and acc in ps.FLOAT_DTYPES)
            and str(np.promote_types(dtype, acc)) != acc
        ):
            raise TypeError(
                f"{self}: acc_dtype {acc} would lose precision on a {dtype} input; give an "
                f"acc_dtype at least as precise, or dtype= to cast only the result"
            )
        return acc

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        for a in self.axis:
            if not 0 <= a < x.ndim:
                raise ValueError(f"{self}: axis {a} is out of range for {x.type}")
        if self.scalar_op.identity is None and x.type.shape:
            for a in self.axis:
                if x.type.shape[a] == 0:
                    raise ValueError(f"{self}: zero-size axis {a} has no identity")
        self.accumulator(x.dtype)
        shape = tuple(s for i, s in enumerate(x.type.shape) if i not in self.axis)
        return Apply(self, [x], [TensorType(self.out_dtype(x.dtype), shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        dt = node.outputs[0].type.dtype
        kw = {}
        if self.scalar_op.reduce_accumulates:
            kw = {"dtype": self.accumulator(node.inputs[0].type.dtype)}
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.asarray(self.np_fn(x, axis=self.axis, **kw)).astype(dt)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(s for i, s in enumerate(shapes[0]) if i not in self.axis)]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        return float(np.prod(input_shapes[0]))

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        (g,) = gouts
        if x.dtype not in ps.FLOAT_DTYPES:
            return [None]
        sop = self.scalar_op
        g_b = _restore_axes(g, x.ndim, self.axis)
        if isinstance(sop, ps.Add):
            return [cast(second(x, g_b), x.dtype)]
        out = _restore_axes(self(x), x.ndim, self.axis)
        if isinstance(sop, ps.Mul):
            return [cast(g_b * self._prod_of_others(x), x.dtype)]
        if isinstance(sop, ps.Maximum | ps.Minimum):
            return [cast(g_b * cast(eq(x, out), x.dtype), x.dtype)]
        return [None]

    def _prod_of_others(self, x):
        """Per element, the product of the other elements of its reduction group: ``prod /
        x`` where the group has no zero, else exact (0/0 would give NaN at the zero)."""
        is_zero = eq(x, 0)
        keep = _restore_axes  # the reduced axes put back, to broadcast against x
        n_zeros = keep(sum(is_zero, axis=self.axis, dtype="int64"), x.ndim, self.axis)
        prod_nonzero = keep(self(switch(is_zero, 1, x)), x.ndim, self.axis)
        with_one_zero = switch(is_zero, prod_nonzero, 0)
        return switch(eq(n_zeros, 0), prod_nonzero / x, switch(eq(n_zeros, 1), with_one_zero, 0))


class ElemwiseSums(Op):
    """One loop of a multi-output ``Elemwise{inner}`` that also sums some of its values over
    every axis: outputs are the arrays of inner outputs ``kept`` and then the sums of inner
    outputs ``summed`` (0-d, in the element dtype as ``Sum``, accumulated in float64;
    float32/float64 only), so a value whose only other reader is a full sum is never
    written out (what the ``reduce_fusion`` pass makes of ``t = exp(x); [t * 2,
    t.sum()]``). Each value has the broadcast shape of the inputs it reads, as in a
    multi-output Elemwise. ``sum(exp(x))``
    is ``ElemwiseSums(Composite{exp(i0)}, kept=(), summed=(0,))``. No gradient:
    rewrites make it after ``grad`` ran."""

    __props__ = ("inner", "kept", "summed")

    def __init__(self, inner: ps.ScalarOp, kept: Sequence[int], summed: Sequence[int]):
        self.inner = inner
        self.kept = tuple(int(k) for k in kept)
        self.summed = tuple(int(k) for k in summed)

    def __str__(self) -> str:
        if not self.kept and self.summed == (0,):
            return f"Sum{{{self.inner}}}"
        parts = []
        if self.kept:
            parts.append("values " + ",".join(map(str, self.kept)))
        parts.append("sums of " + ",".join(map(str, self.summed)))
        return f"Elemwise{{{self.inner}; {'; '.join(parts)}}}"

    def make_node(self, *inputs: Variable) -> Apply:
        loop = Elemwise(self.inner).make_node(*inputs)
        if not self.summed:
            raise TypeError(f"{self}: sums nothing")
        outs = [loop.outputs[k].type() for k in self.kept]
        for k in self.summed:
            dt = loop.outputs[k].type.dtype
            if dt not in ("float32", "float64"):
                raise TypeError(f"{self}: output {k} is {dt}; only float sums are fused")
            outs.append(TensorType(dt, ())())
        return Apply(self, list(loop.inputs), outs)

    def perform(self, node, inputs, output_storage):
        nk = len(self.kept)
        with np.errstate(all="ignore"):
            res = self.inner.evaluate(self.inner.output_dtypes()[0], *inputs)
        if not isinstance(res, tuple):
            res = (res,)
        for cell, k, var in zip(output_storage, self.kept, node.outputs):
            arr = np.asarray(res[k]).astype(var.type.dtype, copy=False)
            aliased = [a for a in inputs if np.may_share_memory(arr, a)]  # (any is shadowed)
            if not arr.flags.writeable or aliased:
                # a value of its own, as Elemwise gives: a later node may overwrite it in
                # place (second(x, y) evaluates to a read-only broadcast view)
                arr = arr.copy()
            cell[0] = arr
        for cell, k, var in zip(output_storage[nk:], self.summed, node.outputs[nk:]):
            dt = var.type.dtype
            cell[0] = np.asarray(np.sum(res[k], dtype="float64"), dtype=dt)

    def output_inputs(self, node: Apply, k: int) -> tuple[int, ...]:
        """Indices of the inputs output ``k`` of ``node`` depends on."""
        inner_k = (self.kept + self.summed)[k]
        deps = getattr(self.inner, "output_deps", None)
        if deps is None or not deps[inner_k]:
            return tuple(range(len(node.inputs)))
        return deps[inner_k]

    def infer_shape(self, fgraph, node, shapes):
        static = [i.type.shape for i in node.inputs]
        out = []
        for k in range(len(self.kept)):
            ks = self.output_inputs(node, k)
            out.append(broadcast_shape_symbolic([shapes[j] for j in ks], [static[j] for j in ks]))
        return out + [()] * len(self.summed)

    def flops(self, node, input_shapes, output_shapes) -> float:
        n = float(np.prod(np.broadcast_shapes(*input_shapes))) if input_shapes else 0.0
        return n * (len(getattr(self.inner, "nodes", ())) + len(self.summed))


def _restore_axes(v, ndim: int, axes: tuple[int, ...]):
    """``v`` with broadcastable axes at positions ``axes`` of the ``ndim``-d result (the
    reduced axes put back, or indexing's new axes)."""
    order: list = []
    k = 0
    for i in range(ndim):
        if i in axes:
            order.append("x")
        else:
            order.append(k)
            k += 1
    return DimShuffle(v.ndim, order)(v)


def _keep(out, x, axes: int | Sequence[int] | None, keepdims: bool):
    return _restore_axes(out, x.ndim, axes) if keepdims else out


def _reduce(
    name: str,
    scalar_op: ps.ScalarOp,
    x: TensorLike,
    axis: int | Sequence[int] | None,
    keepdims: bool,
    dtype: DTypeLike | None = None,
    acc_dtype: DTypeLike | None = None,
):
    x = as_tensor_variable(x)
    axes = normalize_axis(name, x, axis)
    out = CAReduce(scalar_op, axes, dtype, acc_dtype)(x)
    return _keep(out, x, axes, keepdims)


def sum(
    x: TensorLike,
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    dtype: DTypeLike | None = None,
    acc_dtype: DTypeLike | None = None,
):
    """Sum over ``axis`` (all axes when None); ``dtype`` and ``acc_dtype`` as in Theano
    (see ``CAReduce``): float32 sums accumulate in float64 and return float32."""
    return _reduce("sum", ps.add, x, axis, keepdims, dtype, acc_dtype)


def prod(
    x: TensorLike,
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    dtype: DTypeLike | None = None,
    acc_dtype: DTypeLike | None = None,
    no_zeros_in_input: bool = False,
):
    """Product over ``axis``; ``no_zeros_in_input`` (Theano's gradient hint) changes
    nothing: the gradient is right with or without zeros."""
    return _reduce("prod", ps.mul, x, axis, keepdims, dtype, acc_dtype)


def max(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    return _reduce("max", ps.maximum, x, axis, keepdims)


def min(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    return _reduce("min", ps.minimum, x, axis, keepdims)


def all(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    return _reduce("all", ps.and_, x, axis, keepdims)


def any(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    return _reduce("any", ps.or_, x, axis, keepdims)


class Argmax(Op):
    """Index of the largest (or, with ``kind='min'``, smallest) element over one axis set."""

    __props__ = ("axis", "kind")

    def __init__(self, axis: tuple[int, ...], kind: str = "max"):
        self.axis = tuple(axis)
        self.kind = kind

    def __str__(self) -> str:
        return f"Arg{self.kind}{{axis={list(self.axis)}}}"

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        shape = tuple(s for i, s in enumerate(x.type.shape) if i not in self.axis)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        keep = [i for i in range(x.ndim) if i not in self.axis]
        if x.ndim and 0 in [x.shape[a] for a in self.axis]:
            raise ValueError(f"{self}: attempt to get the arg{self.kind} of an empty axis")
        xt = x.transpose(keep + list(self.axis)).reshape(
            [x.shape[i] for i in keep] + [-1 if self.axis else 1]
        )
        fn = np.argmax if self.kind == "max" else np.argmin
        output_storage[0][0] = np.asarray(fn(xt, axis=-1), dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(s for i, s in enumerate(shapes[0]) if i not in self.axis)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None]


def argmax(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    x = as_tensor_variable(x)
    axes = normalize_axis("argmax", x, axis)
    return _keep(Argmax(axes, "max")(x), x, axes, keepdims)


def argmin(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    x = as_tensor_variable(x)
    axes = normalize_axis("argmin", x, axis)
    return _keep(Argmax(axes, "min")(x), x, axes, keepdims)


def _count(x, axes: int | Sequence[int] | None):
    n = None
    for a in axes:
        d = Shape_i(a)(x)
        n = d if n is None else n * d
    return constant(np.int64(1)) if n is None else n


def mean(
    x: TensorLike,
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    dtype: DTypeLike | None = None,
    acc_dtype: DTypeLike | None = None,
    op: bool = False,
):
    """Mean over ``axis``. As in Theano, ``dtype`` is the sum's dtype (accumulated in
    ``acc_dtype``), divided by the count in float32 for a float16/32 sum, else float64."""
    if op:
        raise NotImplementedError("mean(op=True): graphc has no separate Mean Op")
    x = as_tensor_variable(x)
    axes = normalize_axis("mean", x, axis)
    if dtype is not None or acc_dtype is not None:
        s = sum(x, axis=axes, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype)
        n_dt = "float32" if s.dtype in ("float16", "float32") else "float64"
        return s / cast(_count(x, axes), n_dt)
    out_dt = x.dtype if x.dtype in ps.FLOAT_DTYPES else "float64"
    out_dt = out_dt if dtype is None else str(np.dtype(dtype))
    if out_dt == "float16":  # as numpy: sum and divide in float32 (a count may pass 65504)
        s = sum(x, axis=axes, keepdims=keepdims, dtype="float32")
        return cast(s / cast(_count(x, axes), "float32"), out_dt)
    if acc_dtype is None and x.dtype not in ps.FLOAT_DTYPES:
        acc_dtype = "float64"  # as numpy's mean: an int64 sum can wrap
    s = sum(x, axis=axes, keepdims=keepdims, dtype=out_dt, acc_dtype=acc_dtype)
    return cast(s / cast(_count(x, axes), out_dt), out_dt)


def var(
    x: TensorLike,
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    ddof: int = 0,
    corrected: bool = False,
):
    """Variance over ``axis`` (divided by ``n - ddof``); ``corrected`` (Theano's) subtracts
    the corrected two-pass term ``(sum of deviations) ** 2 / n``, the rounding error."""
    x = as_tensor_variable(x)
    axes = normalize_axis("var", x, axis)
    out_dt = x.dtype if x.dtype in ps.FLOAT_DTYPES else "float64"
    xf = cast(x, out_dt)
    centered = xf - mean(xf, axis=axes, keepdims=True)
    n = cast(_count(x, axes), out_dt)
    ss = sum(sqr(centered), axis=axes, keepdims=keepdims)
    if corrected:
        ss = ss - sqr(sum(centered, axis=axes, keepdims=keepdims)) / n
    return cast(ss / (n - ddof), out_dt)


def std(
    x: TensorLike,
    axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
    ddof: int = 0,
    corrected: bool = False,
):
    return sqrt(var(x, axis=axis, keepdims=keepdims, ddof=ddof, corrected=corrected))


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("np", "annotations", "ps")]
