"""``graphc.tensor.cbrt``, the cube root: numpy's values and dtypes, the C loop against the
numpy one, its gradient against finite differences, and its C inside a fused loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphc
import graphc.tensor as T
from graphc.linker import clinker
from graphc.scalar import basic as ps
from graphc.testing import verify_grad

PY = graphc.Mode(linker="py", optimizer=None)
CPY = graphc.Mode(linker="c|py", optimizer=None)
HSET = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# numpy's cbrt computes integers in a float as wide as needed (float16 widened to float32);
# a float16 operand stays float16
OUT_DTYPE = {
    "float16": "float16", "float32": "float32", "float64": "float64", "bool": "float32",
    "int8": "float32", "uint8": "float32", "int16": "float32", "int32": "float64",
    "int64": "float64",
}  # fmt: skip
# the C loop may call the C library's SIMD cbrt (libmvec: within 4 ulp)
RTOL = {"float32": 5e-7, "float64": 1e-15}

needs_c = pytest.mark.skipif(not clinker.available(), reason="no C compiler")

_compiled: dict[tuple, graphc.compile.function.Function] = {}


def _cbrt_fn(dtype: str, ndim: int, mode: graphc.Mode):
    key = (dtype, ndim, mode.linker)
    if key not in _compiled:
        x = T.tensor(dtype=dtype, shape=(None,) * ndim)
        _compiled[key] = graphc.function([x], T.cbrt(x), mode=mode)
    return _compiled[key]


def _values(dtype: str, min_dims: int = 0, max_dims: int = 3):
    """Arrays of ``dtype`` of up to 3 axes; floats over the whole range, nan and inf too."""
    if np.dtype(dtype).kind == "f":
        elements = st.floats(width=np.dtype(dtype).itemsize * 8, allow_subnormal=True)
    else:
        elements = None
    shapes = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, max_side=5)
    return hnp.arrays(dtype, shapes, elements=elements)


def _reference(x: np.ndarray, out_dtype: str) -> np.ndarray:
    """numpy's cbrt of ``x`` cast to the output dtype (numpy alone would compute an int8 in
    float16)."""
    return np.cbrt(x.astype(out_dtype))


def test_cbrt_is_graphc_tensor_cbrt_with_numpy_dtypes():
    assert T.cbrt is graphc.tensor.math.cbrt
    for dtype, out in OUT_DTYPE.items():
        assert T.cbrt(T.tensor(dtype=dtype, shape=(None,))).dtype == out, dtype
    np.testing.assert_array_equal(
        T.cbrt(np.array([-27.0, 0.0, 8.0])).eval(), np.array([-3.0, 0.0, 2.0])
    )


@pytest.mark.parametrize("dtype", sorted(OUT_DTYPE))
def test_cbrt_matches_numpy(dtype):
    @HSET
    @given(x=_values(dtype))
    def check(x):
        out = _cbrt_fn(dtype, x.ndim, PY)(x)
        assert out.dtype == OUT_DTYPE[dtype]
        np.testing.assert_array_equal(out, _reference(x, OUT_DTYPE[dtype]))

    check()


@needs_c
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "uint8"])
def test_cbrt_in_c_matches_the_numpy_loop(dtype):
    @HSET
    @given(x=_values(dtype))
    def check(x):
        f = _cbrt_fn(dtype, x.ndim, CPY)
        assert all(i.is_c for i in f.linked.impls)
        got, want = f(x), _cbrt_fn(dtype, x.ndim, PY)(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=RTOL[OUT_DTYPE[dtype]], atol=0)

    check()


@pytest.mark.parametrize("linker", ["py", "c|py"])
def test_float16_cbrt_runs_numpy_under_every_linker(linker):
    # generated C has no half type: under c|py the float16 node runs its numpy perform
    if linker == "c|py" and not clinker.available():
        pytest.skip("no C compiler")
    f = _cbrt_fn("float16", 1, graphc.Mode(linker=linker, optimizer=None))
    assert not any(i.is_c for i in f.linked.impls)

    @HSET
    @given(x=_values("float16", min_dims=1, max_dims=1))
    def check(x):
        got = f(x)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, np.cbrt(x))

    check()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cbrt_gradient_matches_finite_differences(dtype):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 3.0, size=(3, 4)) * rng.choice([-1.0, 1.0], size=(3, 4))
    verify_grad(T.cbrt, [x.astype(dtype)], rng=rng)
    # the closed form: d cbrt(x) / dx = 1 / (3 cbrt(x)^2)
    v = T.vector(dtype=dtype)
    g = graphc.function([v], graphc.grad(T.cbrt(v).sum(), v), mode=PY)
    xs = np.array([-8.0, 1.0, 27.0], dtype=dtype)
    np.testing.assert_allclose(g(xs), [1 / 12, 1 / 3, 1 / 27], rtol=1e-6)


@needs_c
def test_cbrt_fuses_with_other_elementwise_ops_into_one_c_loop():
    # (cbrt is heavy: fusion keeps it from a dependent exp, as it does two exps)
    x = T.dvector("x")
    y = T.cbrt(x * x - 1.0) * 2.0 + T.sqrt(T.abs(x))
    f = graphc.function([x], y)
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 1 and isinstance(nodes[0].op, T.Elemwise)
    comp = nodes[0].op.scalar_op
    assert isinstance(comp, ps.Composite)
    assert {type(n.op) for n in comp.nodes} >= {ps.Cbrt, ps.Sqrt, ps.Abs}
    assert "cbrt(" in comp.name
    assert all(i.is_c for i in f.linked.impls)
    xs = np.array([-8.0, -1e-3, 0.0, 0.3, 27.0, 1e6])
    want = np.cbrt(xs * xs - 1.0) * 2.0 + np.sqrt(np.abs(xs))
    np.testing.assert_allclose(f(xs), want, rtol=1e-14)
