"""conv2d and its gradient Ops against a direct-loop numpy reference, scipy and finite
differences, under the "py" and "c|py" linkers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import signal

import graphc
import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor.conv import Conv2d, Conv2dGradInputs, Conv2dGradWeights
from graphc.tensor.nnet import conv2d

MODES = {
    "py": graphc.Mode(linker="py", optimizer=None),
    "c|py": graphc.Mode(linker="c|py", optimizer="fast_run"),
}
SETTINGS = settings(max_examples=12, deadline=None)


def ref_pads(border, k_shape, dil):
    spans = [(k - 1) * d + 1 for k, d in zip(k_shape, dil)]
    if border == "valid":
        return (0, 0)
    if border == "full":
        return (spans[0] - 1, spans[1] - 1)
    if border == "half":
        return (spans[0] // 2, spans[1] // 2)
    return tuple(border)


def ref_conv(x, w, border, stride, dil, flip):
    """Direct loops over output positions and filter taps."""
    if flip:
        w = w[:, :, ::-1, ::-1]
    ph, pw = ref_pads(border, w.shape[2:], dil)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, h, wd = xp.shape
    f, c, kh, kw = w.shape
    oh = (h - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (wd - (kw - 1) * dil[1] - 1) // stride[1] + 1
    out = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    patch = xp[:, :, i * stride[0] + a * dil[0], j * stride[1] + b * dil[1]]
                    out[:, :, i, j] += patch @ w[:, :, a, b].T
    return out


def ref_conv_grads(x, w, g, border, stride, dil, flip):
    """Gradients of ``sum(conv(x, w) * g)`` by the same loops, scattered."""
    wf = w[:, :, ::-1, ::-1] if flip else w
    ph, pw = ref_pads(border, w.shape[2:], dil)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    gxp = np.zeros_like(xp)
    gwf = np.zeros_like(wf)
    _, _, oh, ow = g.shape
    kh, kw = w.shape[2:]
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, c = i * stride[0] + a * dil[0], j * stride[1] + b * dil[1]
                    gxp[:, :, r, c] += g[:, :, i, j] @ wf[:, :, a, b]
                    gwf[:, :, a, b] += g[:, :, i, j].T @ xp[:, :, r, c]
    gx = gxp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]
    gw = gwf[:, :, ::-1, ::-1] if flip else gwf
    return gx, gw


@st.composite
def conv_cases(draw):
    n, c, f = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    border = draw(
        st.sampled_from(["valid", "full", "half"]) | st.tuples(st.integers(0, 2), st.integers(0, 2))
    )
    spans = ((kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1)
    h = spans[0] + draw(st.integers(0, 4))
    w = spans[1] + draw(st.integers(0, 4))
    flip = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    xv = rng.standard_normal((n, c, h, w))
    wv = rng.standard_normal((f, c, kh, kw))
    return xv, wv, border, stride, dil, flip


@SETTINGS
@given(conv_cases(), st.sampled_from(sorted(MODES)))
def test_conv2d_and_its_gradients_match_direct_loops(case, mode):
    xv, wv, border, stride, dil, flip = case
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, border_mode=border, subsample=stride, filter_dilation=dil, filter_flip=flip)
    g = T.dtensor4("g")
    cost = (y * g).sum()
    f = graphc.function([x, w, g], [y, *graphc.grad(cost, [x, w])], mode=MODES[mode])
    want = ref_conv(xv, wv, border, stride, dil, flip)
    gv = np.random.default_rng(0).standard_normal(want.shape)
    got, gx, gw = f(xv, wv, gv)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    want_gx, want_gw = ref_conv_grads(xv, wv, gv, border, stride, dil, flip)
    np.testing.assert_allclose(gx, want_gx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gw, want_gw, rtol=1e-10, atol=1e-10)
    shape = graphc.function([x, w], y.shape, mode=MODES[mode])(xv, wv)
    assert tuple(shape) == want.shape


@settings(max_examples=6, deadline=None)
@given(conv_cases())
def test_conv2d_gradients_match_finite_differences(case):
    xv, wv, border, stride, dil, flip = case

    def fn(x, w):
        return conv2d(x, w, border_mode=border, subsample=stride, filter_dilation=dil,
                      filter_flip=flip)  # fmt: skip

    verify_grad(fn, [xv, wv], n_tests=1, rng=1)


def test_gradient_ops_have_gradients_of_their_own():
    rng = np.random.default_rng(3)
    wv, gv = rng.standard_normal((2, 3, 2, 3)), rng.standard_normal((2, 2, 3, 2))
    xv = rng.standard_normal((2, 3, 4, 4))
    params = ("half", (2, 2), True, (1, 1))
    verify_grad(lambda w, g: Conv2dGradInputs(*params)(w, g, [4, 4]), [wv, gv], rng=2)
    verify_grad(lambda x, g: Conv2dGradWeights(*params)(x, g, [2, 3]), [xv, gv], rng=2)


@pytest.mark.parametrize("border", ["valid", "full"])
def test_filter_flip_is_a_true_convolution_as_in_scipy(border):
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((1, 1, 7, 6)), rng.standard_normal((1, 1, 3, 2))
    x, w = T.dtensor4("x"), T.dtensor4("w")
    conv = conv2d(x, w, border_mode=border).eval({x: xv, w: wv})
    corr = conv2d(x, w, border_mode=border, filter_flip=False).eval({x: xv, w: wv})
    np.testing.assert_allclose(conv[0, 0], signal.convolve2d(xv[0, 0], wv[0, 0], border))
    np.testing.assert_allclose(corr[0, 0], signal.correlate2d(xv[0, 0], wv[0, 0], border))


def test_float32_stays_float32_and_matches_float64():
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((3, 2, 8, 8)).astype("float32")
    wv = rng.standard_normal((4, 2, 3, 3)).astype("float32")
    x, w = T.ftensor4("x"), T.ftensor4("w")
    y = conv2d(x, w, border_mode=1, subsample=2)
    got = graphc.function([x, w], y)(xv, wv)
    assert got.dtype == np.float32
    want = ref_conv(xv.astype("float64"), wv.astype("float64"), (1, 1), (2, 2), (1, 1), True)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_shape_hints_become_static_shapes_and_are_checked():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, input_shape=(None, 1, 28, 28), filter_shape=(20, 1, 5, 5))
    assert y.type.shape[1] == 20
    f = graphc.function([x, w], y)
    assert f(np.zeros((2, 1, 28, 28)), np.zeros((20, 1, 5, 5))).shape == (2, 20, 24, 24)
    with pytest.raises(Exception, match="shape"):
        f(np.zeros((2, 1, 27, 28)), np.zeros((20, 1, 5, 5)))
    y_old = conv2d(x, w, image_shape=(2, 1, 28, 28))
    assert y_old.owner is not None


def test_bad_inputs_raise_clear_errors():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    with pytest.raises(TypeError, match="4-d"):
        conv2d(T.dmatrix("m"), w)
    with pytest.raises(ValueError, match="border_mode"):
        conv2d(x, w, border_mode="same")
    with pytest.raises(ValueError, match="subsample"):
        conv2d(x, w, subsample=(0, 1))
    with pytest.raises(TypeError, match="float"):
        conv2d(T.itensor4("i"), w)
    with pytest.raises(NotImplementedError, match="num_groups"):
        conv2d(x, w, num_groups=2)
    with pytest.raises(NotImplementedError, match="unshared"):
        conv2d(x, w, unshared=True)
    with pytest.raises(TypeError, match="unexpected"):
        conv2d(x, w, bogus=1)
    f = graphc.function([x, w], conv2d(x, w))
    with pytest.raises(ValueError, match="channels"):
        f(np.zeros((1, 2, 5, 5)), np.zeros((1, 3, 2, 2)))
    with pytest.raises(ValueError, match="no output"):
        f(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))


def test_flops_and_workspace_are_reported_by_the_ops():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    node = conv2d(x, w).owner
    assert isinstance(node.op, Conv2d)
    shapes = [(500, 1, 28, 28), (20, 1, 5, 5)]
    out = [(500, 20, 24, 24)]
    assert node.op.flops(node, shapes, out) == 2.0 * 500 * 20 * 24 * 24 * 25
    assert node.op.workspace_bytes(node, shapes, out) == 500 * 24 * 24 * 25 * 8
    # C: 576 >= 256 output positions, so one image at a time: its columns and the filters
    c_bytes = (25 * 576 + 20 * 25) * 8
    assert node.op.workspace_bytes(node, shapes, out, c_impl=True) == c_bytes
    # 64 positions: chunks of 1 MiB // (500 * 64 * 8 B) = 4 images: columns, the chunk's
    # (F, positions) product, filters
    shapes, out = [(500, 20, 12, 12), (50, 20, 5, 5)], [(500, 50, 8, 8)]
    chunk = 4 * 64
    c_bytes = (500 * chunk + 50 * chunk + 50 * 500) * 8
    assert node.op.workspace_bytes(node, shapes, out, c_impl=True) == c_bytes
    # one image at a time, its output rows in tiles of 1 MiB // (576 * 56 * 8 B) = 4 rows
    # (3 filters: too few for Winograd, tests/test_conv_winograd.py)
    shapes, out = [(32, 64, 56, 56), (3, 64, 3, 3)], [(32, 3, 56, 56)]
    node = conv2d(x, w, border_mode="half").owner
    c_bytes = (576 * 4 * 56 + 3 * 576) * 8
    assert node.op.workspace_bytes(node, shapes, out, c_impl=True) == c_bytes


def _c_nodes(f):
    return {
        type(node.op).__name__
        for node, impl in zip(f.linked.schedule, f.linked.impls)
        if impl.is_c and type(node.op).__module__ == "graphc.tensor.conv"
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_c_implementation_runs_and_matches_py_on_strided_inputs(dtype):
    rng = np.random.default_rng(5)
    x, w = T.tensor4("x", dtype=dtype), T.tensor4("w", dtype=dtype)
    y = conv2d(x, w, border_mode="half", subsample=(2, 1), filter_dilation=(2, 1))
    outs = [y, *graphc.grad((y * y).sum(), [x, w])]
    fc = graphc.function([x, w], outs, mode=MODES["c|py"])
    fp = graphc.function([x, w], outs, mode=MODES["py"])
    assert _c_nodes(fc) == {"Conv2d", "Conv2dGradInputs", "Conv2dGradWeights"}
    xv = rng.standard_normal((3, 9, 10, 2)).astype(dtype).transpose(0, 3, 1, 2)[:, :, ::-1]
    wv = rng.standard_normal((3, 2, 3, 6)).astype(dtype)[:, :, :, ::2]
    tol = 1e-4 if dtype == "float32" else 1e-11
    for got, want in zip(fc(xv, wv), fp(xv, wv)):
        assert got.dtype == want.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_c_implementation_refuses_bad_shapes_with_python_errors():
    x, w = T.dtensor4("x"), T.dtensor4("w")
    f = graphc.function([x, w], conv2d(x, w), mode=MODES["c|py"])
    assert _c_nodes(f) == {"Conv2d"}
    with pytest.raises(ValueError, match="channels"):
        f(np.zeros((1, 2, 5, 5)), np.zeros((1, 3, 2, 2)))
    with pytest.raises(ValueError, match="no output"):
        f(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))
    g = T.dtensor4("g")
    gi = Conv2dGradInputs("valid", (1, 1), True, (1, 1))(w, g, [5, 5])
    fi = graphc.function([w, g], gi, mode=MODES["c|py"])
    assert _c_nodes(fi) == {"Conv2dGradInputs"}
    with pytest.raises(ValueError, match="does not match"):
        fi(np.zeros((2, 1, 3, 3)), np.zeros((1, 2, 4, 3)))
    empty = f(np.zeros((0, 1, 4, 4)), np.zeros((2, 1, 3, 3)))
    assert empty.shape == (0, 2, 2, 2)


@pytest.mark.parametrize(
    "x_shape",
    [
        # 144 output positions; one image's float64 columns take 144 * 12 * 12 * 8 B = 166 KB:
        # chunks of 6 images in 1 MiB, so 7 images make 6 + 1
        (7, 16, 12, 14),
        # 19600 positions: one image a chunk, the products in the images' planes, its output
        # rows in tiles of 1 MiB // (18 * 140 * 8 B) = 52 rows: 52 + 52 + 36
        (3, 2, 140, 142),
    ],
)
def test_c_implementation_over_several_chunks_of_images(x_shape):
    rng = np.random.default_rng(7)
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, border_mode=(1, 0))
    outs = [y, *graphc.grad((y * y).sum(), [x, w])]
    fc = graphc.function([x, w], outs, mode=MODES["c|py"])
    fp = graphc.function([x, w], outs, mode=MODES["py"])
    assert _c_nodes(fc) == {"Conv2d", "Conv2dGradInputs", "Conv2dGradWeights"}
    xv, wv = rng.standard_normal(x_shape), rng.standard_normal((3, x_shape[1], 3, 3))
    for got, want in zip(fc(xv, wv), fp(xv, wv)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)


@SETTINGS
@given(conv_cases())
def test_infer_shape_gives_the_output_shape_without_computing_it(case):
    from graphc.tensor.basic import shape_tuple

    xv, wv, border, stride, dil, flip = case
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, border_mode=border, subsample=stride, filter_dilation=dil, filter_flip=flip)
    gx, gw = graphc.grad((y * y).sum(), [x, w])
    for out in (y, gx, gw):
        node = out.owner
        (inferred,) = node.op.infer_shape(None, node, [shape_tuple(i) for i in node.inputs])
        got = graphc.function([x, w], list(inferred), on_unused_input="ignore")(xv, wv)
        assert tuple(int(s) for s in got) == out.eval({x: xv, w: wv}).shape


def test_debug_mode_and_pickling_agree_with_py():
    import pickle

    rng = np.random.default_rng(4)
    x, w = T.dtensor4("x"), T.dtensor4("w")
    y = conv2d(x, w, border_mode="full", subsample=(1, 2))
    outs = [y, *graphc.grad((y**2).sum(), [x, w])]
    xv, wv = rng.standard_normal((2, 2, 5, 6)), rng.standard_normal((3, 2, 2, 3))
    want = graphc.function([x, w], outs, mode=MODES["py"])(xv, wv)
    f = graphc.function([x, w], outs, mode="DEBUG_MODE")
    for got, ref in zip(f(xv, wv), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    g = pickle.loads(pickle.dumps(graphc.function([x, w], outs)))
    for got, ref in zip(g(xv, wv), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
