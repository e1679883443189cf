"""2-d pooling over the last two axes (``graphc.tensor.signal.pool.pool_2d``) and its gradients.

Semantics are Theano's: windows of ``ws`` every ``stride``; with ``ignore_border=False`` a
partial window at the bottom/right edge still produces an output; ``pad`` (only with
``ignore_border=True``) adds zeros that ``max``, ``sum`` and ``average_exc_pad`` ignore and
``average_inc_pad`` counts in its divisor.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op, Variable
from graphc.graph.rop import register_rop
from graphc.tensor.basic import zeros_like
from graphc.tensor.math import maximum
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import DTypeLike

    from graphc.tensor.variable import TensorLike

__all__ = [
    "AveragePoolGrad", "MaxPoolGrad", "MaxPoolGradGrad", "Pool", "pool_2d", "pool_output_length",
]  # fmt: skip

MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def pool_output_length(size, ws: int, stride: int, pad: int, ignore_border: bool):
    """Output length of one pooled axis (ints or symbolic int scalars)."""
    size = size + 2 * pad
    if ignore_border:
        n = (size - ws) // stride + 1
        return max(n, 0) if isinstance(n, int | np.integer) else _max0(n)
    if stride >= ws:
        return (size - 1) // stride + 1
    n = (size - 1 - ws + stride) // stride
    return (max(n, 0) if isinstance(n, int | np.integer) else _max0(n)) + 1


def _max0(v):
    return maximum(v, 0)


def _pair(value: TensorLike, what: str, minimum: int) -> tuple[int, int]:
    if isinstance(value, Variable) or (
        isinstance(value, tuple | list) and any(isinstance(v, Variable) for v in value)
    ):
        raise NotImplementedError(f"pool_2d: symbolic {what} (give ints)")
    if isinstance(value, int | np.integer):
        value = (value, value)
    try:
        a, b = (int(v) for v in value)
    except (TypeError, ValueError):
        raise TypeError(
            f"pool_2d: {what} must be a pair of ints known when the graph is built, got {value!r}"
        ) from None
    if a < minimum or b < minimum:
        raise ValueError(f"pool_2d: {what} must be >= {minimum}, got {value!r}")
    return a, b


class _PoolOp(Op):
    __props__ = ("ws", "ignore_border", "stride", "pad", "mode")

    def __init__(
        self,
        ws: Sequence[int],
        ignore_border: bool = False,
        stride: Sequence[int] | None = None,
        pad: Sequence[int] = (0, 0),
        mode: str = "max",
    ):
        self.ws = _pair(ws, "ws", 1)
        self.stride = self.ws if stride is None else _pair(stride, "stride", 1)
        self.pad = _pair(pad, "pad", 0)
        self.ignore_border = bool(ignore_border)
        if mode not in MODES:
            raise ValueError(f"pool_2d: mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        if self.pad != (0, 0) and not self.ignore_border:
            raise NotImplementedError("pool_2d: padding works only with ignore_border=True")
        if self.pad[0] >= self.ws[0] or self.pad[1] >= self.ws[1]:
            raise ValueError(f"pool_2d: pad {self.pad} must be smaller than ws {self.ws}")

    def __str__(self) -> str:
        return (f"{type(self).__name__}{{ws={self.ws}, stride={self.stride}, pad={self.pad}, "
                f"ignore_border={self.ignore_border}, mode={self.mode}}}")  # fmt: skip

    def _check(self, x: TensorLike, what: str = "input"):
        x = as_tensor_variable(x)
        if x.ndim < 2:
            raise TypeError(f"{self}: {what} must have at least 2 dimensions, got {x.type}")
        return x

    def _out_hw(self, hw: Sequence[int]) -> tuple[int, int]:
        return tuple(  # type: ignore[return-value]
            pool_output_length(hw[i], self.ws[i], self.stride[i], self.pad[i], self.ignore_border)
            for i in (0, 1)
        )

    def _buffer(self, x: np.ndarray, out_hw: Sequence[int], fill) -> np.ndarray:
        """``x`` placed at ``pad`` in a buffer covering every window, the rest ``fill``."""
        buf = np.full(x.shape[:-2] + self._extent(x.shape[-2:], out_hw), fill, dtype=x.dtype)
        ph, pw = self.pad
        buf[..., ph : ph + x.shape[-2], pw : pw + x.shape[-1]] = x
        return buf

    def _extent(self, in_hw: Sequence[int], out_hw: Sequence[int]) -> tuple[int, int]:
        """Rows and columns of a buffer holding the padded input and every window."""
        return tuple(  # type: ignore[return-value]
            max((out_hw[i] - 1) * self.stride[i] + self.ws[i], in_hw[i] + self.pad[i])
            for i in (0, 1)
        )

    def _offsets(self, out_hw: Sequence[int]):
        """``(i, j, rows, cols)``: for each offset in the window, the slices it reads."""
        (sh, sw), (oh, ow) = self.stride, out_hw
        for i in range(self.ws[0]):
            for j in range(self.ws[1]):
                yield (slice(i, i + (oh - 1) * sh + 1, sh), slice(j, j + (ow - 1) * sw + 1, sw))

    def _counts(self, in_hw: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:
        """Divisor of each output for the average modes: ``(OH, OW)``."""
        axes = []
        for k in (0, 1):
            start = np.arange(out_hw[k]) * self.stride[k]
            padded = in_hw[k] + 2 * self.pad[k]
            end = np.minimum(start + self.ws[k], padded)
            if self.mode == "average_exc_pad":
                start = np.maximum(start, self.pad[k])
                end = np.minimum(end, padded - self.pad[k])
            axes.append(np.maximum(end - start, 0))
        return np.outer(axes[0], axes[1])

    def _fill(self, dtype: DTypeLike):
        if self.mode != "max":
            return 0
        dt = np.dtype(dtype)
        return -np.inf if dt.kind == "f" else np.iinfo(dt).min

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        x_shape = shapes[0]
        return [tuple(x_shape[:-2]) + tuple(self._out_hw(x_shape[-2:]))]

    def _input_grad(self, x: np.ndarray, out_hw: Sequence[int], contribution) -> np.ndarray:
        """Sum of ``contribution(rows, cols)`` over the window offsets, cropped to ``x``."""
        gbuf = np.zeros(x.shape[:-2] + self._extent(x.shape[-2:], out_hw), x.dtype)
        for rows, cols in self._offsets(out_hw):
            gbuf[..., rows, cols] += contribution(rows, cols)
        ph, pw = self.pad
        return np.ascontiguousarray(gbuf[..., ph : ph + x.shape[-2], pw : pw + x.shape[-1]])


class Pool(_PoolOp):
    """Pool the last two axes of ``x`` with windows ``ws`` every ``stride``."""

    def make_node(self, x: Variable) -> Apply:
        x = self._check(x)
        if self.mode != "max" and x.dtype not in ("float32", "float64"):
            raise TypeError(
                f"{self}: {self.mode} pooling needs a float32 or float64 input, got {x.type}"
            )
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape[:-2] + (None, None))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        (x,) = inputs
        out_hw = self._out_hw(x.shape[-2:])
        if 0 in out_hw or 0 in x.shape:
            output_storage[0][0] = np.zeros(x.shape[:-2] + tuple(out_hw), x.dtype)
            return
        buf = self._buffer(x, out_hw, self._fill(x.dtype))
        acc = None
        for rows, cols in self._offsets(out_hw):
            part = buf[..., rows, cols]
            if acc is None:
                acc = part.copy()
            elif self.mode == "max":
                np.maximum(acc, part, out=acc)
            else:
                acc += part
        if self.mode.startswith("average"):
            acc /= self._counts(x.shape[-2:], out_hw)
        output_storage[0][0] = acc

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        return float(np.prod(output_shapes[0])) * self.ws[0] * self.ws[1]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        (g,) = gouts
        params = self._props()
        if self.mode == "max":
            return [MaxPoolGrad(*params)(x, self(x), g)]
        return [AveragePoolGrad(*params)(x, g)]


class MaxPoolGrad(_PoolOp):
    """Gradient of max pooling: ``(x, maxout, gz) -> gx``; every maximum gets ``gz``."""

    def make_node(self, x: Variable, maxout: Variable, gz: Variable) -> Apply:
        x, maxout, gz = self._check(x), self._check(maxout, "maxout"), self._check(gz, "gz")
        if self.mode != "max":
            raise ValueError(f"{self}: MaxPoolGrad is for mode='max'")
        if not x.ndim == maxout.ndim == gz.ndim:
            raise TypeError(f"{self}: x, maxout and gz must have the same number of dimensions")
        return Apply(self, [x, maxout, gz], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, maxout, gz = inputs
        out_hw = self._out_hw(x.shape[-2:])
        if maxout.shape != gz.shape or maxout.shape != x.shape[:-2] + tuple(out_hw):
            raise ValueError(f"{self}: maxout {maxout.shape} and gz {gz.shape} do not match "
                             f"the pooling of x {x.shape}")  # fmt: skip
        buf = self._buffer(x, out_hw, self._fill(x.dtype))
        gz = gz.astype(x.dtype, copy=False)
        output_storage[0][0] = self._input_grad(
            x, out_hw, lambda rows, cols: np.where(buf[..., rows, cols] == maxout, gz, 0)
        )

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, maxout, _ = inputs
        (g,) = gouts
        # gx is linear in gz and piecewise constant in x and maxout.
        return [zeros_like(x), zeros_like(maxout), MaxPoolGradGrad(*self._props())(x, maxout, g)]


class MaxPoolGradGrad(_PoolOp):
    """Gradient of ``MaxPoolGrad`` w.r.t. ``gz``: ``(x, maxout, ggx) -> ggz``, each window's
    sum of ``ggx`` over the positions holding its maximum."""

    def make_node(self, x: Variable, maxout: Variable, ggx: Variable) -> Apply:
        x, maxout, ggx = (self._check(v, w) for v, w in ((x, "x"), (maxout, "maxout"),
                                                          (ggx, "ggx")))  # fmt: skip
        if self.mode != "max":
            raise ValueError(f"{self}: MaxPoolGradGrad is for mode='max'")
        return Apply(self, [x, maxout, ggx], [maxout.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, maxout, ggx = inputs
        out_hw = self._out_hw(x.shape[-2:])
        if maxout.shape != x.shape[:-2] + tuple(out_hw) or ggx.shape != x.shape:
            raise ValueError(f"{self}: maxout {maxout.shape} and ggx {ggx.shape} do not match "
                             f"x {x.shape}")  # fmt: skip
        buf = self._buffer(x, out_hw, self._fill(x.dtype))
        gbuf = self._buffer(ggx.astype(x.dtype, copy=False), out_hw, 0)
        out = np.zeros(maxout.shape, x.dtype)
        for rows, cols in self._offsets(out_hw):
            out += np.where(buf[..., rows, cols] == maxout, gbuf[..., rows, cols], 0)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[1])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, maxout, _ = inputs
        return [zeros_like(x), zeros_like(maxout), MaxPoolGrad(*self._props())(x, maxout, gouts[0])]


class AveragePoolGrad(_PoolOp):
    """Gradient of sum/average pooling: ``(x, gz) -> gx`` (``x`` gives only the shape)."""

    def make_node(self, x: Variable, gz: Variable) -> Apply:
        x, gz = self._check(x), self._check(gz, "gz")
        if self.mode == "max":
            raise ValueError(f"{self}: AveragePoolGrad is not for mode='max'")
        if x.ndim != gz.ndim:
            raise TypeError(f"{self}: x and gz must have the same number of dimensions")
        return Apply(self, [x, gz], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, gz = inputs
        out_hw = self._out_hw(x.shape[-2:])
        if gz.shape != x.shape[:-2] + tuple(out_hw):
            raise ValueError(f"{self}: gz {gz.shape} does not match the pooling of x {x.shape}")
        gz = gz.astype(x.dtype, copy=False)
        if self.mode.startswith("average"):
            gz = gz / self._counts(x.shape[-2:], out_hw)
        output_storage[0][0] = self._input_grad(x, out_hw, lambda rows, cols: gz)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, _ = inputs
        (g,) = gouts
        return [zeros_like(x), Pool(*self._props())(g)]


def _alias(new, old, new_name: str, old_name: str):
    if old is None:
        return new
    if new is not None:
        raise ValueError(f"pool_2d: give {new_name} or its old name {old_name}, not both")
    warnings.warn(f"pool_2d: {old_name} is deprecated; use {new_name}", DeprecationWarning,
                  stacklevel=3)  # fmt: skip
    return old


def pool_2d(
    input: TensorLike,
    ws: Sequence[int] | None = None,
    ignore_border: bool | None = None,
    stride: Sequence[int] | None = None,
    pad: Sequence[int] = (0, 0),
    mode: str = "max",
    ds: Sequence[int] | None = None,
    st: Sequence[int] | None = None,
    padding: Sequence[int] | None = None,
):
    """Theano's ``pool_2d``: pool the last two axes of ``input``.

    ``ds``, ``st`` and ``padding`` are the deprecated names of ``ws``, ``stride`` and ``pad``.
    ``ignore_border=None`` means False with a warning, as in Theano.
    """
    ws = _alias(ws, ds, "ws", "ds")
    stride = _alias(stride, st, "stride", "st")
    if padding is not None:
        pad = _alias(None if tuple(pad) == (0, 0) else pad, padding, "pad", "padding")
    if ws is None:
        raise ValueError("pool_2d: ws (the window shape) is required")
    if ignore_border is None:
        warnings.warn("pool_2d: ignore_border was not given; it defaults to False as in Theano "
                      "(pass ignore_border=True for the faster, border-free pooling)",
                      UserWarning, stacklevel=2)  # fmt: skip
        ignore_border = False
    return Pool(ws, ignore_border, stride, pad, mode)(input)


# ------------------------------------------------------------------ R_op rules


def _pool_rop(node: Apply, eval_points: list[Variable | None]):
    """Max pooling passes each window's maximum's tangent (``MaxPoolGradGrad`` gathers it);
    sum and average pooling are linear."""
    (v,) = eval_points
    if v is None:
        return [None]
    op = node.op
    if op.mode == "max":
        return [MaxPoolGradGrad(*op._props())(node.inputs[0], node.outputs[0], v)]
    return [op(v)]


def _last_input_linear(node: Apply, eval_points: list[Variable | None]):
    """``MaxPoolGrad``, ``MaxPoolGradGrad``, ``AveragePoolGrad``: linear in their last input
    (a gradient) and piecewise constant in the others (which select the windows' maxima or
    only give the shape)."""
    v = eval_points[-1]
    if v is None:
        return [None]
    return [node.op(*node.inputs[:-1], v)]


register_rop(Pool)(_pool_rop)
register_rop(MaxPoolGrad, MaxPoolGradGrad, AveragePoolGrad)(_last_input_linear)
