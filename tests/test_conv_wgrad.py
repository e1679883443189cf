"""The C gradient of conv2d w.r.t. the filters: Winograd F(2x2, 3x3) in float64 (3x3,
stride 1, no dilation, at least 4 channels each side), im2col + gemm otherwise (in float32
the product transposed), over one and several chunks, against the direct-loop numpy
reference and the numpy ``perform``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_conv import conv_cases, ref_conv, ref_conv_grads

import graphc
import graphc.tensor as T
from graphc.tensor.conv import (
    C_CHUNK_BYTES,
    C_WGRAD_CHUNK_BYTES,
    WINO_BYTES,
    WINO_WGRAD_DTYPES,
    Conv2dGradWeights,
)
from graphc.tensor.nnet import conv2d

C_MODE = graphc.Mode(linker="c|py", optimizer="fast_run")
PY_MODE = graphc.Mode(linker="py", optimizer=None)
TOL = {"float32": 2e-6, "float64": 1e-13}


def _wgrad(dtype, border, stride, dil, flip, k_hw, mode=C_MODE):
    x, g = T.tensor4("x", dtype=dtype), T.tensor4("g", dtype=dtype)
    hw = T.as_tensor_variable(np.array(k_hw, "int64"))
    op = Conv2dGradWeights(border, stride, flip, dil)
    f = graphc.function([x, g], op(x, g, hw), mode=mode)
    kinds = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert kinds == {"Conv2dGradWeights"}
    return f


def _relative_error(got, want):
    return float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))


def _check(xv, wv, gv, border, stride, dil, flip, dtype):
    _, want = ref_conv_grads(xv, wv, gv, border, stride, dil, flip)
    f = _wgrad(dtype, border, stride, dil, flip, wv.shape[2:])
    got = f(xv.astype(dtype), gv.astype(dtype))
    assert got.dtype == np.dtype(dtype) and got.shape == wv.shape
    assert _relative_error(got, want) < TOL[dtype]


@settings(max_examples=20, deadline=None)
@given(conv_cases(), st.sampled_from(["float32", "float64"]))
def test_any_geometry_matches_direct_loops(case, dtype):
    xv, wv, border, stride, dil, flip = case
    gv = np.random.default_rng(1).standard_normal(ref_conv(xv, wv, border, stride, dil, flip).shape)
    _check(xv, wv, gv, border, stride, dil, flip, dtype)


@st.composite
def winograd_cases(draw):
    """3x3, stride 1, undilated, 4 to 9 channels each side: odd and even output sizes
    (a last tile row or column half outside), outputs smaller than a tile, any border."""
    n, c, f = draw(st.integers(1, 3)), draw(st.integers(4, 9)), draw(st.integers(4, 9))
    border = draw(
        st.sampled_from(["valid", "full", "half"]) | st.tuples(st.integers(0, 3), st.integers(0, 3))
    )
    pads = {"valid": (0, 0), "full": (2, 2), "half": (1, 1)}.get(border, border)
    h = draw(st.integers(max(1, 3 - 2 * pads[0]), 10))
    w = draw(st.integers(max(1, 3 - 2 * pads[1]), 10))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    xv, wv = rng.standard_normal((n, c, h, w)), rng.standard_normal((f, c, 3, 3))
    return xv, wv, border, draw(st.booleans())


@settings(max_examples=25, deadline=None)
@given(winograd_cases(), st.sampled_from(["float32", "float64"]))
def test_winograd_geometry_matches_direct_loops(case, dtype):
    xv, wv, border, flip = case
    one = (1, 1)
    gv = np.random.default_rng(2).standard_normal(ref_conv(xv, wv, border, one, one, flip).shape)
    _check(xv, wv, gv, border, one, one, flip, dtype)


def test_several_chunks_of_winograd_tile_rows():
    """64 -> 64 channels of 16x16 float64: 1 MiB // (16 * 128 * 8 tiles * 8 B) = 8 tile rows
    a chunk, 3 images of 8 tile rows: 3 chunks summed into one gradient."""
    assert WINO_BYTES == 1 << 20 and "float64" in WINO_WGRAD_DTYPES
    rng = np.random.default_rng(11)
    xv, wv = rng.standard_normal((3, 64, 16, 16)), rng.standard_normal((64, 64, 3, 3))
    gv = rng.standard_normal((3, 64, 16, 16))
    _check(xv, wv, gv, "half", (1, 1), (1, 1), True, "float64")


@pytest.mark.parametrize(
    "x_shape, k",
    [
        # 100 positions; an image's float32 columns are 144 * 100 * 4 B = 57.6 KB: chunks of
        # 9 images in 512 KiB, so 40 images make 4 * 9 + 4
        ((40, 16, 12, 12), 3),
        # 146 * 146 positions: one image a chunk in tiles of 1 MiB // (100 * 146 * 8 B)
        # = 8 output rows (float64; 17 in float32), 18 * 8 + 2
        ((2, 4, 150, 150), 5),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_im2col_over_several_chunks_matches_numpy(x_shape, k, dtype):
    assert C_WGRAD_CHUNK_BYTES == 1 << 19 and C_CHUNK_BYTES == 1 << 20
    rng = np.random.default_rng(7)
    xv = rng.standard_normal(x_shape).astype(dtype)
    gv = rng.standard_normal((x_shape[0], 3, x_shape[2] - k + 1, x_shape[3] - k + 1))
    gv = gv.astype(dtype)
    fc = _wgrad(dtype, "valid", (1, 1), (1, 1), True, (k, k))
    fp = _wgrad(dtype, "valid", (1, 1), (1, 1), True, (k, k), PY_MODE)
    want = fp(xv, gv)
    assert _relative_error(fc(xv, gv), want) < TOL[dtype]


def test_float64_winograd_error_stays_near_im2col():
    """On a VGG-like layer the Winograd gradient's error against a float64 reference computed
    in another order (numpy, exact products of float32 data summed in float64) is at most 4x
    that of numpy's im2col + gemm."""
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((4, 64, 12, 12)).astype("float32").astype("float64")
    gv = rng.standard_normal((4, 64, 12, 12)).astype("float32").astype("float64")
    _, exact = ref_conv_grads(xv, np.zeros((64, 64, 3, 3)), gv, "half", (1, 1), (1, 1), True)
    wino = _wgrad("float64", "half", (1, 1), (1, 1), True, (3, 3))(xv, gv)
    numpy = _wgrad("float64", "half", (1, 1), (1, 1), True, (3, 3), PY_MODE)(xv, gv)
    assert _relative_error(wino, exact) < max(4 * _relative_error(numpy, exact), 1e-14)


def test_float32_winograd_error_stays_near_im2col():
    """The same in float32: the Winograd gradient's error against the float64 gradient of
    the same data is at most 4x that of numpy's float32 im2col + gemm."""
    rng = np.random.default_rng(6)
    xv = rng.standard_normal((4, 64, 12, 12)).astype("float32")
    gv = rng.standard_normal((4, 64, 12, 12)).astype("float32")
    exact = _wgrad("float64", "half", (1, 1), (1, 1), True, (3, 3), PY_MODE)(
        xv.astype("float64"), gv.astype("float64")
    )
    wino = _wgrad("float32", "half", (1, 1), (1, 1), True, (3, 3))(xv, gv)
    numpy = _wgrad("float32", "half", (1, 1), (1, 1), True, (3, 3), PY_MODE)(xv, gv)
    assert _relative_error(wino, exact) < 4 * _relative_error(numpy, exact)


def test_workspace_follows_the_path_the_c_takes():
    shapes, top = [(32, 64, 56, 56), (32, 64, 56, 56), (2,)], (64, 64, 3, 3)
    for dtype, size in (("float64", 8), ("float32", 4)):
        x, w = T.tensor4("x", dtype=dtype), T.tensor4("w", dtype=dtype)
        node = graphc.grad(conv2d(x, w, border_mode="half").sum(), w).owner
        assert isinstance(node.op, Conv2dGradWeights)
        got = node.op.workspace_bytes(node, shapes, [top], c_impl=True)
        assert dtype in WINO_WGRAD_DTYPES
        # 28 tiles a row; 1 MiB // (16 * 128 * 28 * size) = 2 tile rows (float64; 4 in
        # float32) = 56 (112) tiles a chunk: filters' gradient transformed (16 values), the
        # chunk's transformed inputs and output gradients (each of 16 matrices a cache line
        # longer), 8 rows
        tiles = (1 << 20) // (16 * 128 * 28 * size) * 28
        values = 16 * 64 * 64 + 16 * (64 * tiles + 16) * 2 + 8 * 58
        assert got == values * size
    # a 5x5 filter: im2col, one image a chunk: 1 MiB // (1600 * 52 * 4 B) = 3 output rows
    # of columns, the (F, C*25) gradient
    x, w = T.tensor4("x", dtype="float32"), T.tensor4("w", dtype="float32")
    node = graphc.grad(conv2d(x, w).sum(), w).owner
    got = node.op.workspace_bytes(node, [(32, 64, 56, 56), (32, 64, 52, 52), (2,)],
                                  [(64, 64, 5, 5)], c_impl=True)  # fmt: skip
    assert got == (1600 * 3 * 52 + 64 * 1600) * 4
