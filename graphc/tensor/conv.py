"""2-d convolution over NCHW batches (``graphc.tensor.nnet.conv2d``) and its gradient Ops.

The numpy implementation is im2col + one BLAS matrix product: the input's windows are
gathered into a ``(batch * out_rows * out_cols, channels * k_rows * k_cols)`` workspace
that is multiplied by the filters seen as a matrix. The gradient w.r.t. the input scatters
the product of the output gradient and the filters back over the windows (col2im).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from graphc.graph.basic import Apply, Op
from graphc.tensor.basic import _i64, _make_shape_vector, _static_int, shape_tuple, specify_shape
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

__all__ = ["Conv2d", "Conv2dGradInputs", "Conv2dGradWeights", "conv2d", "conv_output_length"]

_FLOATS = ("float32", "float64")
# The C implementation (graphc/linker/c/gen_conv.py) gathers as many images per BLAS call
# as fit a columns buffer of C_CHUNK_BYTES (at least one): the columns are written and
# read back from the core's L2 cache (2 MiB here; an 8 MiB buffer ran 1.5-2x slower, and
# 512 KiB made tiles of 2 float64 rows of 56 positions, too short a product).
C_CHUNK_BYTES = 1 << 20
# Images of at least C_BATCH_BELOW output positions go one at a time: the products then
# read and write the images' own planes, with no copy between them and a chunk's matrix.
C_BATCH_BELOW = 256
# The weight gradient's columns buffer when images are batched (fewer than C_BATCH_BELOW
# positions): its products accumulate into the (F, C*KH*KW) gradient, which stays in L2
# beside it; on LeNet's layer 2 (8x8 outputs) 512 KiB ran 7-10% faster than 1 MiB in
# float64 and 3-4% in float32. Larger images keep C_CHUNK_BYTES (no gain measured there,
# and half as many BLAS calls to share among its threads).
C_WGRAD_CHUNK_BYTES = 1 << 19
# Winograd F(2x2, 3x3) (graphc/linker/c/winograd.py) runs 3x3 stride-1 undilated
# forward and input-gradient convolutions of at least WINO_MIN_CHANNELS channels on each
# side (fewer make the 16 products too thin for the transforms to pay), in chunks of tiles
# whose transformed inputs and products fit WINO_BYTES (in L2 beside the filters).
WINO_BYTES = 1 << 20
WINO_MIN_CHANNELS = 4
# ... and the weight gradients of those convolutions in these dtypes: 25-40% faster than
# im2col in float64 on the VGG-like layers; in float32 0.79-0.95x im2col's time on an AMD
# EPYC (Zen 4; four runs of 9 interleaved rounds, one BLAS thread), where on an Intel Xeon
# (Sapphire Rapids) the transforms had eaten the gain of OpenBLAS's twice-as-fast float32
# products.
WINO_WGRAD_DTYPES = ("float64", "float32")
_MODES = ("valid", "full", "half")


def _pair(value: int | Sequence[int], what: str, minimum: int) -> tuple[int, int]:
    if isinstance(value, int | np.integer):
        value = (value, value)
    try:
        a, b = (int(v) for v in value)
    except (TypeError, ValueError):
        raise TypeError(f"conv2d: {what} must be an int or a pair of ints, got {value!r}") from None
    if a < minimum or b < minimum:
        raise ValueError(f"conv2d: {what} must be >= {minimum}, got {value!r}")
    return a, b


def _border(border_mode) -> str | tuple[int, int]:
    if isinstance(border_mode, str):
        if border_mode not in _MODES:
            raise ValueError(
                f"conv2d: border_mode must be one of {_MODES}, an int or a pair of ints; "
                f"got {border_mode!r}"
            )
        return border_mode
    return _pair(border_mode, "border_mode", 0)


def _pads(border, k_shape: Sequence[int], dilation) -> tuple[int, int]:
    """Zero padding on each side of each spatial axis for ``k_shape`` filters."""
    if isinstance(border, tuple):
        return border
    dil = [(k - 1) * d + 1 for k, d in zip(k_shape, dilation)]
    if border == "valid":
        return 0, 0
    if border == "full":
        return dil[0] - 1, dil[1] - 1
    return dil[0] // 2, dil[1] // 2


def conv_output_length(size, k: int, pad: int, stride: int, dilation: int):
    """Output length of one axis (works on ints and on symbolic scalars)."""
    return (size + 2 * pad - ((k - 1) * dilation + 1)) // stride + 1


class _ConvOp(Op):
    """Shared parameters of the convolution and its gradients."""

    __props__ = ("border_mode", "subsample", "filter_flip", "filter_dilation")

    def __init__(
        self,
        border_mode: str = "valid",
        subsample: Sequence[int] = (1, 1),
        filter_flip: bool = True,
        filter_dilation: Sequence[int] = (1, 1),
    ):
        self.border_mode = _border(border_mode)
        self.subsample = _pair(subsample, "subsample", 1)
        self.filter_flip = bool(filter_flip)
        self.filter_dilation = _pair(filter_dilation, "filter_dilation", 1)

    def __str__(self) -> str:
        return (f"{type(self).__name__}{{{self.border_mode}, {self.subsample}, "
                f"flip={self.filter_flip}, dil={self.filter_dilation}}}")  # fmt: skip

    def _check4(self, v: TensorLike, what: str):
        v = as_tensor_variable(v)
        if v.ndim != 4:
            raise TypeError(f"{self}: {what} must be a 4-d tensor, got {v} of type {v.type}")
        if v.dtype not in _FLOATS:
            raise TypeError(f"{self}: {what} must be float32 or float64, got {v.type}")
        return v

    def _grad_node(
        self, operand: tuple, topgrad: Variable, hw: tuple, static_shape: Callable
    ) -> Apply:
        """The Apply of a gradient Op ``(operand, output gradient, (h, w))``: ``operand`` and
        ``hw`` are (value, name for errors) pairs; ``static_shape(operand's static shape,
        the output gradient's)`` is the result's."""
        other, top = self._check4(*operand), self._check4(topgrad, "output gradient")
        hw_var = _check_hw(self, *hw)
        dtype = str(np.result_type(other.dtype, top.dtype))
        shape = static_shape(other.type.shape, top.type.shape)
        return Apply(self, [other, top, hw_var], [TensorType(dtype, shape)()])

    def _geometry(self, k_shape: Sequence[int]):
        pads = _pads(self.border_mode, k_shape, self.filter_dilation)
        return pads, self.subsample, self.filter_dilation

    def _windows(self, x: np.ndarray, k_shape: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:
        """A view of shape ``(N, C, OH, OW, KH, KW)``: the zero-padded input's windows."""
        (ph, pw), (sh, sw), (dh, dw) = self._geometry(k_shape)
        if ph or pw:
            xp = np.zeros(x.shape[:2] + (x.shape[2] + 2 * ph, x.shape[3] + 2 * pw), x.dtype)
            xp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]] = x
        else:
            xp = x
        kh, kw = k_shape
        span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
        win = sliding_window_view(xp, span, axis=(2, 3))[..., ::dh, ::dw]
        return win[:, :, : (out_hw[0] - 1) * sh + 1 : sh, : (out_hw[1] - 1) * sw + 1 : sw]

    def _out_hw(self, in_hw: Sequence[int], k_shape: Sequence[int]) -> tuple[int, int]:
        pads, strides, dil = self._geometry(k_shape)
        return tuple(  # type: ignore[return-value]
            conv_output_length(in_hw[i], k_shape[i], pads[i], strides[i], dil[i]) for i in (0, 1)
        )

    def _cols(self, x: np.ndarray, k_shape: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:
        """The im2col workspace: ``(N * OH * OW, C * KH * KW)``, C-contiguous."""
        win = self._windows(x, k_shape, out_hw).transpose(0, 2, 3, 1, 4, 5)
        return np.ascontiguousarray(win).reshape(win.shape[0] * out_hw[0] * out_hw[1], -1)

    def _wmat(self, w: np.ndarray) -> np.ndarray:
        """Filters as an ``(F, C * KH * KW)`` correlation matrix (flipped if convolving)."""
        if self.filter_flip:
            w = w[:, :, ::-1, ::-1]
        return np.ascontiguousarray(w).reshape(w.shape[0], -1)

    @staticmethod
    def _scratch(
        node: Apply,
        n: int,
        f: int,
        taps: int,
        oh: int,
        ow: int,
        c_impl: bool,
        chunk: int = C_CHUNK_BYTES,
    ) -> int:
        """numpy: every image's columns at once; C: one chunk's columns (at most ``chunk``
        bytes), the chunk's (F, positions) product (none for one image a chunk, whose
        output rows go in tiles and whose products use the image's plane) and the filters
        (or their gradient) as a matrix."""
        size = _itemsize(node)
        positions = oh * ow
        if not c_impl:
            return n * taps * positions * size
        batch = max(min(n, chunk // max(taps * positions * size, 1)), 1)
        if positions >= C_BATCH_BELOW or batch == 1:
            rows = max(min(oh, chunk // max(taps * ow * size, 1)), 1)
            return (taps * rows * ow + f * taps) * size
        cols = batch * positions
        return (taps * cols + f * cols + f * taps) * size

    def _winograd(self, ci: int, fo: int, k_shape: Sequence[int], transposed: bool) -> bool:
        """Whether the C runs this forward (or, ``transposed``, input-gradient) convolution
        with Winograd F(2x2, 3x3) (the rule of gen_conv.c's ``graphc_conv_wino_ok``)."""
        if tuple(k_shape) != (3, 3) or self.subsample != (1, 1) or self.filter_dilation != (1, 1):
            return False
        pads = _pads(self.border_mode, k_shape, self.filter_dilation)
        return min(ci, fo) >= WINO_MIN_CHANNELS and (not transposed or max(pads) <= 2)

    @staticmethod
    def _wino_scratch(
        node: Apply, n: int, ci: int, fo: int, oh: int, ow: int, filter_matrix: bool = True
    ) -> int:
        """Winograd's scratch (winograd.py): the filters as a matrix (unless not
        ``filter_matrix``: the weight gradient) and transformed, one chunk of tile rows'
        transformed inputs and products (or output gradients), two rows."""
        size = _itemsize(node)
        tw, rows = (ow + 1) // 2, n * ((oh + 1) // 2)
        chunk = min(max(WINO_BYTES // (16 * (ci + fo) * tw * size), 1), max(rows, 1)) * tw
        values = 16 * fo * ci + 16 * (ci * chunk + 16 + fo * chunk + 16)
        values += 9 * fo * ci if filter_matrix else 0
        return (values + 8 * (2 * tw + 2)) * size

    def _shape_error(self, what: str, in_hw: Sequence[int], k_shape: Sequence[int]):
        return ValueError(
            f"{self}: {what}: input {tuple(in_hw)} with filters {tuple(k_shape)} gives no output "
            "(the padded input is smaller than the dilated filter)"
        )


def _itemsize(node: Apply) -> int:
    return np.dtype(node.outputs[0].type.dtype).itemsize


def _unflip(g: np.ndarray, flip: bool) -> np.ndarray:
    return g[:, :, ::-1, ::-1] if flip else g


class Conv2d(_ConvOp):
    """``conv2d(input, filters)``: (N, C, H, W) x (F, C, KH, KW) -> (N, F, OH, OW)."""

    def make_node(self, img: Variable, kern: Variable) -> Apply:
        img, kern = self._check4(img, "input"), self._check4(kern, "filters")
        c1, c2 = img.type.shape[1], kern.type.shape[1]
        if c1 is not None and c2 is not None and c1 != c2:
            raise ValueError(
                f"{self}: input has {c1} channels but filters expect {c2} ({img.type}, {kern.type})"
            )
        dtype = str(np.result_type(img.dtype, kern.dtype))
        shape = (img.type.shape[0], kern.type.shape[0], None, None)
        return Apply(self, [img, kern], [TensorType(dtype, shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, w = inputs
        if x.shape[1] != w.shape[1]:
            raise ValueError(f"{self}: input has {x.shape[1]} channels, filters {w.shape[1]}")
        dtype = node.outputs[0].type.dtype
        out_hw = self._out_hw(x.shape[2:], w.shape[2:])
        if min(out_hw) <= 0:
            raise self._shape_error("no output", x.shape[2:], w.shape[2:])
        n, f = x.shape[0], w.shape[0]
        cols = self._cols(x.astype(dtype, copy=False), w.shape[2:], out_hw)
        prod = cols @ self._wmat(w.astype(dtype, copy=False)).T  # (N*OH*OW, F)
        out = prod.reshape(n, out_hw[0], out_hw[1], f).transpose(0, 3, 1, 2)
        output_storage[0][0] = np.ascontiguousarray(out)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        (n, _, h, w), (f, _, kh, kw) = shapes
        k = [kh if _static(kh) is None else _static(kh), kw if _static(kw) is None else _static(kw)]
        return [(n, f, *_symbolic_hw(self, (h, w), k))]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        (_, c, _, _), (_, _, kh, kw) = input_shapes
        return 2.0 * float(np.prod(output_shapes[0])) * c * kh * kw

    def workspace_bytes(
        self,
        node: Apply,
        input_shapes: list[tuple[Any, ...]],
        output_shapes: list[tuple[Any, ...]],
        c_impl: bool = False,
    ) -> int:
        """Bytes of scratch one call allocates besides its output (im2col columns)."""
        (_, c, _, _), (f, _, kh, kw) = input_shapes
        n, _, oh, ow = output_shapes[0]
        if c_impl and self._winograd(c, f, (kh, kw), transposed=False):
            return self._wino_scratch(node, n, c, f, oh, ow)
        return self._scratch(node, n, f, c * kh * kw, oh, ow, c_impl)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, w = inputs
        (g,) = gouts
        params = self._props()
        gx = Conv2dGradInputs(*params)(w, g, _spatial(x))
        gw = Conv2dGradWeights(*params)(x, g, _spatial(w))
        return [gx, gw]


def _static(v) -> int | None:
    return _static_int(v)


def _symbolic_hw(op: _ConvOp, in_hw: Sequence[int], k_hw: Sequence[int]):
    """Output rows and columns for filter sizes known only at run time."""
    (sh, sw), (dh, dw) = op.subsample, op.filter_dilation
    out = []
    for size, k, s, d in zip(in_hw, k_hw, (sh, sw), (dh, dw)):
        span = (k - 1) * d + 1
        if op.border_mode == "valid":
            pad2 = 0
        elif op.border_mode == "full":
            pad2 = 2 * (span - 1)
        elif op.border_mode == "half":
            pad2 = 2 * (span // 2)
        else:
            pad2 = 2 * op.border_mode[len(out)]
        out.append((size + pad2 - span) // s + 1)
    return out


def _spatial(v):
    """The last two entries of ``v``'s shape as an int64 vector."""
    return _make_shape_vector(shape_tuple(v)[2:])


def _check_hw(op: Op, hw: Sequence[int], what):
    hw = as_tensor_variable(hw)
    if hw.ndim != 1 or hw.dtype not in ("int32", "int64"):
        raise TypeError(f"{op}: {what} must be an integer vector of length 2, got {hw.type}")
    return hw


class Conv2dGradInputs(_ConvOp):
    """Gradient of ``Conv2d`` w.r.t. its input: ``(filters, out_grad, input_hw) -> input_grad``."""

    def make_node(self, kern: Variable, topgrad: Variable, input_hw: Variable) -> Apply:
        return self._grad_node(
            (kern, "filters"),
            topgrad,
            (input_hw, "input_hw"),
            lambda k, t: (t[0], k[1], None, None),
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        w, top, hw = inputs
        dtype = node.outputs[0].type.dtype
        h, wd = (int(v) for v in hw)
        k_shape = w.shape[2:]
        out_hw = self._out_hw((h, wd), k_shape)
        n, f = top.shape[:2]
        if top.shape[2:] != tuple(out_hw) or f != w.shape[0]:
            raise ValueError(
                f"{self}: output gradient of shape {top.shape} does not match input size "
                f"{(h, wd)} and filters {w.shape} (expected {(n, w.shape[0], *out_hw)})"
            )
        (ph, pw), (sh, sw), (dh, dw) = self._geometry(k_shape)
        c, kh, kw = w.shape[1:]
        top_mat = np.ascontiguousarray(top.transpose(0, 2, 3, 1)).reshape(-1, f)
        dcols = top_mat.astype(dtype, copy=False) @ self._wmat(w.astype(dtype, copy=False))
        dcols = dcols.reshape(n, out_hw[0], out_hw[1], c, kh, kw).transpose(0, 3, 1, 2, 4, 5)
        # Rows and columns past the last window get no gradient: the padded buffer covers them.
        hp = max(h + 2 * ph, (kh - 1) * dh + (out_hw[0] - 1) * sh + 1)
        wp = max(wd + 2 * pw, (kw - 1) * dw + (out_hw[1] - 1) * sw + 1)
        gx = np.zeros((n, c, hp, wp), dtype)
        for i in range(kh):
            rows = slice(i * dh, i * dh + (out_hw[0] - 1) * sh + 1, sh)
            for j in range(kw):
                cols = slice(j * dw, j * dw + (out_hw[1] - 1) * sw + 1, sw)
                gx[:, :, rows, cols] += dcols[..., i, j]
        output_storage[0][0] = np.ascontiguousarray(gx[:, :, ph : ph + h, pw : pw + wd])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        hw = node.inputs[2]
        return [(shapes[1][0], shapes[0][1], hw[_i64(0)], hw[_i64(1)])]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        (f, c, kh, kw), top, _ = input_shapes
        return 2.0 * float(np.prod(top)) * c * kh * kw

    def workspace_bytes(
        self,
        node: Apply,
        input_shapes: list[tuple[Any, ...]],
        output_shapes: list[tuple[Any, ...]],
        c_impl: bool = False,
    ) -> int:
        """Bytes of scratch one call allocates besides its output: the column gradient
        (and in numpy the padded input gradient)."""
        (f, c, kh, kw), (n, _, oh, ow), _ = input_shapes
        if c_impl and self._winograd(c, f, (kh, kw), transposed=True):
            _, _, h, w = output_shapes[0]
            return self._wino_scratch(node, n, f, c, h, w)
        cols = self._scratch(node, n, f, c * kh * kw, oh, ow, c_impl)
        if c_impl:
            return cols
        return cols + int(np.prod(output_shapes[0])) * _itemsize(node)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        w, top, hw = inputs
        (g,) = gouts
        params = self._props()
        return [Conv2dGradWeights(*params)(g, top, _spatial(w)), Conv2d(*params)(g, w), None]


class Conv2dGradWeights(_ConvOp):
    """Gradient of ``Conv2d`` w.r.t. its filters: ``(input, out_grad, filter_hw) -> grad``."""

    def make_node(self, img: Variable, topgrad: Variable, filter_hw: Variable) -> Apply:
        return self._grad_node(
            (img, "input"), topgrad, (filter_hw, "filter_hw"), lambda i, t: (t[1], i[1], None, None)
        )

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, top, hw = inputs
        dtype = node.outputs[0].type.dtype
        k_shape = tuple(int(v) for v in hw)
        out_hw = self._out_hw(x.shape[2:], k_shape)
        n, f = top.shape[:2]
        if top.shape[2:] != tuple(out_hw) or n != x.shape[0]:
            raise ValueError(
                f"{self}: output gradient of shape {top.shape} does not match input "
                f"{x.shape} and filter size {k_shape} (expected {(x.shape[0], f, *out_hw)})"
            )
        cols = self._cols(x.astype(dtype, copy=False), k_shape, out_hw)
        top_mat = np.ascontiguousarray(top.transpose(0, 2, 3, 1)).reshape(-1, f)
        gw = (top_mat.astype(dtype, copy=False).T @ cols).reshape(f, x.shape[1], *k_shape)
        output_storage[0][0] = np.ascontiguousarray(_unflip(gw, self.filter_flip))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        hw = node.inputs[2]
        return [(shapes[1][1], shapes[0][1], hw[_i64(0)], hw[_i64(1)])]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        _, top, _ = input_shapes
        (_, c, kh, kw) = output_shapes[0]
        return 2.0 * float(np.prod(top)) * c * kh * kw

    def workspace_bytes(
        self,
        node: Apply,
        input_shapes: list[tuple[Any, ...]],
        output_shapes: list[tuple[Any, ...]],
        c_impl: bool = False,
    ) -> int:
        """Bytes of scratch one call allocates besides its output (im2col columns, or
        Winograd's transformed inputs and output gradients)."""
        _, top, _ = input_shapes
        (f, c, kh, kw) = output_shapes[0]
        n, _, oh, ow = top
        if c_impl and self._winograd_wgrad(node, c, f, (kh, kw)):
            return self._wino_scratch(node, n, c, f, oh, ow, filter_matrix=False)
        chunk = C_WGRAD_CHUNK_BYTES if oh * ow < C_BATCH_BELOW else C_CHUNK_BYTES
        return self._scratch(node, n, f, c * kh * kw, oh, ow, c_impl, chunk)

    def _winograd_wgrad(self, node: Apply, c: int, f: int, k_shape: Sequence[int]) -> bool:
        """Whether the C forms this weight gradient with Winograd F(2x2, 3x3)."""
        dtype = node.outputs[0].type.dtype
        return dtype in WINO_WGRAD_DTYPES and self._winograd(c, f, k_shape, transposed=False)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, top, hw = inputs
        (g,) = gouts
        params = self._props()
        return [Conv2dGradInputs(*params)(g, top, _spatial(x)), Conv2d(*params)(x, g), None]


def conv2d(
    input: TensorLike,
    filters: TensorLike,
    input_shape: Sequence[int | None] | None = None,
    filter_shape: Sequence[int | None] | None = None,
    border_mode: str = "valid",
    subsample: Sequence[int] = (1, 1),
    filter_flip: bool = True,
    image_shape: Sequence[int | None] | None = None,
    filter_dilation: Sequence[int] = (1, 1),
    num_groups: int = 1,
    unshared: bool = False,
    **kwargs: Any,
):
    """Theano's ``conv2d``: a batch of NCHW images convolved with (F, C, KH, KW) filters.

    ``border_mode`` is ``"valid"``, ``"full"``, ``"half"``, an int or a pair of ints (zero
    padding); ``filter_flip=True`` is a true convolution, ``False`` a cross-correlation.
    ``input_shape``/``filter_shape`` (or the older ``image_shape``) are optional hints: known
    sizes are checked and become static shapes.
    """
    if kwargs:
        raise TypeError(f"conv2d: unexpected arguments {sorted(kwargs)}")
    if num_groups != 1:
        raise NotImplementedError("conv2d: grouped convolution (num_groups != 1)")
    if unshared:
        raise NotImplementedError("conv2d: unshared (locally connected) convolution")
    if input_shape is None:
        input_shape = image_shape
    x, w = as_tensor_variable(input), as_tensor_variable(filters)
    for hint, what in ((input_shape, "input_shape"), (filter_shape, "filter_shape")):
        if hint is not None and len(tuple(hint)) != 4:
            raise ValueError(f"conv2d: {what} must have 4 entries, got {hint!r}")
    if input_shape is not None and x.ndim == 4:
        x = specify_shape(x, [_hint(s, x, k) for k, s in enumerate(input_shape)])
    if filter_shape is not None and w.ndim == 4:
        w = specify_shape(w, [_hint(s, w, k) for k, s in enumerate(filter_shape)])
    return Conv2d(border_mode, subsample, filter_flip, filter_dilation)(x, w)


def _hint(size, v, axis: int):
    return shape_tuple(v)[axis] if size is None else int(size)
