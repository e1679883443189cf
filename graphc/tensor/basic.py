"""Shape and construction Ops: reshape, join, alloc, arange, eye, ... (``Shape``/``Shape_i``
live in ``tensor/shape.py``, constant folding in ``tensor/constant_value.py``; both are
re-exported here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Apply, Constant, Op, Variable
from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor.constant_value import (
    CONSTANT_RULES,
    NotScalarConstantError,
    _cast_to,
    _static_int,
    first_input_constant,
    get_constant_or_none,
    get_scalar_constant_value,
)
from graphc.tensor.elemwise import DimShuffle
from graphc.tensor.math import cast, second
from graphc.tensor.shape import (
    Shape,
    Shape_i,
    _constant,
    _i64,
    get_vector_length,
    shape,
    shape_tuple,
)
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import DTypeLike

    from graphc.tensor.variable import TensorLike

INT_DTYPES = ps.INT_DTYPES


def _as_int_scalar(v: TensorLike, what: str, opname: str):
    """``v`` as a 0-d int64 tensor Variable (python ints become constants)."""
    if isinstance(v, int | np.integer):
        return _i64(v)
    v = as_tensor_variable(v)
    if v.ndim != 0 or v.dtype not in INT_DTYPES:
        raise TypeError(f"{opname}: {what} must be an integer scalar, got {v} of type {v.type}")
    return cast(v, "int64")


class DtypeOp(Op):
    """An Op whose one parameter is the dtype of its output, shown as ``Name{dtype='...'}``."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = str(np.dtype(dtype))

    def __str__(self) -> str:
        return f"{type(self).__name__}{{dtype='{self.dtype}'}}"


# ------------------------------------------------------------------ MakeVector


class MakeVector(DtypeOp):
    """A vector from 0-d tensors: ``MakeVector{int64}(a, b, c)``."""

    def __init__(self, dtype: str = "int64"):
        super().__init__(dtype)

    def make_node(self, *inputs: Variable) -> Apply:
        inputs = [as_tensor_variable(i) for i in inputs]
        for i in inputs:
            if i.ndim != 0:
                raise TypeError(f"{self}: every input must be a 0-d tensor, got {i.type}")
            if not np.can_cast(i.dtype, self.dtype, "same_kind") and not isinstance(
                i, TensorConstant
            ):
                raise TypeError(f"{self}: cannot hold an input of type {i.type}")
        inputs = [cast(i, self.dtype) for i in inputs]
        return Apply(self, inputs, [TensorType(self.dtype, (len(inputs),))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        output_storage[0][0] = np.array(inputs, dtype=self.dtype).reshape(len(inputs))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(_i64(len(node.inputs)),)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        if self.dtype not in ps.FLOAT_DTYPES:
            return [None] * len(inputs)
        (g,) = gouts
        return [g[k] for k in range(len(inputs))]


@CONSTANT_RULES.register(MakeVector)
def _make_vector_constant(node: Apply, v, elemwise):
    if v.ndim != 1 or len(node.inputs) != 1:
        return None
    return _cast_to(get_scalar_constant_value(node.inputs[0], elemwise), v)


def _shape_vector(shp: TensorLike, opname: str):
    """A list of int64 scalar Variables from a list/tuple/ndarray or a symbolic vector."""
    if isinstance(shp, Variable):
        if shp.ndim == 0:
            return [_as_int_scalar(shp, "shape entry", opname)]
        if shp.ndim != 1 or shp.dtype not in INT_DTYPES:
            raise TypeError(f"{opname}: shape must be an integer vector, got {shp.type}")
        if isinstance(shp, Constant):
            return [_i64(s) for s in np.asarray(shp.data)]
        if shp.owner is not None and isinstance(shp.owner.op, MakeVector):
            return [cast(i, "int64") for i in shp.owner.inputs]
        n = shp.type.shape[0]
        if n is None:
            raise ValueError(
                f"{opname}: the length of the shape vector {shp} ({shp.type}) is not known; "
                "pass ndim or a vector with a static length"
            )
        return [cast(shp[k], "int64") for k in range(n)]
    if isinstance(shp, int | np.integer):
        shp = (shp,)
    return [_as_int_scalar(s, "shape entry", opname) for s in shp]


def _make_shape_vector(entries) -> Variable:
    vals = [_static_int(e) for e in entries]
    if all(v is not None for v in vals):
        return _constant(np.asarray(vals, dtype="int64").reshape(len(vals)))
    return MakeVector("int64")(*entries)


# ------------------------------------------------------------------ Reshape


class Reshape(Op):
    """Reshape to an ``ndim``-d shape given as an int64 vector (one entry may be -1).

    numpy decides whether the result is a view or a copy: it is a view whenever the input's
    strides allow it (always for C-contiguous inputs). ``view_map`` is declared because the
    output may alias the input; the C linker treats it as a view only when it is one.
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def __str__(self) -> str:
        return f"Reshape{{{self.ndim}}}"

    def make_node(self, x: Variable, shp: Variable) -> Apply:
        x = as_tensor_variable(x)
        shp = as_tensor_variable(shp)
        if shp.ndim != 1 or shp.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: the shape must be an integer vector, got {shp.type}")
        if shp.type.shape[0] is not None and shp.type.shape[0] != self.ndim:
            raise ValueError(
                f"{self}: shape {shp} has {shp.type.shape[0]} entries, not {self.ndim}"
            )
        if isinstance(shp, Constant):
            shp = _constant(np.asarray(shp.data, dtype="int64"))
        shp = cast(shp, "int64")
        static = self._static_shape(x, shp)
        return Apply(self, [x, shp], [TensorType(x.dtype, static)()])

    def _static_shape(self, x: Variable, shp: Variable) -> tuple:
        if isinstance(shp, Constant):
            vals: list = [int(s) for s in np.asarray(shp.data)]
        elif shp.owner is not None and isinstance(shp.owner.op, MakeVector):
            vals = [_static_int(i) for i in shp.owner.inputs]
        else:
            return (None,) * self.ndim
        if sum(v == -1 for v in vals) > 1:
            raise ValueError(f"{self}: at most one entry of the shape may be -1, got {vals}")
        for v in vals:
            if v is not None and v < -1:
                raise ValueError(f"{self}: invalid shape entry {v} in {vals} (reshaping {x.type})")
        known = [v for v in vals if v is not None and v != -1]
        xs = x.type.shape
        if -1 in vals:
            if None not in vals and None not in xs:
                total, rest = int(np.prod(xs)), int(np.prod(known))
                if rest == 0 or total % rest:
                    raise ValueError(f"{self}: cannot reshape {x.type} to {vals}")
                vals[vals.index(-1)] = total // rest
            else:
                vals[vals.index(-1)] = None
        elif None not in vals and None not in xs and int(np.prod(vals)) != int(np.prod(xs)):
            raise ValueError(f"{self}: cannot reshape {x.type} (static) to shape {tuple(vals)}")
        return tuple(vals)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, shp = inputs
        if len(shp) != self.ndim:
            raise ValueError(f"{self}: got a shape with {len(shp)} entries: {tuple(shp)}")
        try:
            out = np.reshape(x, tuple(int(s) for s in shp))
        except ValueError as e:
            raise ValueError(f"{self}: cannot reshape an array of shape {x.shape} into "
                             f"{tuple(int(s) for s in shp)}") from e  # fmt: skip
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        x, shp = node.inputs
        if isinstance(shp, Constant) or (
            shp.owner is not None and isinstance(shp.owner.op, MakeVector)
        ):
            entries = _shape_vector(shp, str(self))
        else:
            entries = [shp[k] for k in range(self.ndim)]
        static = node.outputs[0].type.shape
        total = _prod(shapes[0])
        out = []
        for i, e in enumerate(entries):
            if static[i] is not None:
                out.append(_i64(static[i]))
                continue
            ev = _static_int(e)
            if ev is not None and ev != -1:
                out.append(e)
                continue
            others = _prod([entries[j] for j in range(len(entries)) if j != i])
            # a -1 entry is the input size divided by the other (non -1) entries
            others = tm.switch(tm.lt(others, _i64(0)), -others, others)
            missing = tm.int_div(total, tm.maximum(others, _i64(1)))
            out.append(missing if ev == -1 else tm.switch(tm.eq(e, _i64(-1)), missing, e))
        return [tuple(out)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, _ = inputs
        (g,) = gouts
        if x.dtype not in ps.FLOAT_DTYPES:
            return [None, None]
        return [reshape(g, shape(x), ndim=x.ndim), None]


def _prod(items):
    out = _i64(1)
    for s in items:
        out = out * s
    return cast(out, "int64")


def reshape(x: TensorLike, newshape: TensorLike, ndim: int | None = None):
    """``x`` reshaped to ``newshape`` (ints, int scalars, or an int vector; one -1 allowed)."""
    x = as_tensor_variable(x)
    if isinstance(newshape, Variable) and newshape.ndim == 1 and ndim is not None:
        if newshape.dtype not in INT_DTYPES:
            raise TypeError(f"reshape: shape must be an integer vector, got {newshape.type}")
        return Reshape(ndim)(x, newshape)
    entries = _shape_vector(newshape, "reshape")
    if ndim is not None and ndim != len(entries):
        raise ValueError(f"reshape: ndim={ndim} but the shape has {len(entries)} entries")
    return Reshape(len(entries))(x, _make_shape_vector(entries))


def flatten(x: TensorLike, ndim: int = 1, outdim: int | None = None):
    """Keep the first ``ndim - 1`` axes and collapse the rest into one (``outdim`` is
    Theano's name for ``ndim``)."""
    if outdim is not None:
        ndim = outdim
    x = as_tensor_variable(x)
    if ndim < 1 or ndim > max(x.ndim, 1):
        raise ValueError(f"flatten: ndim={ndim} is out of range for {x.type}")
    sizes = list(shape_tuple(x))
    rest = x.type.shape[ndim - 1 :]
    if None not in rest:
        last = _i64(int(np.prod(rest)))
    else:
        last = _prod(sizes[ndim - 1 :])  # not -1: that is ambiguous for empty arrays
    return reshape(x, [*sizes[: ndim - 1], last])


# ------------------------------------------------------------------ SpecifyShape


class SpecifyShape(Op):
    """Assert ``x``'s shape at run time; the output (``x`` itself) gets the static shape.

    Inputs: ``x`` then one int64 scalar per axis; a constant -1 leaves that axis unchecked.
    """

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x: Variable, *dims: Variable) -> Apply:
        x = as_tensor_variable(x)
        if len(dims) != x.ndim:
            raise ValueError(f"SpecifyShape: {len(dims)} sizes given for {x.type}")
        dims = [_as_int_scalar(d, "a size", "SpecifyShape") for d in dims]
        static = []
        for axis, (d, s) in enumerate(zip(dims, x.type.shape)):
            v = _static_int(d)
            if v is not None and v >= 0 and s is not None and v != s:
                raise ValueError(
                    f"SpecifyShape: axis {axis} of {x} ({x.type}) cannot have size {v}"
                )
            static.append(v if v is not None and v >= 0 else s)
        return Apply(self, [x, *dims], [TensorType(x.dtype, static)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, *dims = inputs
        want = tuple(int(d) for d in dims)
        if x.ndim != len(want) or any(w >= 0 and w != s for w, s in zip(want, x.shape)):
            shown = tuple(None if w < 0 else w for w in want)
            raise AssertionError(f"SpecifyShape: expected shape {shown}, got {x.shape}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        out = []
        for d, s, st in zip(node.inputs[1:], shapes[0], node.outputs[0].type.shape):
            v = _static_int(d)
            if st is not None:
                out.append(_i64(st))
            elif v is not None and v < 0:
                out.append(s)
            elif v is not None:
                out.append(d)
            else:
                out.append(tm.switch(tm.lt(d, _i64(0)), s, d))
        return [tuple(out)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [gouts[0]] + [None] * (len(inputs) - 1)


def specify_shape(x: TensorLike, shape: TensorLike):
    """``x`` with its shape asserted to be ``shape`` (entries int, int scalar or None)."""
    x = as_tensor_variable(x)
    if isinstance(shape, Variable):
        entries = _shape_vector(shape, "specify_shape")
    else:
        shape = [shape] if isinstance(shape, int | np.integer) or shape is None else shape
        entries = [_i64(-1) if s is None else s for s in shape]
    return SpecifyShape()(x, *entries)


# ------------------------------------------------------------------ Join


class Join(Op):
    """Concatenate tensors of the same ndim along a fixed ``axis`` (non-negative)."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def __str__(self) -> str:
        return f"Join{{axis={self.axis}}}"

    def make_node(self, *tensors: Variable) -> Apply:
        tensors = [as_tensor_variable(t) for t in tensors]
        if not tensors:
            raise ValueError(f"{self}: needs at least one tensor")
        types = ", ".join(str(t.type) for t in tensors)
        ndim = tensors[0].ndim
        if any(t.ndim != ndim for t in tensors):
            raise TypeError(f"{self}: all tensors must have the same ndim, got {types}")
        if not 0 <= self.axis < ndim:
            raise ValueError(f"{self}: axis out of range for operands {types}")
        dtype = ps.upcast(*(t.dtype for t in tensors))
        static: list = []
        for ax in range(ndim):
            sizes = [t.type.shape[ax] for t in tensors]
            if ax == self.axis:
                static.append(None if None in sizes else sum(sizes))
                continue
            known = {s for s in sizes if s is not None}
            if len(known) > 1:
                raise ValueError(f"{self}: sizes differ on axis {ax} (operands {types})")
            static.append(known.pop() if known else None)
        tensors = [cast(t, dtype) for t in tensors]
        return Apply(self, tensors, [TensorType(dtype, static)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        dtype = node.outputs[0].type.dtype
        try:
            out = np.concatenate(inputs, axis=self.axis, dtype=dtype)
        except ValueError as e:
            shapes = ", ".join(str(a.shape) for a in inputs)
            raise ValueError(f"{self}: cannot join arrays of shapes {shapes}") from e
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        out = []
        for ax in range(node.outputs[0].ndim):
            st = node.outputs[0].type.shape[ax]
            if st is not None:
                out.append(_i64(st))
            elif ax == self.axis:
                out.append(_sum_int([s[ax] for s in shapes]))
            else:
                out.append(shapes[0][ax])
        return [tuple(out)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (g,) = gouts
        if g.dtype not in ps.FLOAT_DTYPES:
            return [None] * len(inputs)
        out = []
        start = _i64(0)
        for t in inputs:
            stop = start + shape_tuple(t)[self.axis]
            idx = [slice(None)] * t.ndim
            idx[self.axis] = slice(start, stop)
            piece = g[tuple(idx)]
            out.append(cast(piece, t.dtype) if t.dtype in ps.FLOAT_DTYPES else None)
            start = stop
        return out


def _sum_int(items):
    out = items[0]
    for s in items[1:]:
        out = out + s
    return cast(out, "int64")


def _norm_axis(axis: int | Sequence[int] | None, ndim: int, opname: str) -> int:
    a = _static_int(axis) if isinstance(axis, Variable) else int(axis)
    if a is None:
        raise TypeError(f"{opname}: axis must be a constant integer, got {axis}")
    if not -ndim <= a < ndim:
        raise ValueError(f"{opname}: axis {a} is out of range for {ndim}-d operands")
    return a % ndim


def join(axis: int | Sequence[int] | None, *tensors: TensorLike):
    """Concatenate ``tensors`` along ``axis`` (Theano's argument order)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    tensors = tuple(as_tensor_variable(t) for t in tensors)
    if not tensors:
        raise ValueError("join: needs at least one tensor")
    ax = _norm_axis(axis, tensors[0].ndim, "join")
    if len(tensors) == 1:
        return tensors[0]
    return Join(ax)(*tensors)


def concatenate(tensor_list: Sequence, axis: int = 0):
    """numpy-style concatenate."""
    if not isinstance(tensor_list, list | tuple):
        raise TypeError("concatenate: pass a list or tuple of tensors")
    return join(axis, *tensor_list)


def stack(*args, axis: int | None = None):
    """Join tensors of the same shape along a new axis: ``stack(tensors, axis=0)`` or, as
    Theano also accepts, ``stack(tensors, axis)`` and ``stack(a, b, c)`` (axis 0)."""
    if args and isinstance(args[0], list | tuple):
        if len(args) > 2 or (len(args) == 2 and axis is not None):
            raise TypeError("stack: pass stack(tensors, axis) or stack(*tensors)")
        tensors = args[0]
        axis = args[1] if len(args) == 2 else axis
    else:
        tensors = args
    axis = 0 if axis is None else axis
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    ts = [as_tensor_variable(t) for t in tensors]
    if all(t.ndim == 0 for t in ts) and axis in (0, -1):
        return MakeVector(ps.upcast(*(t.dtype for t in ts)))(*ts)
    ndim = ts[0].ndim
    if any(t.ndim != ndim for t in ts):
        raise TypeError("stack: tensors must have the same ndim, got " + ", ".join(
            str(t.type) for t in ts))  # fmt: skip
    if not -(ndim + 1) <= axis <= ndim:
        raise ValueError(f"stack: axis {axis} out of range for {ndim}-d operands")
    axis = axis % (ndim + 1)
    order = list(range(ndim))
    order.insert(axis, "x")
    return join(axis, *[DimShuffle(ndim, order)(t) for t in ts])


# ------------------------------------------------------------------ Alloc


class Alloc(Op):
    """A new array of the given shape filled with ``value`` (broadcast numpy-style)."""

    __props__ = ()

    def make_node(self, value: Variable, *shape: Variable) -> Apply:
        value = as_tensor_variable(value)
        dims = [_as_int_scalar(s, "a shape entry", "Alloc") for s in shape]
        if value.ndim > len(dims):
            raise ValueError(
                f"Alloc: the value ({value.type}) has more dimensions than the shape ({len(dims)})"
            )
        static = []
        vshape = (None,) * (len(dims) - value.ndim) + value.type.shape
        for axis, (d, vs) in enumerate(zip(dims, vshape)):
            v = _static_int(d)
            if v is not None and v < 0:
                raise ValueError(f"Alloc: negative size {v} on axis {axis}")
            if v is not None and vs not in (None, 1) and vs != v:
                raise ValueError(
                    f"Alloc: the value {value.type} does not broadcast to size {v} on axis {axis}"
                )
            static.append(v)
        return Apply(self, [value, *dims], [TensorType(value.dtype, static)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        v, *dims = inputs
        shp = tuple(int(d) for d in dims)
        out = np.empty(shp, dtype=node.outputs[0].type.dtype)
        try:
            out[...] = v
        except ValueError as e:
            raise ValueError(f"Alloc: cannot broadcast a value of shape {v.shape} to {shp}") from e
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(node.inputs[1:])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        v = inputs[0]
        (g,) = gouts
        if v.dtype not in ps.FLOAT_DTYPES:
            return [None] * len(inputs)
        n_lead = g.ndim - v.ndim
        gv = tm.sum(g, axis=tuple(range(n_lead))) if n_lead else g
        axes = tuple(
            i for i, (vs, os) in enumerate(zip(v.type.shape, gv.type.shape)) if vs == 1 and os != 1
        )
        if axes:
            gv = tm.sum(gv, axis=axes, keepdims=True)
        return [cast(gv, v.dtype)] + [None] * (len(inputs) - 1)


CONSTANT_RULES.register(SpecifyShape, Alloc)(first_input_constant)

_alloc = Alloc()


def alloc(value: TensorLike, *shape: TensorLike):
    """A new array of ``shape`` filled with ``value``: ``alloc(0.0, n, 3)``."""
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        shape = tuple(shape[0])
    return _alloc(value, *shape)


def _fill_constant(value, dtype: DTypeLike):
    dtype = str(np.dtype(config.floatX if dtype in (None, "floatX") else dtype))
    return _constant(np.asarray(value, dtype=dtype))


def _shape_arg(shape: TensorLike):
    if isinstance(shape, Variable):
        return _shape_vector(shape, "alloc")
    if isinstance(shape, int | np.integer):
        return [shape]
    return list(shape)


def zeros(shape: TensorLike, dtype: DTypeLike | None = None):
    """A new array of zeros (``dtype`` defaults to floatX)."""
    return alloc(_fill_constant(0, dtype), *_shape_arg(shape))


def ones(shape: TensorLike, dtype: DTypeLike | None = None):
    """A new array of ones (``dtype`` defaults to floatX)."""
    return alloc(_fill_constant(1, dtype), *_shape_arg(shape))


def full(shape: TensorLike, fill_value: TensorLike, dtype: DTypeLike | None = None):
    """A new array of ``shape`` filled with ``fill_value``."""
    if isinstance(fill_value, Variable):
        v = fill_value if dtype is None else cast(fill_value, dtype)
    else:
        v = _constant(fill_value) if dtype is None else _fill_constant(fill_value, dtype)
    return alloc(v, *_shape_arg(shape))


def full_like(x: TensorLike, fill_value: TensorLike, dtype: DTypeLike | None = None):
    """An array shaped like ``x`` filled with ``fill_value`` (dtype of ``x`` by default)."""
    x = as_tensor_variable(x)
    dtype = dtype or x.dtype
    if isinstance(fill_value, Variable):
        v = cast(fill_value, dtype)
    else:
        v = _fill_constant(fill_value, dtype)
    return alloc(v, *shape_tuple(x))


def zeros_like(x: TensorLike, dtype: DTypeLike | None = None):
    return full_like(x, 0, dtype)


def ones_like(x: TensorLike, dtype: DTypeLike | None = None):
    return full_like(x, 1, dtype)


fill = second  # fill(model, value): ``value`` broadcast to ``model``'s shape


def broadcast_to(x: TensorLike, shape: TensorLike):
    """``x`` broadcast to ``shape`` (a new array)."""
    return alloc(x, *_shape_arg(shape))


# ------------------------------------------------------------------ ARange / Eye


class ARange(DtypeOp):
    """``numpy.arange(start, stop, step)`` with 0-d inputs."""

    def make_node(self, start: Variable, stop: Variable, step: Variable) -> Apply:
        ins = [as_tensor_variable(v) for v in (start, stop, step)]
        for what, v in zip(("start", "stop", "step"), ins):
            if v.ndim != 0:
                raise TypeError(f"{self}: {what} must be a scalar, got {v.type}")
        consts = [get_constant_or_none(v) for v in ins]
        length: int | None = None
        if None not in consts:
            if consts[2] == 0:
                raise ValueError(f"{self}: step must not be zero")
            length = len(np.arange(*consts, dtype=self.dtype))
        return Apply(self, ins, [TensorType(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        start, stop, step = (np.asarray(v)[()] for v in inputs)
        if step == 0:
            raise ValueError(f"{self}: step must not be zero")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        st = node.outputs[0].type.shape[0]
        if st is not None:
            return [(_i64(st),)]
        start, stop, step = (cast(v, "float64") for v in node.inputs)
        n = cast(tm.ceil((stop - start) / step), "int64")
        return [(tm.maximum(n, _i64(0)),)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (g,) = gouts
        start, stop, step = inputs
        if self.dtype not in ps.FLOAT_DTYPES:
            return [None, None, None]
        n = shape_tuple(g)[0]
        k = cast(ARange("int64")(_i64(0), n, _i64(1)), self.dtype)
        gs = [tm.sum(g), None, tm.sum(g * k)]
        return [cast(x, v.dtype) if x is not None and v.dtype in ps.FLOAT_DTYPES else None
                for x, v in zip(gs, inputs)]  # fmt: skip


def arange(
    start: TensorLike, stop: TensorLike | None = None, step: int = 1, dtype: DTypeLike | None = None
):
    """Symbolic ``numpy.arange``; ``dtype`` defaults to the inputs' upcast (python ints give
    int64, python floats floatX)."""
    if stop is None:
        start, stop = 0, start
    args = (start, stop, step)
    if dtype is None:
        var_dts = [as_tensor_variable(a).dtype for a in args if isinstance(a, Variable)]
        has_float = any(isinstance(a, float | np.floating) for a in args)
        if var_dts:
            dtype = ps.upcast(*var_dts)
            if has_float and dtype not in ps.FLOAT_DTYPES:
                dtype = ps.upcast(dtype, config.floatX)
        else:
            dtype = config.floatX if has_float else "int64"
    dtype = str(np.dtype(dtype))
    ins = [a if isinstance(a, Variable) else _constant(np.asarray(a, dtype=dtype)) for a in args]
    return ARange(dtype)(*ins)


class Eye(DtypeOp):
    """``numpy.eye(n, m, k)`` with int scalar inputs."""

    def make_node(self, n: Variable, m: Variable, k: Variable) -> Apply:
        n, m, k = (_as_int_scalar(v, what, str(self)) for v, what in zip((n, m, k), "nmk"))
        static = (_static_int(n), _static_int(m))
        return Apply(self, [n, m, k], [TensorType(self.dtype, static)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        n, m, k = (int(v) for v in inputs)
        output_storage[0][0] = np.eye(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(node.inputs[0], node.inputs[1])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None, None, None]


def eye(n: TensorLike, m: TensorLike | None = None, k: int = 0, dtype: DTypeLike | None = None):
    """An ``n`` x ``m`` matrix with ones on diagonal ``k`` (``dtype`` defaults to floatX)."""
    dtype = config.floatX if dtype is None else dtype
    return Eye(dtype)(n, n if m is None else m, k)


def identity_like(x: TensorLike, dtype: DTypeLike | None = None):
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like: expected a matrix, got {x.type}")
    r, c = shape_tuple(x)
    return eye(r, c, 0, dtype or x.dtype)


def shape_padleft(x: TensorLike, n: int = 1):
    """``x`` with ``n`` broadcastable axes added on the left."""
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, ["x"] * n + list(range(x.ndim)))(x)


def shape_padright(x: TensorLike, n: int = 1):
    """``x`` with ``n`` broadcastable axes added on the right."""
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, list(range(x.ndim)) + ["x"] * n)(x)


__all__ = [
    "ARange", "Alloc", "Eye", "Join", "MakeVector", "NotScalarConstantError", "Reshape",
    "Shape", "Shape_i", "SpecifyShape", "alloc", "arange", "broadcast_to", "concatenate", "eye",
    "fill", "flatten", "full", "full_like", "get_scalar_constant_value", "get_vector_length",
    "identity_like", "join",
    "ones", "ones_like", "reshape", "shape", "shape_padleft", "shape_padright", "shape_tuple",
    "specify_shape", "stack", "zeros", "zeros_like",
]  # fmt: skip
