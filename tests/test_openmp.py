"""config.openmp: long element-wise loops split across threads give the same results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    x, y = T.dvector("x"), T.dvector("y")
    s = T.dscalar("s")
    exprs = [T.exp(x) * y + T.tanh(x) - x**2, x * s + y]
    with graphc.config.change_flags(openmp=True, openmp_elemwise_minsize=1000):
        par = [graphc.function([x, y, s], e, on_unused_input="ignore") for e in exprs]
    ref = [graphc.function([x, y, s], e, mode=graphc.Mode(linker="py"),
                           on_unused_input="ignore") for e in exprs]  # fmt: skip
    return par, ref


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 5000), step=st.sampled_from([1, 2, -1]), seed=st.integers(0, 99))
def test_threaded_loops_match_python(functions, n, step, seed):
    rng = np.random.default_rng(seed)
    xv = rng.standard_normal(n * abs(step))[::step]
    yv = rng.standard_normal(n)
    for f, g in zip(*functions):
        got, want = f(xv, yv, 1.5), g(xv, yv, 1.5)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert all(impl.is_c for impl in functions[0][0].linked.impls)
