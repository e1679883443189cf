"""TensorVariable and TensorConstant: operators and numpy-like methods on symbolic arrays.

The operators resolve the Op functions through the ``graphc.tensor`` namespace, which
``graphc.tensor`` binds here once when it is imported (``bind_operator_namespace``): this
module imports none of the Op modules that build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Constant, Variable
from graphc.tensor.type import TensorType

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

# What the tensor functions accept where they call ``as_tensor_variable``: a symbolic
# Variable, a numpy array or scalar, a Python number, or a (nested) list or tuple of these.
TensorLike: TypeAlias = "Variable | np.ndarray | np.generic | bool | int | float | Sequence[Any]"

_COMPARISONS = frozenset({"lt", "gt", "le", "ge", "eq", "neq"})

_namespace: ModuleType | None = None  # graphc.tensor, once it has finished importing


def bind_operator_namespace(namespace: ModuleType) -> None:
    """Let the operators call ``namespace``'s functions (done once, by ``graphc.tensor``)."""
    global _namespace
    _namespace = namespace


def _t() -> Any:
    if _namespace is None:
        raise ImportError("tensor operators are used before graphc.tensor was imported")
    return _namespace


class _TensorOps:
    """Operators shared by tensor variables and constants."""

    __slots__ = ()

    # arithmetic
    def __add__(self, o: TensorLike):
        return _t().add(self, o)

    def __radd__(self, o: TensorLike):
        return _t().add(o, self)

    def __sub__(self, o: TensorLike):
        return _t().sub(self, o)

    def __rsub__(self, o: TensorLike):
        return _t().sub(o, self)

    def __mul__(self, o: TensorLike):
        return _t().mul(self, o)

    def __rmul__(self, o: TensorLike):
        return _t().mul(o, self)

    def __truediv__(self, o: TensorLike):
        return _t().true_div(self, o)

    def __rtruediv__(self, o: TensorLike):
        return _t().true_div(o, self)

    def __floordiv__(self, o: TensorLike):
        return _t().int_div(self, o)

    def __rfloordiv__(self, o: TensorLike):
        return _t().int_div(o, self)

    def __mod__(self, o: TensorLike):
        return _t().mod(self, o)

    def __rmod__(self, o: TensorLike):
        return _t().mod(o, self)

    def __pow__(self, o: TensorLike):
        return _t().pow(self, o)

    def __rpow__(self, o: TensorLike):
        return _t().pow(o, self)

    def __neg__(self):
        return _t().neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _t().abs(self)

    # comparisons (element-wise, like numpy)
    def __lt__(self, o: TensorLike):
        return _t().lt(self, o)

    def __le__(self, o: TensorLike):
        return _t().le(self, o)

    def __gt__(self, o: TensorLike):
        return _t().gt(self, o)

    def __ge__(self, o: TensorLike):
        return _t().ge(self, o)

    # logic
    def __and__(self, o: TensorLike):
        return _t().and_(self, o)

    def __rand__(self, o: TensorLike):
        return _t().and_(o, self)

    def __or__(self, o: TensorLike):
        return _t().or_(self, o)

    def __ror__(self, o: TensorLike):
        return _t().or_(o, self)

    def __xor__(self, o: TensorLike):
        return _t().xor(self, o)

    def __rxor__(self, o: TensorLike):
        return _t().xor(o, self)

    def __invert__(self):
        return _t().invert(self)

    def __matmul__(self, o: TensorLike):
        return _t().matmul(self, o)

    def __rmatmul__(self, o: TensorLike):
        return _t().matmul(o, self)

    def __bool__(self):
        # as in Theano: every variable is truthy (``if not W:``) except a comparison's
        # result, so that ``a < b < c`` fails instead of silently dropping ``a < b``
        node = getattr(self, "owner", None)
        name = getattr(getattr(node, "op", None), "scalar_op", None)
        if getattr(name, "name", None) in _COMPARISONS:
            raise TypeError(
                "the result of a comparison has no truth value; use graphc.ifelse or "
                "graphc.tensor.switch"
            )
        return True

    def __iter__(self):
        # as in Theano: a vector of statically known length yields ``x[0], x[1], ...``;
        # anything else that is not a vector raises TypeError (``builtins.sum(x)``), a
        # vector of unknown length raises get_vector_length's ValueError
        try:
            n = _t().get_vector_length(self)
        except TypeError:
            raise TypeError(
                "a symbolic tensor that is not a vector of known length is not iterable; "
                "index it instead (or use graphc.tensor.sum instead of builtins.sum)"
            ) from None
        return (self[i] for i in range(n))

    def __len__(self):
        raise TypeError("a symbolic variable has no len(); use .shape[0]")

    # indexing and shape
    def __getitem__(self, idx):
        return _t().subtensor.getitem(self, idx)

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self):
        return _t().shape(self)

    @property
    def size(self):
        return _t().prod(_t().shape(self))

    @property
    def T(self):
        return self.transpose()

    def transpose(self, *axes: int | Sequence[int] | None):
        if not axes:
            axes = tuple(range(self.ndim))[::-1]
        elif len(axes) == 1 and isinstance(axes[0], list | tuple):
            axes = tuple(axes[0])
        return self.dimshuffle(*axes)

    def dimshuffle(self, *pattern: Any):
        if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
            pattern = tuple(pattern[0])
        return _t().DimShuffle(self.ndim, pattern)(self)

    def reshape(self, *shape: TensorLike, ndim: int | None = None):
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = shape[0]
        return _t().reshape(self, shape, ndim=ndim)

    def flatten(self, ndim: int = 1):
        return _t().flatten(self, ndim)

    def astype(self, dtype: DTypeLike):
        return _t().cast(self, dtype)

    def dot(self, o: TensorLike):
        return _t().dot(self, o)

    def sum(
        self,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        dtype: DTypeLike | None = None,
        acc_dtype: DTypeLike | None = None,
    ):
        return _t().sum(self, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype)

    def prod(
        self,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        dtype: DTypeLike | None = None,
        acc_dtype: DTypeLike | None = None,
    ):
        return _t().prod(self, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype)

    def mean(
        self,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        dtype: DTypeLike | None = None,
        acc_dtype: DTypeLike | None = None,
    ):
        return _t().mean(self, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype)

    def norm(self, L: float, axis: int | Sequence[int] | None = None):
        """Theano's ``norm``: ``(|x| ** L).sum(axis) ** (1 / L)``; L = 0 or inf are not
        supported (NotImplementedError, as in Theano)."""
        if L == 0 or np.isinf(L):
            raise NotImplementedError(f"norm(L={L}): only finite, non-zero L is supported")
        return (abs(self) ** L).sum(axis=axis) ** (1.0 / L)

    def var(
        self,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        ddof: int = 0,
        corrected: bool = False,
    ):
        return _t().var(self, axis=axis, keepdims=keepdims, ddof=ddof, corrected=corrected)

    def std(
        self,
        axis: int | Sequence[int] | None = None,
        keepdims: bool = False,
        ddof: int = 0,
        corrected: bool = False,
    ):
        return _t().std(self, axis=axis, keepdims=keepdims, ddof=ddof, corrected=corrected)

    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().argmin(self, axis=axis, keepdims=keepdims)

    def all(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().all(self, axis=axis, keepdims=keepdims)

    def any(self, axis: int | Sequence[int] | None = None, keepdims: bool = False):
        return _t().any(self, axis=axis, keepdims=keepdims)

    def clip(self, lo: TensorLike, hi: TensorLike):
        return _t().clip(self, lo, hi)

    def exp(self):
        return _t().exp(self)

    def log(self):
        return _t().log(self)

    def sqrt(self):
        return _t().sqrt(self)

    def zeros_like(self, dtype: DTypeLike | None = None):
        return _t().zeros_like(self, dtype=dtype)

    def repeat(self, repeats: TensorLike, axis: int | None = None):
        return _t().repeat(self, repeats, axis)

    def cumsum(self, axis: int | None = None):
        return _t().cumsum(self, axis)

    def cumprod(self, axis: int | None = None):
        return _t().cumprod(self, axis)

    def sort(self, axis: int = -1, kind: str = "quicksort", order=None):
        return _t().sort(self, axis, kind, order)

    def argsort(self, axis: int = -1, kind: str = "quicksort", order=None):
        return _t().argsort(self, axis, kind, order)

    def take(self, indices: TensorLike, axis: int | None = None, mode: str = "raise"):
        if mode != "raise":
            raise NotImplementedError(f"take(mode={mode!r}): only mode='raise' is supported")
        return _t().take(self, indices, axis)

    def fill(self, value: TensorLike):
        return _t().fill(self, value)

    def nonzero_values(self):
        raise NotImplementedError("nonzero_values is not implemented in graphc")


class TensorVariable(_TensorOps, Variable):
    """A symbolic n-d array."""

    __slots__ = ()


class TensorConstant(_TensorOps, Constant):
    """A constant n-d array."""

    __slots__ = ()

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = np.asarray(self.data)
        if data.ndim == 0:
            return f"TensorConstant{{{data.item()}}}"
        if data.size <= 4:
            return f"TensorConstant{{{data.tolist()}}}"
        return f"TensorConstant{{{data.shape} of {data.dtype}}}"


TensorType.variable_type = TensorVariable
TensorType.constant_type = TensorConstant


def _python_scalar_dtype(value) -> str:
    """dtype for a Python scalar constant: ints take the smallest int dtype that holds them
    (so ``ivector + 1`` stays int32), floats take ``floatX``, as in Theano."""
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int):
        for dt in ("int8", "int16", "int32", "int64"):
            info = np.iinfo(dt)
            if info.min <= value <= info.max:
                return dt
        return "uint64"
    return config.floatX


def as_tensor_variable(
    x: TensorLike, name: str | None = None, ndim: int | None = None, dtype: DTypeLike | None = None
) -> TensorVariable:
    """Turn ``x`` (a Variable, numpy array, or Python value) into a tensor Variable."""
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"{x} has type {x.type}, not a tensor type")
        out = x
    elif isinstance(x, list | tuple) and any(isinstance(e, Variable) for e in x):
        out = _t().stack([as_tensor_variable(e) for e in x])
    else:
        out = constant(x, name=name, dtype=dtype)
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{out} has {out.ndim} dimensions, expected {ndim}")
    return out


def constant(
    x: TensorLike, name: str | None = None, dtype: DTypeLike | None = None
) -> TensorConstant:
    """A TensorConstant holding ``x``; static shape 1 where the value's axis has size 1."""
    if (
        isinstance(x, bool | int | float | np.bool_)
        and dtype is None
        and not isinstance(x, np.generic | np.ndarray)
    ):
        dtype = _python_scalar_dtype(x)
    arr = np.asarray(x, dtype=dtype)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"cannot make a tensor constant from {type(x).__name__} {x!r:.50}")
    arr = np.array(arr, order="C", copy=True)  # ascontiguousarray would make 0-d into 1-d
    arr.setflags(write=False)
    shape = tuple(1 if s == 1 else None for s in arr.shape)
    return TensorConstant(TensorType(str(arr.dtype), shape), arr, name=name)
