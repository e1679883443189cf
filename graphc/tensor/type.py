"""TensorType: an n-d array type with a dtype and a static shape (None or int per axis)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Type
from graphc.scalar.basic import DTYPES

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from graphc.graph.basic import Variable


class TensorType(Type):
    """``TensorType(dtype, shape)``; a static size of 1 means broadcastable."""

    __props__ = ("dtype", "shape")

    def __init__(
        self,
        dtype: str,
        shape: Sequence[int | None] | None = None,
        broadcastable: Sequence[bool] | None = None,
        name: str | None = None,
    ):
        # Theano's spelling, TensorType(dtype, broadcastable=..., name=...), is accepted too
        if broadcastable is not None:
            if shape is not None:
                raise TypeError("TensorType: give shape or broadcastable, not both")
            shape = [1 if b else None for b in broadcastable]
        shape = () if shape is None else shape
        self.name = name
        if type(dtype) is str and dtype in DTYPES:  # a canonical name: np.dtype is costly
            dt = dtype
        else:
            dt = str(np.dtype(config.floatX if dtype == "floatX" else dtype))
        if dt not in DTYPES:
            raise TypeError(f"unsupported dtype {dt!r}; graphc supports {', '.join(DTYPES)}")
        self.dtype = dt
        if any(isinstance(s, bool | np.bool_) for s in shape):  # Theano's broadcastable
            shape = [1 if b else None for b in shape]
        self.shape = tuple(None if s is None else int(s) for s in shape)
        for s in self.shape:
            if s is not None and s < 0:
                raise ValueError(f"negative static size in shape {self.shape}")

    @classmethod
    def from_broadcastable(cls, dtype: str, broadcastable: Sequence[bool]) -> TensorType:
        return cls(dtype, [1 if b else None for b in broadcastable])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return tuple(s == 1 for s in self.shape)

    def clone(
        self, dtype: str | None = None, shape: Sequence[int | None] | None = None
    ) -> TensorType:
        return TensorType(dtype or self.dtype, self.shape if shape is None else shape)

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        """Return ``value`` as an ndarray of this type, or raise TypeError / ValueError."""
        if type(value) is np.ndarray and value.dtype == self.dtype:
            arr = value
        else:
            if strict:
                raise TypeError(
                    f"expected an ndarray of dtype {self.dtype}, got {_describe(value)}"
                )
            arr = self._convert(value, allow_downcast)
        if arr.ndim != self.ndim:
            raise TypeError(
                f"wrong number of dimensions: expected {self.ndim} ({self}), got {arr.ndim} "
                f"(shape {arr.shape})"
            )
        for axis, (want, got) in enumerate(zip(self.shape, arr.shape)):
            if want is not None and want != got:
                raise ValueError(
                    f"wrong size on axis {axis}: the type {self} requires {want}, got {got} "
                    f"(shape {arr.shape})"
                )
        return arr

    def _convert(self, value, allow_downcast: bool | None) -> np.ndarray:
        if isinstance(value, np.ma.MaskedArray):
            raise TypeError(
                f"masked arrays are not supported (expected {self.dtype}); pass "
                "value.filled(fill_value) or value.data to say what masked entries hold"
            )
        if isinstance(value, np.ndarray | np.generic):
            src = np.asarray(value)  # subclasses (np.matrix, memmap) become plain ndarrays
            if src.dtype.kind not in "biuf":
                raise TypeError(f"cannot convert an array of dtype {src.dtype} to {self.dtype}")
            if allow_downcast or np.can_cast(src.dtype, self.dtype, "safe"):
                return src.astype(self.dtype)
            raise TypeError(
                f"cannot safely convert dtype {src.dtype} to {self.dtype} "
                "(pass allow_input_downcast=True to allow the downcast)"
            )
        if isinstance(value, bool | int | float) and not isinstance(value, complex):
            if _fits(value, self.dtype) and (
                allow_downcast is not False or _exact(value, self.dtype)
            ):
                return np.asarray(value, dtype=self.dtype)
            if allow_downcast:
                with np.errstate(all="ignore"):
                    return np.asarray(value).astype(self.dtype)
            raise TypeError(
                f"Python value {value!r} does not fit {self.dtype} (it would become "
                f"{_cast_text(value, self.dtype)}); pass allow_input_downcast=True to allow it"
            )
        try:
            arr = np.asarray(value)
        except Exception as e:  # noqa: BLE001 - anything numpy cannot read
            raise TypeError(f"expected an array of {self.dtype}, got {_describe(value)}") from e
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"expected an array of {self.dtype}, got {_describe(value)}")
        if (
            allow_downcast
            or np.can_cast(arr.dtype, self.dtype, "safe")
            or _all_fit(arr, self.dtype)
        ):
            return arr.astype(self.dtype)
        raise TypeError(f"cannot safely convert {_describe(value)} to {self.dtype}")

    def value_zeros(self, shape: Sequence[int]) -> np.ndarray:
        return np.zeros(shape, dtype=self.dtype)

    def __str__(self) -> str:
        if getattr(self, "name", None):
            return self.name
        if all(s is None for s in self.shape) or not self.shape:
            names = {0: "Scalar", 1: "Vector", 2: "Matrix"}
            if self.ndim in names:
                return f"{names[self.ndim]}({self.dtype})" if self.ndim else f"Scalar({self.dtype})"
        shape = ", ".join("?" if s is None else str(s) for s in self.shape)
        return f"Tensor({self.dtype}, shape=({shape}{',' if self.ndim == 1 else ''}))"

    def convert_variable(self, var: Variable):
        """``var`` may stand in for a Variable of this type when dtype and ndim match and no
        static size conflicts (a rewrite may know more, or less, about a shape)."""
        t = var.type
        if t == self:
            return var
        if isinstance(t, TensorType) and t.dtype == self.dtype and t.ndim == self.ndim:
            if all(a is None or b is None or a == b for a, b in zip(self.shape, t.shape)):
                return var
        return None


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"ndarray(dtype={value.dtype}, shape={value.shape})"
    return f"{type(value).__name__} {value!r:.60}"


def _cast(value, dtype: str):
    with np.errstate(all="ignore"):
        return np.asarray(value, dtype=dtype)


def _exact(value, dtype: str) -> bool:
    """The cast loses nothing (compared in Python, not in ``dtype``)."""
    try:
        return _cast(value, dtype).item() == value
    except (OverflowError, ValueError):
        return False


def _fits(value, dtype: str) -> bool:
    """A Python number fits ``dtype``: exactly, or for a float into a float dtype rounded
    by at most the dtype's epsilon (relative), so neither overflowing to inf, nor flushed
    to zero, nor losing digits as a subnormal."""
    if isinstance(value, float) and np.dtype(dtype).kind == "f":
        back = _cast(value, dtype).item()
        if not math.isfinite(value):
            return back == value or (math.isnan(value) and math.isnan(back))
        eps = float(np.finfo(dtype).eps)
        return math.isfinite(back) and abs(back - value) <= abs(value) * eps
    return _exact(value, dtype)


def _cast_text(value, dtype: str) -> str:
    try:
        return repr(_cast(value, dtype).item())
    except (OverflowError, ValueError):
        return "out of range"


def _all_fit(arr: np.ndarray, dtype: str) -> bool:
    """Python-sourced arrays (lists of numbers) fit when every value fits as above."""
    try:
        conv = _cast(arr, dtype)
    except (OverflowError, ValueError):
        return False
    if arr.dtype.kind == "f" and np.dtype(dtype).kind == "f":
        finite = np.isfinite(arr)
        with np.errstate(all="ignore"):
            err = np.abs(conv.astype(arr.dtype) - arr)
        close = err <= np.abs(arr) * float(np.finfo(dtype).eps)
        same_special = ~finite & ((conv == arr) | (np.isnan(conv) & np.isnan(arr)))
        return bool(np.all(np.where(finite, close, same_special)))
    return bool(np.all(conv.astype(arr.dtype) == arr))


# ------------------------------------------------------------------ constructors


def tensor(
    dtype: str | None = None,
    shape: Sequence[int | None] | None = None,
    name: str | None = None,
    *,
    broadcastable=None,
):
    """A new symbolic tensor: ``tensor("float32", shape=(None, 3))``."""
    dtype = dtype or config.floatX
    if broadcastable is not None:
        shape = [1 if b else None for b in broadcastable]
    return TensorType(dtype, shape or ()).make_variable(name)


def _maker(ndim_shape):
    def make(name: str | None = None, dtype: DTypeLike | None = None):
        return TensorType(dtype or config.floatX, ndim_shape).make_variable(name)

    return make


scalar = _maker(())
vector = _maker((None,))
matrix = _maker((None, None))
row = _maker((1, None))
col = _maker((None, 1))
tensor3 = _maker((None,) * 3)
tensor4 = _maker((None,) * 4)
tensor5 = _maker((None,) * 5)


_PREFIX = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
}
_KINDS = {
    "scalar": (),
    "vector": (None,),
    "matrix": (None, None),
    "row": (1, None),
    "col": (None, 1),
    "tensor3": (None,) * 3,
    "tensor4": (None,) * 4,
    "tensor5": (None,) * 5,
}


def _types(dtype: str) -> tuple[TensorType, ...]:
    """The scalar, vector, matrix, row, col, tensor3, tensor4 and tensor5 types of ``dtype``."""
    return tuple(TensorType(dtype, shape) for shape in _KINDS.values())


# ``T.dmatrix`` is a type: ``T.dmatrix("x")``
_B, _W, _I, _L = _types("int8"), _types("int16"), _types("int32"), _types("int64")
_F, _D = _types("float32"), _types("float64")
bscalar, bvector, bmatrix, brow, bcol, btensor3, btensor4, btensor5 = _B
wscalar, wvector, wmatrix, wrow, wcol, wtensor3, wtensor4, wtensor5 = _W
iscalar, ivector, imatrix, irow, icol, itensor3, itensor4, itensor5 = _I
lscalar, lvector, lmatrix, lrow, lcol, ltensor3, ltensor4, ltensor5 = _L
fscalar, fvector, fmatrix, frow, fcol, ftensor3, ftensor4, ftensor5 = _F
dscalar, dvector, dmatrix, drow, dcol, dtensor3, dtensor4, dtensor5 = _D


def _plural(make):
    def many(*names, dtype: DTypeLike | None = None):
        """Several variables at once, as Theano: ``dmatrices("a", "b")`` and
        ``vectors("xyz")`` name them (one letter each), ``scalars(3)`` makes 3 unnamed;
        a single name gives a single variable."""
        kw = {} if dtype is None else {"dtype": dtype}
        if names and isinstance(names[0], int | np.integer) and not isinstance(names[0], bool):
            return [make(**kw) for _ in range(int(names[0]))]
        if len(names) == 1:
            names = names[0]
        if isinstance(names, str) and len(names) == 1:
            return make(names, **kw)
        return [make(n, **kw) for n in names]

    return many


_PLURALS = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "row": "rows",
            "col": "cols", "tensor3": "tensor3s", "tensor4": "tensor4s",
            "tensor5": "tensor5s"}  # fmt: skip


def _plurals(makers) -> tuple:
    return tuple(_plural(m) for m in makers)


_ANY = (scalar, vector, matrix, row, col, tensor3, tensor4, tensor5)
scalars, vectors, matrices, rows, cols, tensor3s, tensor4s, tensor5s = _plurals(_ANY)
bscalars, bvectors, bmatrices, brows, bcols, btensor3s, btensor4s, btensor5s = _plurals(_B)
wscalars, wvectors, wmatrices, wrows, wcols, wtensor3s, wtensor4s, wtensor5s = _plurals(_W)
iscalars, ivectors, imatrices, irows, icols, itensor3s, itensor4s, itensor5s = _plurals(_I)
lscalars, lvectors, lmatrices, lrows, lcols, ltensor3s, ltensor4s, ltensor5s = _plurals(_L)
fscalars, fvectors, fmatrices, frows, fcols, ftensor3s, ftensor4s, ftensor5s = _plurals(_F)
dscalars, dvectors, dmatrices, drows, dcols, dtensor3s, dtensor4s, dtensor5s = _plurals(_D)


_BASE_NAMES = ["scalars", "vectors", "matrices", "TensorType", "tensor", "scalar", "vector",
               "matrix", "row", "col", "tensor3", "tensor4", "tensor5"]  # fmt: skip
_TYPED_KINDS = (*_KINDS, *_PLURALS.values())
__all__ = list(dict.fromkeys(_BASE_NAMES + [*_PLURALS.values()]))
__all__ += [p + k for p in _PREFIX for k in _TYPED_KINDS]
