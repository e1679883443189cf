"""Indexing: basic Subtensor (views), advanced integer indexing, set/inc_subtensor.

An Op's ``idx_list`` is the static index pattern (``SliceIdx``, ``ArrayIdx``, ints, dtype
names for symbolic parts, None for new axes), described and read in
``tensor/index_pattern.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Constant, Op, Variable
from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor.basic import MakeVector, flatten, zeros_like
from graphc.tensor.constant_value import (
    CONSTANT_RULES,
    NotScalarConstantError,
    _cast_to,
    get_scalar_constant_value,
)
from graphc.tensor.elemwise import DimShuffle, broadcast_shape_symbolic, broadcast_static_shapes
from graphc.tensor.index_pattern import (
    ArrayIdx,
    SliceIdx,
    _check_inputs,
    _consumed,
    _entry_str,
    _np_index,
    _slice_len,
    _static_slice_len,
    format_index,  # noqa: F401  (re-exported for the printing rules and users)
)
from graphc.tensor.math import _restore_axes
from graphc.tensor.shape import Shape, _constant, _i64
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.tensor.variable import TensorLike

INT_DTYPES = ps.INT_DTYPES


def _indexed_node(op, x, inputs, static_shape: Callable[[Any, list], tuple]) -> Apply:
    """The Apply of an indexing Op reading ``x`` at ``op.idx_list`` filled by ``inputs``;
    ``static_shape(x, inputs)`` gives the output's static shape."""
    x = as_tensor_variable(x)
    inputs = [as_tensor_variable(i) for i in inputs]
    _check_inputs(op, op.idx_list, inputs)
    return Apply(op, [x, *inputs], [TensorType(x.dtype, static_shape(x, inputs))()])


def _read(op, x: np.ndarray, idx) -> np.ndarray:
    """``x[idx]`` for ``op.perform``; an IndexError names the Op and the array's shape."""
    try:
        return x[idx]
    except IndexError as e:
        raise IndexError(f"{op}: {e} (array of shape {x.shape})") from e


# ------------------------------------------------------------------ basic indexing


def _basic_static_shape(op: Op, idx_list: Sequence[Any], x: Variable) -> tuple:
    if len(idx_list) > x.ndim:
        raise IndexError(f"{op}: too many indices ({len(idx_list)}) for {x.type}")
    out: list = []
    for axis, (e, n) in enumerate(zip(idx_list, x.type.shape)):
        if isinstance(e, SliceIdx):
            if e.step == 0:
                raise ValueError(f"{op}: slice step cannot be zero")
            out.append(_static_slice_len(e, n))
        elif isinstance(e, int) and n is not None and not -n <= e < n:
            raise IndexError(f"{op}: index {e} is out of bounds for axis {axis} of {x.type}")
    out.extend(x.type.shape[len(idx_list) :])
    return tuple(out)


class Subtensor(Op):
    """Basic indexing (ints and slices): the output is a numpy view of the input."""

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = tuple(idx_list)
        for e in self.idx_list:
            if e is None or isinstance(e, ArrayIdx):
                raise TypeError(f"Subtensor: {_entry_str(e)} is not a basic index")

    def __str__(self) -> str:
        return "Subtensor{" + ", ".join(_entry_str(e) for e in self.idx_list) + "}"

    def make_node(self, x: Variable, *inputs: Variable) -> Apply:
        return _indexed_node(
            self, x, inputs, lambda x, _: _basic_static_shape(self, self.idx_list, x)
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, *rest = inputs
        idx = _np_index(self.idx_list, rest)
        try:
            out = x[tuple(idx) + (Ellipsis,)]
        except IndexError as e:
            raise IndexError(f"{self}: {e} (index {idx} into an array of shape {x.shape})") from e
        except ValueError as e:
            raise ValueError(f"{self}: {e} (index {idx}, array shape {x.shape})") from e
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [_basic_shape(self.idx_list, shapes[0], node.inputs[1:], node.outputs[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return _take_grad(inputs, gouts, IncSubtensor(self.idx_list))


@CONSTANT_RULES.register(Subtensor)
def _subtensor_constant(node: Apply, v: Variable, elemwise: bool):
    """x[i] where x is a shape vector, a MakeVector or a constant vector and i is constant."""
    if v.ndim != 0:
        return None
    op = node.op
    x = node.inputs[0]
    if x.ndim != 1 or len(op.idx_list) != 1 or not isinstance(op.idx_list[0], int):
        raise NotScalarConstantError(f"{node.outputs[0]} is not a constant scalar")
    i = op.idx_list[0]
    if isinstance(x, Constant):
        data = np.asarray(x.data)
        if -len(data) <= i < len(data):
            return data[i].copy()
    elif x.owner is not None and isinstance(x.owner.op, Shape):
        static = x.owner.inputs[0].type.shape
        if -len(static) <= i < len(static) and static[i] is not None:
            return np.int64(static[i])
    elif x.owner is not None and isinstance(x.owner.op, MakeVector):
        ins = x.owner.inputs
        if -len(ins) <= i < len(ins):
            return _cast_to(get_scalar_constant_value(ins[i], elemwise), x)
    raise NotScalarConstantError(f"{node.outputs[0]} is not a constant scalar")


def _take_grad(inputs: list[Variable], gouts: list[Variable], inc: Op) -> list:
    """Gradients of ``x[idx]`` (inputs ``x, *idx``): ``g`` added by ``inc`` into zeros like x."""
    x, *rest = inputs
    (g,) = gouts
    if x.dtype not in ps.FLOAT_DTYPES:
        return [None] * len(inputs)
    return [inc(zeros_like(x), g, *rest)] + [None] * len(rest)


def _basic_shape(idx_list: Sequence[Any], xshape, parts, out):
    res: list = []
    it = iter(parts)
    for e, n in zip(idx_list, xshape):
        if isinstance(e, SliceIdx):
            k = sum(isinstance(p, str) for p in (e.start, e.stop, e.step))
            res.append(_slice_len(e, n, [next(it) for _ in range(k)]))
        elif isinstance(e, str):
            next(it)
    res.extend(xshape[len(idx_list) :])
    return tuple(
        _i64(st) if st is not None else r for st, r in zip(out.type.shape, res, strict=True)
    )


class _SetOrIncSubtensor(Op):
    """``x`` with ``x[idx]`` set to or incremented by ``y``, for an ``idx_list`` index.

    Subclasses give the static shape of the indexed region, perform and grad.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(
        self, idx_list: Sequence[Any], inplace: bool = False, set_instead_of_inc: bool = False
    ):
        self.idx_list = tuple(idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        if self.inplace:
            self.destroy_map = {0: [0]}

    def __str__(self) -> str:
        mode = ("Inplace" if self.inplace else "") + ("Set" if self.set_instead_of_inc else "Inc")
        idx = ", ".join(_entry_str(e) for e in self.idx_list)
        return f"{type(self).__name__}{{{mode};{idx}}}"

    def _region_shape(self, x: Variable, inputs: list[Variable]) -> tuple:
        raise NotImplementedError

    def make_node(self, x: Variable, y: Variable, *inputs: Variable) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        inputs = [as_tensor_variable(i) for i in inputs]
        _check_inputs(self, self.idx_list, inputs)
        _check_y(self, x, y, self._region_shape(x, inputs))
        return Apply(self, [x, y, *inputs], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [shapes[0]]


class IncSubtensor(_SetOrIncSubtensor):
    """``x`` with ``x[idx]`` incremented by (or, with ``set_instead_of_inc``, set to) ``y``.

    With ``inplace`` the output is ``x``'s buffer (``destroy_map = {0: [0]}``); otherwise
    ``x`` is copied first.
    """

    def _region_shape(self, x: Variable, inputs: list[Variable]) -> tuple:
        return _basic_static_shape(self, self.idx_list, x)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y, *rest = inputs
        out = x if self.inplace else x.copy()
        idx = (*_np_index(self.idx_list, rest), Ellipsis)
        try:
            if self.set_instead_of_inc:
                out[idx] = y
            else:
                out[idx] += y
        except (IndexError, ValueError) as e:
            raise type(e)(
                f"{self}: {e} (index {idx[:-1]} into an array of shape {x.shape}, "
                f"value shape {np.shape(y)})"
            ) from e
        output_storage[0][0] = out

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        zeroed = IncSubtensor(self.idx_list, set_instead_of_inc=True)
        return _inc_grad(self, inputs, gouts, zeroed, Subtensor(self.idx_list))


def _inc_grad(op: Op, inputs: list[Variable], gouts: list[Variable], zeroed: Op, take: Op) -> list:
    """Gradients of ``x`` with ``x[idx]`` set to / incremented by ``y`` (inputs ``x, y, *idx``).

    ``zeroed`` is the set Op that zeroes ``g[idx]``; ``take`` the Op that reads ``g[idx]``.
    """
    x, y, *rest = inputs
    (g,) = gouts
    gx = gy = None
    if x.dtype in ps.FLOAT_DTYPES:
        if op.set_instead_of_inc:
            gx = zeroed(g, _constant(np.zeros((), dtype=g.dtype)), *rest)
        else:
            gx = g
    if y.dtype in ps.FLOAT_DTYPES:
        gy = tm.cast(_sum_to(take(g, *rest), y), y.dtype)
    return [gx, gy] + [None] * len(rest)


def _advanced_inc(op: Op, x: np.ndarray, y: np.ndarray, idx: Any) -> np.ndarray:
    """``x`` (or a copy) with ``x[idx]`` set to ``y``, or incremented by it with ``np.add.at``."""
    out = x if op.inplace else x.copy()
    try:
        if op.set_instead_of_inc:
            out[idx] = y
        else:
            np.add.at(out, idx, y)
    except (IndexError, ValueError) as e:
        raise type(e)(f"{op}: {e} (array of shape {x.shape}, value {np.shape(y)})") from e
    return out


def _check_y(op: Op, x: Variable, y: Variable, sub_shape) -> None:
    if y.ndim > len(sub_shape):
        raise TypeError(
            f"{op}: cannot put a {y.ndim}-d value ({y.type}) into a {len(sub_shape)}-d "
            f"region of {x.type}"
        )
    if y.dtype != x.dtype:
        raise TypeError(f"{op}: the value's dtype ({y.type}) differs from x's ({x.type})")
    for ys, ss in zip(y.type.shape[::-1], sub_shape[::-1]):
        if ys not in (None, 1) and ss is not None and ys != ss:
            raise ValueError(
                f"{op}: a value of type {y.type} does not broadcast to the indexed region "
                f"of static shape {sub_shape} of {x.type}"
            )


def _sum_to(g: Variable, y: Variable):
    """Sum ``g`` over the axes that ``y`` was broadcast along (leading, and static size 1)."""
    lead = g.ndim - y.ndim
    if lead:
        g = tm.sum(g, axis=tuple(range(lead)))
    axes = tuple(
        i for i, (ys, gs) in enumerate(zip(y.type.shape, g.type.shape)) if ys == 1 and gs != 1
    )
    if axes:
        g = tm.sum(g, axis=axes, keepdims=True)
    return g


# ------------------------------------------------------------------ advanced indexing


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for an integer vector ``ilist`` on axis 0 (a copy)."""

    __props__ = ()

    def make_node(self, x: Variable, ilist: Variable) -> Apply:
        x, ilist = as_tensor_variable(x), as_tensor_variable(ilist)
        if ilist.ndim != 1 or ilist.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: the index must be an integer vector, got {ilist.type}")
        if x.ndim < 1:
            raise TypeError(f"{self}: cannot index a 0-d tensor ({x.type})")
        static = (ilist.type.shape[0], *x.type.shape[1:])
        return Apply(self, [x, ilist], [TensorType(x.dtype, static)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, ilist = inputs
        output_storage[0][0] = _read(self, x, ilist)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(shapes[1][0], *shapes[0][1:])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return _take_grad(inputs, gouts, AdvancedIncSubtensor1())


class AdvancedIncSubtensor1(Op):
    """``x`` with rows ``ilist`` incremented by (or set to) ``y``; repeated rows accumulate
    when incrementing (``numpy.add.at``) and the last write wins when setting."""

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False):
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        if self.inplace:
            self.destroy_map = {0: [0]}

    def __str__(self) -> str:
        return (
            f"AdvancedIncSubtensor1{{{'inplace' if self.inplace else 'no_inplace'},"
            f"{'set' if self.set_instead_of_inc else 'inc'}}}"
        )

    def make_node(self, x: Variable, y: Variable, ilist: Variable) -> Apply:
        x, y, ilist = (as_tensor_variable(v) for v in (x, y, ilist))
        if ilist.ndim != 1 or ilist.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: the index must be an integer vector, got {ilist.type}")
        if x.ndim < 1:
            raise TypeError(f"{self}: cannot index a 0-d tensor ({x.type})")
        _check_y(self, x, y, (ilist.type.shape[0], *x.type.shape[1:]))
        return Apply(self, [x, y, ilist], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y, ilist = inputs
        output_storage[0][0] = _advanced_inc(self, x, y, ilist)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [shapes[0]]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        zeroed = AdvancedIncSubtensor1(set_instead_of_inc=True)
        return _inc_grad(self, inputs, gouts, zeroed, AdvancedSubtensor1())


def _adv_parts(op: Op, idx_list: Sequence[Any], x: Variable, inputs: Sequence[Variable]):
    """[(kind, value)] per output-producing item: ("adv", shape) or ("basic", size)."""
    if _consumed(idx_list) > x.ndim:
        raise IndexError(f"{op}: too many indices ({_consumed(idx_list)}) for {x.type}")
    it = iter(inputs)
    dims = iter(x.type.shape)
    parts: list = []
    for e in idx_list:
        if e is None:
            parts.append(("basic", 1, None))
        elif isinstance(e, SliceIdx):
            k = sum(isinstance(p, str) for p in (e.start, e.stop, e.step))
            parts.append(("basic", e, [next(it) for _ in range(k)]))
            next(dims)
        elif isinstance(e, ArrayIdx):
            parts.append(("adv", next(it), None))
            next(dims)
        else:
            if isinstance(e, str):
                next(it)
            parts.append(("adv", None, None))
            next(dims)
    for _ in dims:
        parts.append(("basic", SliceIdx(), []))
    return parts


def _adv_order(parts: list[tuple[str, Any]]) -> tuple[list[int], bool]:
    adv = [i for i, p in enumerate(parts) if p[0] == "adv"]
    adjacent = adv == list(range(adv[0], adv[-1] + 1)) if adv else True
    return adv, adjacent


def _adv_static_shape(
    op: Op, idx_list: Sequence[Any], x: Variable, inputs: Sequence[Variable]
) -> tuple:
    parts = _adv_parts(op, idx_list, x, inputs)
    adv, adjacent = _adv_order(parts)
    arrays = [p[1] for p in parts if p[0] == "adv" and p[1] is not None]
    nd = max((a.ndim for a in arrays), default=0)
    shapes = [(1,) * (nd - a.ndim) + a.type.shape for a in arrays]
    bshape = broadcast_static_shapes(op, shapes, arrays) if shapes else ()
    basic = _entry_dims(parts, x.type.shape, lambda e, n, _: _static_slice_len(e, n), 1)
    return _place(basic, list(bshape), adv, adjacent)


def _entry_dims(parts, x_dims, slice_len: Callable, one) -> list:
    """Per index entry, its contribution to the output shape (static or symbolic): "ADV"
    for an advanced index, ``slice_len(entry, x's dim, its parts)`` for a slice, ``one``
    for the others."""
    dims = iter(x_dims)
    items: list = []
    for kind, e, e_parts in parts:
        if kind == "adv":
            next(dims)
            items.append("ADV")
        elif isinstance(e, SliceIdx):
            items.append(slice_len(e, next(dims), e_parts))
        else:
            items.append(one)
    return items


def _place(items: list, bshape: list, adv: list[int], adjacent: bool) -> tuple:
    rest = [v for v in items if not (isinstance(v, str) and v == "ADV")]
    if not adv:
        return tuple(rest)
    if adjacent:
        return tuple(items[: adv[0]] + bshape + items[adv[-1] + 1 :])
    return tuple(bshape + rest)


class AdvancedSubtensor(Op):
    """numpy-style integer array indexing mixed with ints, slices and new axes (a copy)."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = tuple(idx_list)

    def __str__(self) -> str:
        return "AdvancedSubtensor{" + ", ".join(_entry_str(e) for e in self.idx_list) + "}"

    def make_node(self, x: Variable, *inputs: Variable) -> Apply:
        return _indexed_node(
            self, x, inputs, lambda x, inputs: _adv_static_shape(self, self.idx_list, x, inputs)
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, *rest = inputs
        output_storage[0][0] = _read(self, x, _np_index(self.idx_list, rest))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        x, *rest = node.inputs
        parts = _adv_parts(self, self.idx_list, x, rest)
        adv, adjacent = _adv_order(parts)
        pos = {id(v): k for k, v in enumerate(rest)}
        arrays = [p[1] for p in parts if p[0] == "adv" and p[1] is not None]
        nd = max((a.ndim for a in arrays), default=0)
        ish = shapes[1:]
        one = _i64(1)
        sym = [(one,) * (nd - a.ndim) + tuple(ish[pos[id(a)]]) for a in arrays]
        stat = [(1,) * (nd - a.ndim) + a.type.shape for a in arrays]
        bshape = list(broadcast_shape_symbolic(sym, stat)) if sym else []
        res = _place(_entry_dims(parts, shapes[0], _slice_len, one), bshape, adv, adjacent)
        return [
            tuple(
                _i64(st) if st is not None else r
                for st, r in zip(node.outputs[0].type.shape, res, strict=True)
            )
        ]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return _take_grad(inputs, gouts, AdvancedIncSubtensor(self.idx_list))


class AdvancedIncSubtensor(_SetOrIncSubtensor):
    """General advanced ``set_subtensor`` / ``inc_subtensor`` (``numpy.add.at`` for inc)."""

    def _region_shape(self, x: Variable, inputs: list[Variable]) -> tuple:
        return _adv_static_shape(self, self.idx_list, x, inputs)

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y, *rest = inputs
        output_storage[0][0] = _advanced_inc(self, x, y, _np_index(self.idx_list, rest))

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        zeroed = AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)
        return _inc_grad(self, inputs, gouts, zeroed, AdvancedSubtensor(self.idx_list))


# ------------------------------------------------------------------ building indices


def _const_int(v: Variable) -> int | None:
    """A python int for constant integer scalars, else None."""
    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, Constant) and getattr(v.type, "ndim", -1) == 0 and v.dtype in INT_DTYPES:
        return int(np.asarray(v.data))
    return None


def _scalar_part(v: TensorLike, what: str, x: Variable):
    """(pattern entry, input or None) for an int / symbolic int scalar."""
    c = _const_int(v)
    if c is not None:
        return c, None
    if isinstance(v, Variable):
        v = as_tensor_variable(v)
        if v.ndim == 0 and v.dtype in INT_DTYPES:
            return v.dtype, v
        if v.dtype == "bool":
            raise NotImplementedError(
                f"boolean mask indexing with a symbolic mask ({v.type}) is not supported; "
                "use nonzero indices or switch"
            )
        raise TypeError(f"indexing {x.type}: {what} must be an integer scalar, got {v.type}")
    raise TypeError(f"indexing {x.type}: {what} must be an integer, got {v!r}")


def _classify(x: Variable, idx: TensorLike) -> list:
    """Normalize an index into items: ("new",) ("int", entry, var) ("slice", ...) ("adv", v)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items: list = []
    for k in idx:
        if k is None:
            items.append(("new",))
        elif k is Ellipsis:
            items.append(("ellipsis",))
        elif isinstance(k, slice):
            parts, ins = [], []
            for what, p in (("a slice start", k.start), ("a slice stop", k.stop),
                            ("a slice step", k.step)):  # fmt: skip
                if p is None:
                    parts.append(None)
                    continue
                e, v = _scalar_part(p, what, x)
                parts.append(e)
                if v is not None:
                    ins.append(v)
            if parts[2] == 0:
                raise ValueError(f"indexing {x.type}: slice step cannot be zero")
            items.append(("slice", SliceIdx(*parts), ins))
        elif _const_int(k) is not None or (isinstance(k, Variable) and k.ndim == 0):
            e, v = _scalar_part(k, "an index", x)
            items.append(("int", e, v))
        else:
            v = _array_index(k, x)
            if v.dtype == "bool":
                # a constant mask becomes the integer arrays of its nonzero positions
                arr = np.asarray(v.data)
                if arr.ndim == 0:
                    raise NotImplementedError(f"indexing {x.type} with a 0-d boolean")
                items.extend(("adv", _constant(np.asarray(a, "int64"))) for a in np.nonzero(arr))
            else:
                items.append(("adv", v))
    return items


def _array_index(k: TensorLike, x: Variable):
    if isinstance(k, Variable):
        v = as_tensor_variable(k)
    elif isinstance(k, list | tuple) and any(isinstance(e, Variable) for e in k):
        v = as_tensor_variable(list(k))
    else:
        arr = np.asarray(k)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        if arr.dtype.kind not in "biu":
            raise IndexError(
                f"indexing {x.type}: only integers, slices, None, Ellipsis and integer or "
                f"boolean arrays are valid indices, got {k!r:.60}"
            )
        v = _constant(arr.astype("int64") if arr.dtype.kind in "iu" else arr)
    if v.dtype == "bool":
        if not isinstance(v, Constant):
            raise NotImplementedError(
                f"boolean mask indexing with a symbolic mask ({v.type}) is not supported"
            )
        return v
    if v.dtype not in INT_DTYPES:
        raise IndexError(f"indexing {x.type}: array indices must be integers, got {v.type}")
    return v


def getitem(x: TensorLike, idx: TensorLike):
    """``x[idx]`` with numpy semantics (basic indexing gives a view, advanced a copy)."""
    x = as_tensor_variable(x)
    items = _classify(x, idx)
    n_ell = sum(it[0] == "ellipsis" for it in items)
    if n_ell > 1:
        raise IndexError(f"indexing {x.type}: an index can only have a single ellipsis")
    consumed = sum(1 for it in items if it[0] in ("int", "slice", "adv"))
    if consumed > x.ndim:
        raise IndexError(f"too many indices for {x} ({x.type}): {consumed} given")
    if n_ell:
        k = next(i for i, it in enumerate(items) if it[0] == "ellipsis")
        fill = [("slice", SliceIdx(), [])] * (x.ndim - consumed)
        items = items[:k] + fill + items[k + 1 :]
    if any(it[0] == "adv" for it in items):
        return _advanced(x, items)
    return _basic(x, items)


def _basic(x: Variable, items: list[tuple]):
    idx_list: list = []
    inputs: list = []
    new_axes: list[int] = []
    out_axis = 0
    for it in items:
        if it[0] == "new":
            new_axes.append(out_axis)
            out_axis += 1
        elif it[0] == "slice":
            idx_list.append(it[1])
            inputs.extend(it[2])
            out_axis += 1
        else:
            idx_list.append(it[1])
            if it[2] is not None:
                inputs.append(it[2])
    out = Subtensor(idx_list)(x, *inputs)
    if new_axes:
        out = _restore_axes(out, out.ndim + len(new_axes), tuple(new_axes))
    return out


def _advanced(x: Variable, items: list[tuple]):
    advs = [it for it in items if it[0] == "adv"]
    if (
        len(advs) == 1
        and items[0][0] == "adv"
        and advs[0][1].ndim == 1
        and all(it[0] == "slice" and it[1] == SliceIdx() for it in items[1:])
    ):
        return AdvancedSubtensor1()(x, advs[0][1])
    idx_list: list = []
    inputs: list = []
    for it in items:
        if it[0] == "new":
            idx_list.append(None)
        elif it[0] == "slice":
            idx_list.append(it[1])
            inputs.extend(it[2])
        elif it[0] == "int":
            idx_list.append(it[1])
            if it[2] is not None:
                inputs.append(it[2])
        else:
            v = it[1]
            idx_list.append(ArrayIdx(v.dtype, v.ndim))
            inputs.append(v)
    return AdvancedSubtensor(idx_list)(x, *inputs)


def take(a: TensorLike, indices: TensorLike, axis: int | None = None):
    """``numpy.take`` with integer ``indices`` (flattens ``a`` when ``axis`` is None)."""
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a), 0
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"take: axis {axis} is out of range for {a.type}")
    axis %= a.ndim
    return getitem(a, (slice(None),) * axis + (_array_index(indices, a),))


# ------------------------------------------------------------------ set / inc


def _cast_value(y: Variable, x: Variable, name: str):
    if y.dtype == x.dtype:
        return y
    if np.can_cast(y.dtype, x.dtype, "safe"):
        return tm.cast(y, x.dtype)
    if isinstance(y, TensorConstant):
        data = np.asarray(y.data)
        conv = data.astype(x.dtype)
        both_float = data.dtype.kind == "f" and conv.dtype.kind == "f"
        if both_float or bool(np.all(conv == data)):
            return _constant(conv)
    raise TypeError(
        f"{name}: cannot store a value of type {y.type} into {x.type} without a lossy cast; "
        "cast the value first"
    )


def inc_subtensor(
    x: TensorLike, y: TensorLike, inplace: bool = False, set_instead_of_inc: bool = False
):
    """The tensor indexed by ``x`` (an expression ``t[idx]``) with ``t[idx]`` incremented by
    ``y`` (or set to ``y``); ``t`` itself is not modified unless ``inplace``."""
    name = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    x = as_tensor_variable(x)
    y = as_tensor_variable(y)
    node = x.owner
    if node is not None and isinstance(node.op, DimShuffle):
        inner = node.inputs[0]
        ds = node.op
        if (
            inner.owner is not None
            and isinstance(inner.owner.op, Subtensor)
            and not ds.drop
            and list(ds.shuffle) == sorted(ds.shuffle)
        ):
            y = _drop_new_axes(y, x, ds.augment, name)
            x, node = inner, inner.owner
    if node is None or not isinstance(node.op, Subtensor | AdvancedSubtensor1 | AdvancedSubtensor):
        raise TypeError(
            f"{name}: the first argument must be an indexing expression like x[idx], got "
            f"{x} ({x.type})"
        )
    src = node.inputs[0]
    y = _cast_value(y, src, name)
    op = node.op
    if isinstance(op, Subtensor):
        return IncSubtensor(op.idx_list, inplace, set_instead_of_inc)(src, y, *node.inputs[1:])
    if isinstance(op, AdvancedSubtensor1):
        return AdvancedIncSubtensor1(inplace, set_instead_of_inc)(src, y, node.inputs[1])
    return AdvancedIncSubtensor(op.idx_list, inplace, set_instead_of_inc)(src, y, *node.inputs[1:])


def _drop_new_axes(y: Variable, expr: Variable, augment: Sequence[int], name: str):
    offset = expr.ndim - y.ndim
    if offset < 0:
        raise TypeError(f"{name}: value {y.type} has more dimensions than {expr.type}")
    drop = [a - offset for a in augment if a >= offset]
    for a in drop:
        if y.type.shape[a] != 1:
            raise ValueError(
                f"{name}: the value ({y.type}) must have static size 1 on axis {a}, which "
                "indexes a new axis"
            )
    if not drop:
        return y
    return DimShuffle(y.ndim, [i for i in range(y.ndim) if i not in drop])(y)


def set_subtensor(x: TensorLike, y: TensorLike, inplace: bool = False):
    """The tensor indexed by ``x`` (an expression ``t[idx]``) with ``t[idx] = y``."""
    return inc_subtensor(x, y, inplace=inplace, set_instead_of_inc=True)


__all__ = [
    "AdvancedIncSubtensor", "AdvancedIncSubtensor1", "AdvancedSubtensor", "AdvancedSubtensor1",
    "ArrayIdx", "IncSubtensor", "SliceIdx", "Subtensor", "getitem", "inc_subtensor",
    "set_subtensor", "take",
]  # fmt: skip
