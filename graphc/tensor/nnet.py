"""Neural-network Ops: activations, (log-)softmax and cross-entropies (``graphc.tensor.nnet``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Constant, Op, Variable
from graphc.scalar.basic import FLOAT_DTYPES, Second
from graphc.tensor import math as tm
from graphc.tensor.basic import arange
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import sigmoid, softplus
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

    from graphc.tensor.variable import TensorLike

__all__ = [
    "CrossentropyCategorical1Hot", "CrossentropyCategorical1HotGrad", "CrossentropySoftmax1Hot",
    "CrossentropySoftmax1HotDx", "LogSoftmax", "Softmax", "binary_crossentropy",
    "categorical_crossentropy", "crossentropy_categorical_1hot", "crossentropy_softmax_1hot",
    "crossentropy_softmax_1hot_with_bias", "log_softmax", "logsoftmax", "relu", "sigmoid",
    "softmax", "softplus",
]  # fmt: skip

_FLOATS = FLOAT_DTYPES
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _const(value, dtype: str) -> TensorConstant:
    """A 0-d constant (Elemwise broadcasts it)."""
    arr = np.asarray(value, dtype=dtype)
    arr.setflags(write=False)
    return TensorConstant(TensorType(dtype, ()), arr)


def _as_float(x: TensorLike):
    """``x`` as a tensor, integer and bool tensors cast to a float dtype (as numpy does)."""
    x = as_tensor_variable(x)
    if x.dtype in _FLOATS:
        return x
    return tm.cast(x, "float32" if np.dtype(x.dtype).itemsize <= 2 else "float64")


def _is_zeros(v: Variable) -> bool:
    """Whether ``v`` is known to be all zeros (a filled zero constant, as ``grad`` makes)."""
    while v.owner is not None and isinstance(v.owner.op, DimShuffle):
        v = v.owner.inputs[0]
    if isinstance(v, Constant):
        return not np.any(v.data)
    op = v.owner.op if v.owner is not None else None
    if isinstance(op, Elemwise) and isinstance(op.scalar_op, Second):
        return _is_zeros(v.owner.inputs[1])
    return False


def relu(x: TensorLike, alpha: int = 0):
    """Rectified linear unit: ``x`` where positive, else ``alpha * x`` (leaky when alpha != 0)."""
    x = as_tensor_variable(x)
    if not isinstance(alpha, Variable) and alpha == 0:
        return tm.maximum(x, _const(0, x.dtype))
    if not isinstance(alpha, Variable):
        alpha = _const(alpha, x.dtype if x.dtype in _FLOATS else "float64")
    return tm.switch(tm.gt(x, _const(0, x.dtype)), x, tm.mul(x, alpha))


# ------------------------------------------------------------------ softmax


def _axis(op_name: str, x: Variable, axis: int) -> int:
    if x.ndim == 0:
        raise TypeError(f"{op_name}: input must have at least one dimension, got {x.type}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{op_name}: axis {axis} is out of range for {x} of type {x.type}")
    return axis % x.ndim


def _np_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if x.shape[axis] == 0:
        return np.empty_like(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    shifted = x - m
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


class _AlongAxis(Op):
    """A same-shape float Op over one ``axis`` (Softmax, LogSoftmax)."""

    __props__ = ("axis",)

    def __init__(self, axis: int = -1):
        self.axis = int(axis)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        if x.dtype not in _FLOATS:
            raise TypeError(f"{self}: input must be float32 or float64, got {x} of type {x.type}")
        _axis(str(self), x, self.axis)
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]


class Softmax(_AlongAxis):
    """``exp(x) / sum(exp(x), axis)``, computed with the maximum subtracted first."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        ax = self.axis % x.ndim
        if x.shape[ax] == 0:
            output_storage[0][0] = np.empty_like(x)
            return
        e = np.exp(x - np.max(x, axis=ax, keepdims=True))
        output_storage[0][0] = np.asarray(e / np.sum(e, axis=ax, keepdims=True), dtype=x.dtype)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        (g,) = gouts
        sm = self(x)
        ax = self.axis % x.ndim
        return [(g - tm.sum(g * sm, axis=ax, keepdims=True)) * sm]


class LogSoftmax(_AlongAxis):
    """``x - logsumexp(x, axis)``, computed stably."""

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        out = _np_log_softmax(x, self.axis % x.ndim)
        output_storage[0][0] = np.asarray(out, dtype=x.dtype)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        (g,) = gouts
        ax = self.axis % x.ndim
        return [g - tm.exp(self(x)) * tm.sum(g, axis=ax, keepdims=True)]


def _theano_row(x: TensorLike, axis: int | None) -> tuple:
    """``(x, axis)`` with Theano's default: no axis means the last one, and a vector is
    first made a (1, n) row (Theano's softmax and logsoftmax took rows and padded vectors)."""
    if axis is not None:
        return x, axis
    if x.ndim == 1:
        x = x.dimshuffle("x", 0)
    return x, -1


def softmax(x: TensorLike, axis: int | None = None):
    """Softmax over ``axis``; without one, over the last axis, and a vector gives a (1, n)
    row as Theano's ``T.nnet.softmax`` did."""
    x, axis = _theano_row(_as_float(x), axis)
    return Softmax(_axis("softmax", x, axis))(x)


def log_softmax(x: TensorLike, axis: int | None = None):
    """Log of the softmax over ``axis``, without forming the softmax; no axis as in
    ``softmax`` (a vector gives a (1, n) row)."""
    x, axis = _theano_row(_as_float(x), axis)
    return LogSoftmax(_axis("log_softmax", x, axis))(x)


logsoftmax = log_softmax  # Theano's name


# ------------------------------------------------------------------ cross-entropies


def _1hot_grad_node(op: Op, g: Variable, dist: tuple, y_idx: Variable, g_error: str) -> Apply:
    """The Apply of a 1-hot gradient Op ``(g, dist, y_idx) -> like dist``; ``dist`` is
    (value, name for errors), ``g_error`` the message for a ``g`` that is not a vector
    (``{g}`` the variable, ``{t}`` its type)."""
    g, x, y = (as_tensor_variable(v) for v in (g, dist[0], y_idx))
    _check_1hot(op, x, y, dist[1])
    if g.ndim != 1:
        raise TypeError(f"{op}: " + g_error.format(g=g, t=g.type))
    return Apply(op, [g, x, y], [x.type()])


def _check_1hot(op: Op, x: Variable, y_idx: Variable, what: str):
    if x.ndim != 2 or x.dtype not in _FLOATS:
        raise TypeError(f"{op}: {what} must be a float matrix, got {x} of type {x.type}")
    if y_idx.ndim != 1 or y_idx.dtype not in _INTS:
        raise TypeError(
            f"{op}: class indices must be an integer vector, got {y_idx} of type {y_idx.type}"
        )
    a, b = x.type.shape[0], y_idx.type.shape[0]
    if a is not None and b is not None and a != b:
        raise ValueError(f"{op}: {x.type} and {y_idx.type} have different numbers of rows")
    return a if a is not None else b


def _check_idx(op: Op, y: np.ndarray, n_rows: int, n_classes: int) -> None:
    if y.shape[0] != n_rows:
        raise ValueError(f"{op}: {n_rows} rows but {y.shape[0]} class indices")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise IndexError(f"{op}: class index out of range [0, {n_classes}) in {y}")


class CrossentropyCategorical1Hot(Op):
    """``-log(coding_dist[i, y_idx[i]])`` per row."""

    __props__ = ()

    def make_node(self, coding_dist: Variable, y_idx: Variable) -> Apply:
        x, y = as_tensor_variable(coding_dist), as_tensor_variable(y_idx)
        n = _check_1hot(self, x, y, "coding_dist")
        return Apply(self, [x, y], [TensorType(x.dtype, (n,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y = inputs
        _check_idx(self, y, x.shape[0], x.shape[1])
        with np.errstate(divide="ignore"):
            out = -np.log(x[np.arange(x.shape[0]), y])
        output_storage[0][0] = np.asarray(out, dtype=x.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(shapes[0][0],)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, y = inputs
        (g,) = gouts
        return [CrossentropyCategorical1HotGrad()(g, x, y), None]


class CrossentropyCategorical1HotGrad(Op):
    """Gradient of ``CrossentropyCategorical1Hot``: ``-g[i] / x[i, y[i]]`` at ``(i, y[i])``."""

    __props__ = ()

    def make_node(self, g: Variable, coding_dist: Variable, y_idx: Variable) -> Apply:
        return _1hot_grad_node(
            self,
            g,
            (coding_dist, "coding_dist"),
            y_idx,
            "output gradient must be a vector, got {t}",
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        g, x, y = inputs
        _check_idx(self, y, x.shape[0], x.shape[1])
        out = np.zeros_like(x)
        rows = np.arange(x.shape[0])
        out[rows, y] = -g / x[rows, y]
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[1])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        # out[i, y[i]] = -g[i] / x[i, y[i]]: d/dg = -G[i, y[i]] / x[i, y[i]]; d/dx at (i, y[i])
        # = G g / x**2, which is this Op applied to -G g / x.
        g, x, y = inputs
        (gz,) = gouts
        gz_y, x_y = _pick(gz, y), _pick(x, y)
        return [-gz_y / x_y, self(-gz_y * g / x_y, x, y), None]


def _pick(m, y):
    """``m[i, y[i]]`` for every row ``i``."""
    return m[arange(m.shape[0]), y]


def crossentropy_categorical_1hot(coding_dist: TensorLike, y_idx: TensorLike):
    return CrossentropyCategorical1Hot()(coding_dist, y_idx)


def categorical_crossentropy(coding_dist: TensorLike, true_dist: TensorLike):
    """Cross-entropy between rows of ``coding_dist`` and ``true_dist``: a distribution (same
    shape, e.g. one-hot) or an integer vector of class indices."""
    x = as_tensor_variable(coding_dist)
    t = as_tensor_variable(true_dist)
    if t.ndim == x.ndim:
        return -tm.sum(t * tm.log(x), axis=x.ndim - 1)
    if t.ndim == 1 and x.ndim == 2 and t.dtype in _INTS:
        return CrossentropyCategorical1Hot()(x, t)
    raise TypeError(
        f"categorical_crossentropy: true_dist must have coding_dist's shape or be an integer "
        f"vector of class indices; got coding_dist {x.type} and true_dist {t.type}"
    )


def binary_crossentropy(output: TensorLike, target: TensorLike):
    """``-(target * log(output) + (1 - target) * log(1 - output))`` element-wise."""
    o = _as_float(output)
    t = as_tensor_variable(target)
    one = _const(1, o.dtype)
    return -(t * tm.log(o) + (one - t) * tm.log(one - o))


class CrossentropySoftmax1Hot(Op):
    """Fused ``(nll, softmax)`` of logits ``x`` (matrix) and class indices ``y_idx``:
    ``nll[i] = logsumexp(x[i]) - x[i, y_idx[i]]`` and ``softmax = softmax(x)`` (row-wise)."""

    __props__ = ()

    def make_node(self, x: Variable, y_idx: Variable) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y_idx)
        n = _check_1hot(self, x, y, "x")
        return Apply(self, [x, y], [TensorType(x.dtype, (n,))(), x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y = inputs
        _check_idx(self, y, x.shape[0], x.shape[1])
        if x.shape[1] == 0:
            if x.shape[0]:
                raise IndexError(f"{self}: no classes")
            output_storage[0][0] = np.zeros(0, dtype=x.dtype)
            output_storage[1][0] = np.empty_like(x)
            return
        lsm = _np_log_softmax(x, 1)
        rows = np.arange(x.shape[0])
        output_storage[0][0] = np.asarray(-lsm[rows, y], dtype=x.dtype)
        output_storage[1][0] = np.asarray(np.exp(lsm), dtype=x.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(shapes[0][0],), tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, y = inputs
        g_nll, g_sm = gouts
        _, sm = self(x, y)
        dx = None
        if not _is_zeros(g_nll):
            dx = CrossentropySoftmax1HotDx()(g_nll, sm, y)
        if not _is_zeros(g_sm):
            d_sm = (g_sm - tm.sum(g_sm * sm, axis=1, keepdims=True)) * sm
            dx = d_sm if dx is None else dx + d_sm
        if dx is None:
            dx = tm.second(x, _const(0, x.dtype))
        return [dx, None]


class CrossentropySoftmax1HotDx(Op):
    """Gradient of the nll of ``CrossentropySoftmax1Hot``: ``dnll[:, None] * (sm - onehot)``."""

    __props__ = ()

    def make_node(self, dnll: Variable, sm: Variable, y_idx: Variable) -> Apply:
        return _1hot_grad_node(
            self, dnll, (sm, "sm"), y_idx, "dnll must be a vector, got {g} of type {t}"
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        g, sm, y = inputs
        _check_idx(self, y, sm.shape[0], sm.shape[1])
        dx = sm * g[:, None]
        dx[np.arange(sm.shape[0]), y] -= g
        output_storage[0][0] = np.asarray(dx, dtype=sm.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[1])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        # dnll[:, None] * (sm - onehot(y)): linear in dnll and in sm
        g, sm, y = inputs
        (gz,) = gouts
        return [tm.sum(gz * sm, axis=1) - _pick(gz, y), gz * g.dimshuffle(0, "x"), None]


def crossentropy_softmax_1hot(x: TensorLike, y_idx: TensorLike):
    """``(nll, softmax(x))`` for logits ``x`` and integer class indices ``y_idx``."""
    return CrossentropySoftmax1Hot()(_as_float(x), y_idx)


def crossentropy_softmax_1hot_with_bias(x: TensorLike, b: TensorLike, y_idx: TensorLike):
    """``crossentropy_softmax_1hot(x + b, y_idx)``."""
    return crossentropy_softmax_1hot(tm.add(_as_float(x), b), y_idx)


from graphc.tensor.conv import conv2d  # noqa: E402  (Theano's graphc.tensor.nnet.conv2d)

__all__ += ["conv2d"]


def softsign(x: TensorLike):
    """``x / (1 + |x|)`` (Theano's ``nnet.softsign``)."""
    x = as_tensor_variable(x)
    return tm.true_div(x, tm.add(_const(1, x.dtype), tm.abs(x)))


def hard_sigmoid(x: TensorLike):
    """Theano's piecewise-linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)``."""
    x = as_tensor_variable(x)
    dt = x.dtype if x.dtype in _FLOATS else "float64"
    return tm.clip(x * _const(0.2, dt) + _const(0.5, dt), _const(0, dt), _const(1, dt))


def elu(x: TensorLike, alpha: float = 1.0):
    """Exponential linear unit: ``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    x = as_tensor_variable(x)
    dt = x.dtype if x.dtype in _FLOATS else "float64"
    return tm.switch(tm.gt(x, _const(0, x.dtype)), x, tm.mul(_const(alpha, dt), tm.expm1(x)))


__all__ += ["elu", "hard_sigmoid", "softsign"]
