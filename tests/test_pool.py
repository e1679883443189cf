"""pool_2d and its gradient Ops against a direct-loop numpy reference (Theano's window rules)
and finite differences, under the "py" and "c|py" linkers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor.signal import pool
from graphc.tensor.signal.pool import AveragePoolGrad, MaxPoolGrad, Pool

MODES = {
    "py": graphc.Mode(linker="py", optimizer=None),
    "c|py": graphc.Mode(linker="c|py", optimizer="fast_run"),
}
SETTINGS = settings(max_examples=15, deadline=None)


def ref_out_len(size, ws, st_, pad, ignore_border):
    size += 2 * pad
    if ignore_border:
        return max((size - ws) // st_ + 1, 0)
    if st_ >= ws:
        return (size - 1) // st_ + 1
    return max(0, (size - 1 - ws + st_) // st_) + 1


def ref_regions(shape, ws, stride, pad, ignore_border, mode):
    """Per output position, the (row, col) slices of ``x`` it reads and its divisor."""
    h, w = shape[-2:]
    oh = ref_out_len(h, ws[0], stride[0], pad[0], ignore_border)
    ow = ref_out_len(w, ws[1], stride[1], pad[1], ignore_border)
    for i in range(oh):
        for j in range(ow):
            bounds = []
            for k, o in ((0, i), (1, j)):
                start = o * stride[k]
                end = min(start + ws[k], (h, w)[k] + 2 * pad[k])
                inc = end - start
                start, end = max(start, pad[k]) - pad[k], min(end - pad[k], (h, w)[k])
                bounds.append((start, end, inc))
            (r0, r1, ri), (c0, c1, ci) = bounds
            count = ri * ci if mode == "average_inc_pad" else (r1 - r0) * (c1 - c0)
            yield i, j, slice(r0, r1), slice(c0, c1), count
    return oh, ow


def ref_pool(x, ws, stride, pad, ignore_border, mode):
    h, w = x.shape[-2:]
    oh = ref_out_len(h, ws[0], stride[0], pad[0], ignore_border)
    ow = ref_out_len(w, ws[1], stride[1], pad[1], ignore_border)
    out = np.zeros(x.shape[:-2] + (oh, ow))
    for i, j, rows, cols, count in ref_regions(x.shape, ws, stride, pad, ignore_border, mode):
        region = x[..., rows, cols]
        if mode == "max":
            out[..., i, j] = region.max(axis=(-2, -1))
        else:
            out[..., i, j] = region.sum(axis=(-2, -1))
            if mode.startswith("average"):
                out[..., i, j] /= count
    return out


def ref_pool_grad(x, g, ws, stride, pad, ignore_border, mode):
    gx = np.zeros_like(x)
    for i, j, rows, cols, count in ref_regions(x.shape, ws, stride, pad, ignore_border, mode):
        region = x[..., rows, cols]
        gij = g[..., i, j][..., None, None]
        if mode == "max":
            gx[..., rows, cols] += gij * (region == region.max(axis=(-2, -1), keepdims=True))
        elif mode == "sum":
            gx[..., rows, cols] += gij
        else:
            gx[..., rows, cols] += gij / count
    return gx


@st.composite
def pool_cases(draw):
    ndim = draw(st.integers(2, 4))
    lead = tuple(draw(st.lists(st.integers(1, 2), min_size=ndim - 2, max_size=ndim - 2)))
    ws = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    ignore_border = draw(st.booleans())
    pad = (0, 0)
    if ignore_border:
        pad = (draw(st.integers(0, ws[0] - 1)), draw(st.integers(0, ws[1] - 1)))
    lo = 1 if not ignore_border else None
    h = draw(st.integers(lo or max(1, ws[0] - 2 * pad[0]), 7))
    w = draw(st.integers(lo or max(1, ws[1] - 2 * pad[1]), 7))
    mode = draw(st.sampled_from(pool.MODES))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    # Distinct values: finite differences are well defined for max pooling.
    xv = rng.permutation(int(np.prod(lead + (h, w)))).reshape(lead + (h, w)) * 0.1 - 1.0
    return xv, ws, stride, pad, ignore_border, mode


@SETTINGS
@given(pool_cases(), st.sampled_from(sorted(MODES)))
def test_pool_2d_and_its_gradient_match_direct_loops(case, mode_name):
    xv, ws, stride, pad, ignore_border, mode = case
    x = T.tensor("float64", (None,) * xv.ndim, name="x")
    y = pool.pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)
    g = T.tensor("float64", (None,) * xv.ndim, name="g")
    fn = graphc.function([x, g], [y, graphc.grad((y * g).sum(), x)], mode=MODES[mode_name])
    want = ref_pool(xv, ws, stride, pad, ignore_border, mode)
    gv = np.random.default_rng(0).standard_normal(want.shape)
    got, gx = fn(xv, gv)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    want_gx = ref_pool_grad(xv, gv, ws, stride, pad, ignore_border, mode)
    np.testing.assert_allclose(gx, want_gx, rtol=1e-12, atol=1e-12)
    shape = graphc.function([x], y.shape, mode=MODES[mode_name])(xv)
    assert tuple(shape) == want.shape


@settings(max_examples=8, deadline=None)
@given(pool_cases())
def test_pool_2d_gradient_matches_finite_differences(case):
    xv, ws, stride, pad, ignore_border, mode = case

    def fn(x):
        return pool.pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)

    verify_grad(fn, [xv], n_tests=1, rng=1, eps=1e-4)


def test_average_pool_grad_has_a_gradient():
    rng = np.random.default_rng(0)
    xv, gv = rng.standard_normal((2, 5, 5)), rng.standard_normal((2, 3, 3))
    op = AveragePoolGrad((2, 2), False, None, (0, 0), "average_exc_pad")
    verify_grad(lambda g: op(T.constant(xv), g), [gv])


def test_theano_defaults_and_deprecated_names():
    x = T.dtensor4("x")
    xv = np.random.default_rng(0).standard_normal((1, 1, 5, 5))
    with pytest.warns(UserWarning, match="ignore_border"):
        y = pool.pool_2d(x, (2, 2))
    assert y.eval({x: xv}).shape == (1, 1, 3, 3)  # ignore_border=None means False
    with pytest.warns(DeprecationWarning, match="ds"):
        y_ds = pool.pool_2d(x, ds=(2, 2), ignore_border=True)
    with pytest.warns(DeprecationWarning, match="st"):
        y_st = pool.pool_2d(x, (3, 3), st=(1, 1), ignore_border=True)
    with pytest.warns(DeprecationWarning, match="padding"):
        y_pad = pool.pool_2d(x, (3, 3), stride=(1, 1), padding=(1, 1), ignore_border=True)
    assert y_ds.eval({x: xv}).shape == (1, 1, 2, 2)
    assert y_st.eval({x: xv}).shape == (1, 1, 3, 3)
    assert y_pad.eval({x: xv}).shape == (1, 1, 5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pool.pool_2d(x, ws=(2, 2), ignore_border=True)


def test_bad_arguments_raise_clear_errors():
    x = T.dtensor4("x")
    with pytest.raises(ValueError, match="mode"):
        pool.pool_2d(x, (2, 2), ignore_border=True, mode="median")
    with pytest.raises(NotImplementedError, match="ignore_border=True"):
        pool.pool_2d(x, (2, 2), ignore_border=False, pad=(1, 1))
    with pytest.raises(ValueError, match="smaller than ws"):
        pool.pool_2d(x, (2, 2), ignore_border=True, pad=(2, 0))
    with pytest.raises(ValueError, match="ws"):
        pool.pool_2d(x, ignore_border=True)
    with pytest.raises(TypeError, match="2 dimensions"):
        pool.pool_2d(T.dvector("v"), (2, 2), ignore_border=True)
    with pytest.raises(TypeError, match="float"):
        pool.pool_2d(T.itensor4("i"), (2, 2), ignore_border=True, mode="sum")


def test_integer_max_pooling_keeps_its_dtype():
    x = T.itensor4("x")
    xv = np.arange(-16, 0, dtype="int32").reshape(1, 1, 4, 4)
    got = pool.pool_2d(x, (3, 3), ignore_border=False, stride=(2, 2)).eval({x: xv})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref_pool(xv, (3, 3), (2, 2), (0, 0), False, "max"))


def test_flops_count_the_window_reads():
    x = T.dtensor4("x")
    node = Pool((2, 2), True).make_node(x)
    assert node.op.flops(node, [(500, 20, 24, 24)], [(500, 20, 12, 12)]) == 500 * 20 * 144 * 4


def _c_nodes(f):
    return {
        type(node.op).__name__
        for node, impl in zip(f.linked.schedule, f.linked.impls)
        if impl.is_c and type(node.op).__module__ == "graphc.tensor.signal.pool"
    }


@pytest.mark.parametrize("mode", pool.MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_c_implementation_matches_py_on_strided_inputs(mode, dtype):
    rng = np.random.default_rng(2)
    x = T.tensor4("x", dtype=dtype)
    y = pool.pool_2d(x, (3, 2), ignore_border=True, stride=(2, 1), pad=(1, 1), mode=mode)
    outs = [y, graphc.grad((y * y).sum(), x)]
    fc = graphc.function([x], outs, mode=MODES["c|py"])
    fp = graphc.function([x], outs, mode=MODES["py"])
    grad_op = "MaxPoolGrad" if mode == "max" else "AveragePoolGrad"
    assert _c_nodes(fc) == {"Pool", grad_op}
    xv = rng.permutation(2 * 7 * 3 * 8).reshape(2, 7, 8, 3).astype(dtype).transpose(0, 3, 1, 2)
    xv = xv[:, :, ::-1] * 0.1
    tol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(fc(xv), fp(xv)):
        assert got.dtype == want.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_c_gradients_refuse_mismatched_shapes():
    x, g = T.dtensor4("x"), T.dtensor4("g")
    op = AveragePoolGrad((2, 2), True, None, (0, 0), "sum")
    f = graphc.function([x, g], op(x, g), mode=MODES["c|py"])
    assert _c_nodes(f) == {"AveragePoolGrad"}
    with pytest.raises(ValueError, match="gz"):
        f(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 3, 2)))
    mx = MaxPoolGrad((2, 2), True)
    fm = graphc.function([x, g], mx(x, g, g), mode=MODES["c|py"])
    with pytest.raises(ValueError, match="maxout"):
        fm(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 3, 2)))


@SETTINGS
@given(pool_cases())
def test_infer_shape_gives_the_output_shape_without_computing_it(case):
    from graphc.tensor.basic import shape_tuple

    xv, ws, stride, pad, ignore_border, mode = case
    x = T.tensor("float64", (None,) * xv.ndim, name="x")
    y = pool.pool_2d(x, ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)
    gx = graphc.grad((y * y).sum(), x)
    for out in (y, gx):
        node = out.owner
        (inferred,) = node.op.infer_shape(None, node, [shape_tuple(i) for i in node.inputs])
        got = graphc.function([x], list(inferred), on_unused_input="ignore")(xv)
        assert tuple(int(s) for s in got) == out.eval({x: xv}).shape


@pytest.mark.parametrize("mode", pool.MODES)
def test_debug_mode_and_pickling_agree_with_py(mode):
    import pickle

    x = T.dtensor4("x")
    y = pool.pool_2d(x, (2, 3), ignore_border=False, stride=(1, 2), mode=mode)
    outs = [y, graphc.grad((y**2).sum(), x)]
    xv = np.random.default_rng(1).permutation(2 * 2 * 5 * 7).reshape(2, 2, 5, 7) * 0.5
    want = graphc.function([x], outs, mode=MODES["py"])(xv)
    f = graphc.function([x], outs, mode="DEBUG_MODE")
    for got, ref in zip(f(xv), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    g = pickle.loads(pickle.dumps(graphc.function([x], outs)))
    for got, ref in zip(g(xv), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_old_downsample_path_and_symbolic_sizes():
    from graphc.tensor.signal import downsample

    x = T.dtensor4("x")
    xv = np.arange(2 * 1 * 5 * 5, dtype="float64").reshape(2, 1, 5, 5)
    old = downsample.max_pool_2d(x, (2, 2), ignore_border=True, st=(1, 2)).eval({x: xv})
    want = ref_pool(xv, (2, 2), (1, 2), (0, 0), True, "max")
    np.testing.assert_array_equal(old, want)
    with pytest.raises(NotImplementedError, match="symbolic ws"):
        pool.pool_2d(x, T.lvector("ws"), ignore_border=True)
    with pytest.raises(NotImplementedError, match="symbolic stride"):
        pool.pool_2d(x, (2, 2), ignore_border=True, stride=(T.lscalar("s"), 1))


@pytest.mark.parametrize("ignore_border", [True, False])
def test_max_pool_second_derivative(ignore_border):
    # d/dgz of MaxPoolGrad is linear: checked by finite differences in gz, x held fixed.
    rng = np.random.default_rng(3)
    xv = rng.permutation(2 * 5 * 5).reshape(2, 5, 5) * 0.1
    op = Pool((2, 2), ignore_border, (2, 1))
    outv = op(T.constant(xv)).eval()
    gzv = rng.standard_normal(outv.shape)
    grad_op = MaxPoolGrad((2, 2), ignore_border, (2, 1))
    verify_grad(lambda gz: grad_op(T.constant(xv), T.constant(outv), gz), [gzv], rng=0)
    # A hessian-vector product through max pooling: d/dx <grad(sum(pool(x) * w)), v>.
    x, v = T.dtensor3("x"), T.dtensor3("v")
    w = T.constant(rng.standard_normal(outv.shape))
    gx = graphc.grad((op(x) * w).sum(), x)
    hv = graphc.grad((gx * v).sum(), x)
    assert np.all(hv.eval({x: xv, v: rng.standard_normal(xv.shape)}) == 0)
