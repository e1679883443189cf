"""The C's Winograd F(2x2, 3x3) path (3x3 filters, stride 1, no dilation, at least 4
channels each side) for the forward convolution and the input gradient: against the
direct-loop numpy reference, the numpy im2col ``perform``, and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from test_conv import ref_conv, ref_conv_grads

import graphc
import graphc.tensor as T
from graphc.tensor.conv import Conv2dGradInputs, Conv2dGradWeights
from graphc.tensor.nnet import conv2d

C_MODE = graphc.Mode(linker="c|py", optimizer="fast_run")
PY_MODE = graphc.Mode(linker="py", optimizer=None)
TOL = {"float32": 2e-6, "float64": 1e-13}

# (n, c, h, w, f, border): odd and even sizes (a last tile row or column half outside),
# images smaller than a tile, every border mode, explicit paddings up to 3 (the input
# gradient of a padding above 2 is not a Winograd convolution: im2col runs it).
CASES = [
    (2, 5, 7, 9, 6, "half"),
    (1, 4, 6, 6, 4, "valid"),
    (2, 4, 5, 8, 5, "full"),
    (1, 6, 9, 7, 4, (2, 1)),
    (3, 8, 4, 4, 8, (0, 2)),
    (1, 4, 3, 3, 4, "valid"),
    (2, 4, 1, 2, 4, "full"),
    (2, 4, 8, 8, 4, (3, 3)),
]


def _functions(dtype, border, flip, h, w, mode):
    x, k, g = (T.tensor4(n, dtype=dtype) for n in "xkg")
    hw = T.as_tensor_variable(np.array([h, w], "int64"))
    fwd = graphc.function([x, k], conv2d(x, k, border_mode=border, filter_flip=flip), mode=mode)
    gin = graphc.function([k, g], Conv2dGradInputs(border, (1, 1), flip)(k, g, hw), mode=mode)
    return fwd, gin


def _relative_error(got, want):
    return float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flip", [True, False])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_and_input_gradient_match_direct_loops(case, flip, dtype):
    n, c, h, w, f, border = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    xv = rng.standard_normal((n, c, h, w))
    kv = rng.standard_normal((f, c, 3, 3))
    want = ref_conv(xv, kv, border, (1, 1), (1, 1), flip)
    gv = rng.standard_normal(want.shape)
    want_gx, _ = ref_conv_grads(xv, kv, gv, border, (1, 1), (1, 1), flip)
    fwd, gin = _functions(dtype, border, flip, h, w, C_MODE)
    got = fwd(xv.astype(dtype), kv.astype(dtype))
    got_gx = gin(kv.astype(dtype), gv.astype(dtype))
    assert got.dtype == got_gx.dtype == np.dtype(dtype)
    assert got.shape == want.shape and got_gx.shape == xv.shape
    assert _relative_error(got, want) < TOL[dtype]
    assert _relative_error(got_gx, want_gx) < TOL[dtype]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_inputs_match_the_numpy_implementation(dtype):
    rng = np.random.default_rng(7)
    xv = rng.standard_normal((3, 11, 10, 5)).astype(dtype).transpose(0, 3, 2, 1)[:, :, ::-1]
    kv = rng.standard_normal((6, 3, 3, 5)).astype(dtype).transpose(0, 3, 1, 2)[::-1]
    gv = np.asfortranarray(rng.standard_normal((3, 6, 10, 11)).astype(dtype))
    assert not (xv.flags.c_contiguous or kv.flags.c_contiguous or gv.flags.c_contiguous)
    fc, gc = _functions(dtype, "half", True, 10, 11, C_MODE)
    fp, gp = _functions(dtype, "half", True, 10, 11, PY_MODE)
    assert _relative_error(fc(xv, kv), fp(xv, kv)) < TOL[dtype]
    assert _relative_error(gc(kv, gv), gp(kv, gv)) < TOL[dtype]


def test_several_chunks_of_tile_rows_at_vgg_width():
    """64 -> 64 channels of 16x16 float64: 1 MiB // (16 * 128 * 8 tiles * 8 B) = 8 tile rows
    a chunk, 16 tile rows in all."""
    rng = np.random.default_rng(11)
    xv, kv = rng.standard_normal((2, 64, 16, 16)), rng.standard_normal((64, 64, 3, 3)) * 0.1
    gv = rng.standard_normal((2, 64, 16, 16))
    fc, gc = _functions("float64", "half", True, 16, 16, C_MODE)
    want = ref_conv(xv, kv, "half", (1, 1), (1, 1), True)
    want_gx, _ = ref_conv_grads(xv, kv, gv, "half", (1, 1), (1, 1), True)
    assert _relative_error(fc(xv, kv), want) < 1e-13
    assert _relative_error(gc(kv, gv), want_gx) < 1e-13


def test_float32_error_stays_within_a_few_roundings_of_im2col():
    """Winograd's transforms add roundings: on a VGG-like layer its float32 error against
    the float64 result is at most 4x that of the numpy im2col + gemm in float32."""
    rng = np.random.default_rng(5)
    xv, kv = rng.standard_normal((2, 64, 12, 12)), rng.standard_normal((64, 64, 3, 3)) * 0.1
    x32, k32 = xv.astype("float32"), kv.astype("float32")
    exact = ref_conv(x32.astype("float64"), k32.astype("float64"), "half", (1, 1), (1, 1), True)
    fc, _ = _functions("float32", "half", True, 12, 12, C_MODE)
    fp, _ = _functions("float32", "half", True, 12, 12, PY_MODE)
    wino, im2col = _relative_error(fc(x32, k32), exact), _relative_error(fp(x32, k32), exact)
    assert wino < max(4 * im2col, 1e-6)


def test_gradients_match_finite_differences_through_the_c_path():
    """Directional derivatives of ``sum(conv2d(x, w) * r)`` by central differences of the C
    forward (Winograd) against the C gradients (Winograd for the input, im2col for the
    filters)."""
    rng = np.random.default_rng(3)
    x, w = T.dtensor4("x"), T.dtensor4("w")
    xv, wv = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((5, 4, 3, 3))
    r = rng.standard_normal((2, 5, 5, 6))
    cost = (conv2d(x, w, border_mode="half") * r).sum()
    f = graphc.function([x, w], cost, mode=C_MODE)
    g = graphc.function([x, w], graphc.grad(cost, [x, w]), mode=C_MODE)
    gx, gw = g(xv, wv)
    eps = 1e-6
    for _ in range(3):
        dx, dw = rng.standard_normal(xv.shape), rng.standard_normal(wv.shape)
        numeric = (f(xv + eps * dx, wv + eps * dw) - f(xv - eps * dx, wv - eps * dw)) / (2 * eps)
        analytic = float((gx * dx).sum() + (gw * dw).sum())
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic))


def test_winograd_workspace_is_reported_for_the_c_implementation():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    node = conv2d(x, w, border_mode="half").owner
    shapes, out = [(32, 64, 56, 56), (64, 64, 3, 3)], [(32, 64, 56, 56)]
    # 28 tiles a row; 1 MiB // (16 * 128 * 28 * 8 B) = 2 tile rows = 56 tiles a chunk:
    # filters as a matrix (9 values) and transformed (16), inputs and products of a chunk
    # (each of 16 matrices a cache line longer), 8 rows of 58
    values = 64 * 64 * 9 + 16 * 64 * 64 + 16 * (64 * 56 + 16) * 2 + 8 * 58
    assert node.op.workspace_bytes(node, shapes, out, c_impl=True) == values * 8
    gi = graphc.grad(conv2d(x, w, border_mode=(3, 3)).sum(), x).owner
    assert isinstance(gi.op, Conv2dGradInputs)
    # padding 3: the input gradient is im2col's (one image, tiles of output rows)
    top = (32, 64, 60, 60)
    im2col = gi.op.workspace_bytes(gi, [shapes[1], top, (2,)], [shapes[0]], c_impl=True)
    assert im2col == (576 * 3 * 60 + 64 * 576) * 8
    gw = graphc.grad(conv2d(x, w, border_mode="half").sum(), w).owner
    assert isinstance(gw.op, Conv2dGradWeights)
