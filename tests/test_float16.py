"""float16 tensors end to end: types and promotion against numpy, element-wise ops,
reductions, dot and gradients against numpy, and the "c|py" linker running every float16
node through its numpy ``perform``."""

from __future__ import annotations

import io
import itertools

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.c.registry import has_float16
from graphc.scalar import basic as ps
from graphc.tensor.conv import conv2d
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.nnet import softmax
from graphc.tensor.signal.pool import pool_2d
from graphc.tensor.type import TensorType

PY = graphc.Mode(linker="py")
CPY = graphc.Mode(linker="c|py")
LINKERS = ["py", pytest.param("c|py", marks=pytest.mark.skipif(not c_available(), reason="no C"))]
HSET = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# float16 has 11 significant bits (eps 9.8e-4): a few roundings of difference at most
RTOL16 = 4e-3


def _mode(linker: str) -> graphc.Mode:
    return PY if linker == "py" else CPY


def test_float16_tensors_exist_with_their_type_names():
    x = T.tensor(dtype="float16", shape=(None,))
    assert x.dtype == "float16"
    assert str(x.type) == "Vector(float16)"
    assert str(TensorType("float16", (None, None))) == "Matrix(float16)"
    assert TensorType("float16", broadcastable=(True, False)).shape == (1, None)
    assert T.matrix(dtype="float16").type == TensorType("float16", (None, None))


@pytest.mark.parametrize("a, b", list(itertools.product(ps.DTYPES, repeat=2)))
def test_promotion_of_every_dtype_pair_is_numpys(a, b):
    x, y = T.vector(dtype=a), T.vector(dtype=b)
    want = str(np.result_type(np.dtype(a), np.dtype(b)))
    assert ps.upcast(a, b) == want
    assert (x * y).dtype == str(np.multiply(np.ones(1, a), np.ones(1, b)).dtype)
    assert T.maximum(x, y).dtype == want


def test_float_functions_of_float16_stay_float16_and_of_small_ints_are_float32():
    h, i8 = T.vector(dtype="float16"), T.vector(dtype="int8")
    assert T.exp(h).dtype == "float16"
    assert (h / h).dtype == "float16"
    assert T.exp(i8).dtype == "float32"  # Theano's rule, not numpy's float16
    assert (h + i8).dtype == "float16"
    assert (h + T.vector(dtype="int16")).dtype == "float32"
    assert T.cast(i8, "float16").dtype == "float16"


def test_filter_downcasts_to_float16_only_when_allowed():
    t = TensorType("float16", (None,))
    assert t.filter(np.array([1, 2], dtype="int8")).dtype == np.float16  # int8 is exact
    for src in ("float32", "float64", "int16"):
        with pytest.raises(TypeError, match="allow_input_downcast"):
            t.filter(np.array([0.1, 2.0]).astype(src))
        got = t.filter(np.array([0.1, 2.0]).astype(src), allow_downcast=True)
        assert got.dtype == np.float16
    assert TensorType("float16").filter(0.5).dtype == np.float16
    with pytest.raises(TypeError, match="does not fit float16"):
        TensorType("float16").filter(1e6, allow_downcast=False)
    with pytest.raises(TypeError, match="expected an ndarray of dtype float16"):
        t.filter(np.zeros(2, dtype="float32"), strict=True)


def test_float16_constants_and_shared_variables_keep_float16():
    c = T.constant(np.array([1.5, 2.5], dtype="float16"))
    assert c.dtype == "float16"
    s = graphc.shared(np.arange(4, dtype="float16"))
    assert s.type.dtype == "float16"
    f = graphc.function([], s * 2, mode=PY)
    np.testing.assert_array_equal(f(), np.arange(4, dtype="float16") * 2)
    assert f().dtype == np.float16


_SHAPES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
_BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / (abs(b) + 1), lambda a, b: a / (np.abs(b) + np.float16(1))),
    "max": (T.maximum, np.maximum),
    "tanh_exp": (lambda a, b: T.tanh(a) * T.exp(b), lambda a, b: np.tanh(a) * np.exp(b)),
}


def _f16(shape):
    return hnp.arrays("float16", shape, elements=st.floats(-4, 4, width=16))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("name", sorted(_BINARY))
def test_elementwise_float16_with_broadcasting_matches_numpy(name, linker):
    sym, ref = _BINARY[name]

    @HSET
    @given(data=st.data(), shapes=_SHAPES)
    def check(data, shapes):
        a = data.draw(_f16(shapes.input_shapes[0]))
        b = data.draw(_f16(shapes.input_shapes[1]))
        x = T.tensor(dtype="float16", shape=(None,) * a.ndim)
        y = T.tensor(dtype="float16", shape=(None,) * b.ndim)
        got = graphc.function([x, y], sym(x, y), mode=_mode(linker))(a, b)
        want = ref(a, b)
        assert got.dtype == np.float16 and want.dtype == np.float16
        np.testing.assert_allclose(got, want, rtol=RTOL16, atol=1e-3)

    check()


def test_float16_sums_accumulate_in_float32_and_return_float16():
    x = T.vector(dtype="float16")
    s = T.sum(x)
    assert s.dtype == "float16"
    assert s.owner.op.accumulator("float16") == "float32"
    v = np.full(4000, 0.1, dtype="float16")  # 0.1 accumulated in float16 stalls at 256
    naive = np.float16(0)
    for e in v:
        naive = np.float16(naive + e)
    got = graphc.function([x], s, mode=PY)(v)
    assert got.dtype == np.float16
    assert got == np.float16(v.astype("float64").sum())
    assert naive != got  # the float32 accumulator is what makes the difference
    assert T.mean(x).dtype == "float16"
    m = graphc.function([x], T.mean(x), mode=PY)(np.full(70000, 2, dtype="float16"))
    assert m.dtype == np.float16 and m == 2  # the count 70000 does not fit float16


_MATRICES = hnp.arrays(
    "float16",
    hnp.array_shapes(min_dims=2, max_dims=2, max_side=6),
    elements=st.floats(-2, 2, width=16),
)


@pytest.mark.parametrize("linker", LINKERS)
def test_float16_reductions_match_numpy(linker):
    @HSET
    @given(a=_MATRICES, axis=st.sampled_from([0, 1, None]))
    def check(a, axis):
        x = T.matrix(dtype="float16")
        outs = [
            T.sum(x, axis=axis),
            T.max(x, axis=axis),
            T.prod(x, axis=axis),
            T.mean(x, axis=axis),
        ]
        got = graphc.function([x], outs, mode=_mode(linker))(a)
        a32 = a.astype("float32")
        want = [a32.sum(axis=axis), a.max(axis=axis), a32.prod(axis=axis), a32.mean(axis=axis)]
        for g, w in zip(got, want):
            assert g.dtype == np.float16
            np.testing.assert_allclose(g, w.astype("float16"), rtol=RTOL16, atol=1e-3)

    check()


@pytest.mark.parametrize("linker", LINKERS)
def test_float16_dot_matches_numpy(linker):
    @HSET
    @given(m=st.integers(1, 5), k=st.integers(0, 5), n=st.integers(1, 5), seed=st.integers(0, 99))
    def check(m, k, n, seed):
        rng = np.random.default_rng(seed)
        a = rng.uniform(-2, 2, (m, k)).astype("float16")
        b = rng.uniform(-2, 2, (k, n)).astype("float16")
        v = rng.uniform(-2, 2, k).astype("float16")
        x, y, z = T.matrix(dtype="float16"), T.matrix(dtype="float16"), T.vector(dtype="float16")
        outs = [T.dot(x, y), T.dot(x, z), 2 * T.dot(x, y) + 1]
        got = graphc.function([x, y, z], outs, mode=_mode(linker))(a, b, v)
        want = [np.dot(a, b), np.dot(a, v), np.float16(2) * np.dot(a, b) + np.float16(1)]
        for g, w in zip(got, want):
            assert g.dtype == np.float16 == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-2, atol=1e-2)

    check()


def test_gradient_of_a_float16_graph_is_float16_and_matches_finite_differences():
    def cost(x, w):
        return T.sum(T.tanh(T.dot(x, w)) ** 2 + T.exp(-x.sum() * 0.1))

    rng = np.random.default_rng(3)
    xv, wv = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    x, w = T.matrix(dtype="float16"), T.matrix(dtype="float16")
    gx, gw = graphc.grad(cost(x, w), [x, w])
    assert gx.dtype == gw.dtype == "float16"
    got = graphc.function([x, w], [gx, gw], mode=PY)(xv.astype("float16"), wv.astype("float16"))
    x64, w64 = T.matrix(dtype="float64"), T.matrix(dtype="float64")
    c64 = graphc.function([x64, w64], cost(x64, w64), mode=PY)
    eps = 1e-6
    for k, (g, val) in enumerate(zip(got, (xv, wv))):
        num = np.zeros_like(val)
        for idx in np.ndindex(val.shape):
            hi, lo = [xv.copy(), wv.copy()], [xv.copy(), wv.copy()]
            hi[k][idx] += eps
            lo[k][idx] -= eps
            num[idx] = (c64(*hi) - c64(*lo)) / (2 * eps)
        assert g.dtype == np.float16
        np.testing.assert_allclose(g, num, rtol=3e-2, atol=3e-2)


@pytest.mark.skipif(not c_available(), reason="no C compiler")
def test_c_py_runs_float16_nodes_in_python_and_agrees_with_py():
    x = T.vector(dtype="float32")
    h = T.cast(T.exp(x), "float16")  # float32 in C, then float16 nodes in numpy
    y = T.cast(T.sqrt(h * h + 1) * 3, "float32") + x
    f = graphc.function([x], [y, T.sum(h)], mode=CPY)
    g = graphc.function([x], [y, T.sum(h)], mode=PY)
    nodes = f.maker.fgraph.toposort()
    for node, impl in zip(f.linked.schedule, f.linked.impls):
        assert not (impl.is_c and has_float16(node)), node
    assert any(impl.is_c for impl in f.linked.impls)  # the float32 part still runs in C
    assert any(has_float16(n) for n in nodes)
    xv = np.linspace(-2, 2, 17, dtype="float32")
    for a, b in zip(f(xv), g(xv)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("linker", LINKERS)
def test_fusion_never_puts_float16_into_a_c_composite(linker):
    x, y = T.vector(dtype="float16"), T.vector(dtype="float32")
    h = T.tanh(x * 2 + 1) * x - T.exp(x)  # a float16 chain
    z = T.cast(h, "float32") * y + T.sqrt(abs(y)) * 3  # then a float32 chain using it
    f = graphc.function([x, y], z, mode=graphc.Mode(linker=linker))
    for node in f.maker.fgraph.toposort():
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, ps.Composite):
            comp = node.op.scalar_op
            vals = [*comp.inputs, *(o for n in comp.nodes for o in n.outputs)]
            assert all(v.type.dtype != "float16" for v in vals), comp
    xv = np.linspace(-1, 1, 9).astype("float16")
    yv = np.linspace(0.5, 3, 9).astype("float32")
    hv = np.tanh(xv * np.float16(2) + np.float16(1)) * xv - np.exp(xv)
    want = hv.astype("float32") * yv + np.sqrt(np.abs(yv)) * np.float32(3)
    np.testing.assert_allclose(f(xv, yv), want, rtol=1e-5, atol=1e-5)


def test_ops_without_float16_raise_a_type_error_naming_op_and_dtype():
    x4 = T.tensor(dtype="float16", shape=(None,) * 4)
    with pytest.raises(TypeError, match=r"Conv2d.*float16"):
        conv2d(x4, x4)
    with pytest.raises(TypeError, match=r"Pool.*average_inc_pad.*float16"):
        pool_2d(x4, (2, 2), ignore_border=True, mode="average_inc_pad")


@pytest.mark.parametrize("linker", LINKERS)
def test_max_pool_softmax_and_their_gradients_run_in_float16(linker):
    x4 = T.tensor(dtype="float16", shape=(None,) * 4)
    m = T.matrix(dtype="float16")
    p, s = pool_2d(x4, (2, 2), ignore_border=True), softmax(m)
    outs = [p, graphc.grad(p.sum(), x4), s, graphc.grad((s * s).sum(), m)]
    f = graphc.function([x4, m], outs, mode=_mode(linker))
    a = np.arange(16, dtype="float16").reshape(1, 1, 4, 4)
    b = np.array([[0.5, -1.0, 2.0]], dtype="float16")
    got = f(a, b)
    assert all(g.dtype == np.float16 for g in got)
    np.testing.assert_array_equal(got[0], [[[[5, 7], [13, 15]]]])
    want_g = np.zeros((4, 4), dtype="float16")
    want_g[1::2, 1::2] = 1  # each window's maximum is its bottom-right element
    np.testing.assert_array_equal(got[1][0, 0], want_g)
    e = np.exp(b.astype("float64") - b.max())
    np.testing.assert_allclose(got[2], e / e.sum(), rtol=RTOL16)


def test_profiler_counts_float16_bytes_with_itemsize_2():
    x = T.vector(dtype="float16")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x], [T.exp(x), T.sum(x)], profile=True, mode=PY)
    f(np.ones(1000, dtype="float16"))
    f.profile.refresh()
    fp = f.profile.functions[0]
    by_op = {n.op_name: n for n in fp.nodes}
    exp_node = by_op["Elemwise{exp,no_inplace}"]
    assert exp_node.out_bytes_max == [2 * 1000]
    assert exp_node.flops_per_call == 1000
    assert by_op["Sum{axis=[0]}"].out_bytes_max == [2]
    buf = io.StringIO()
    f.profile.summary(file=buf)
    assert "2000B" in buf.getvalue()
