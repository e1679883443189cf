"""Random streams: distributions (moments, chi-square), reproducibility, independence,
default updates, symbolic sizes, pickling, failure atomicity, py against c|py."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc import function, shared
from graphc.tensor.random.utils import RandomStream
from graphc.tensor.shared_randomstreams import RandomStreams

PY = graphc.Mode(linker="py", optimizer=None)
CPY = graphc.Mode(linker="c|py", optimizer="fast_run")
N = 20000


def chi2_critical(df: int, z: float = 4.0) -> float:
    """Upper critical value of chi-square (Wilson-Hilferty), about a 3e-5 tail for z=4."""
    h = 2.0 / (9.0 * df)
    return df * (1.0 - h + z * math.sqrt(h)) ** 3


def assert_chi2(counts, probs) -> None:
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(probs, dtype=float) * counts.sum()
    keep = expected > 5  # pool the thin tail into one cell
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    stat = float(((obs - exp) ** 2 / exp).sum())
    assert stat < chi2_critical(len(obs) - 1), (stat, obs, exp)


def assert_mean(sample, mean, std) -> None:
    sample = np.asarray(sample, dtype=float).ravel()
    assert abs(sample.mean() - mean) < 5 * std / math.sqrt(sample.size), sample.mean()


def draw(var, mode=PY):
    return function([], var, mode=mode)()


# ------------------------------------------------------------------ distributions


def test_uniform_moments_and_range():
    u = draw(RandomStreams(1).uniform((N,), low=-2.0, high=3.0))
    assert u.shape == (N,) and u.dtype == graphc.config.floatX
    assert u.min() >= -2.0 and u.max() < 3.0
    assert_mean(u, 0.5, 5 / math.sqrt(12))
    assert abs(u.var() - 25 / 12) < 0.1
    counts = np.histogram(u, bins=10, range=(-2, 3))[0]
    assert_chi2(counts, np.full(10, 0.1))


def test_normal_moments_and_chi_square():
    z = draw(RandomStreams(2).normal((N,), avg=1.5, std=2.0))
    assert_mean(z, 1.5, 2.0)
    assert abs(z.std() - 2.0) < 0.05
    edges = np.array([-np.inf, -2, -1, -0.5, 0, 0.5, 1, 2, np.inf])
    counts = np.histogram((z - 1.5) / 2.0, bins=edges)[0]
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges])
    assert_chi2(counts, np.diff(cdf))


def test_binomial_chi_square_against_the_pmf():
    n, p = 6, 0.3
    b = draw(RandomStreams(3).binomial((N,), n=n, p=p))
    assert b.dtype == np.int64
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    assert_chi2(np.bincount(b, minlength=n + 1), pmf)


def test_random_integers_include_both_ends():
    r = draw(RandomStreams(4).random_integers((N,), low=-1, high=3))
    assert r.min() == -1 and r.max() == 3
    assert_chi2(np.bincount(r + 1, minlength=5), np.full(5, 0.2))


def test_multinomial_counts():
    pvals = [0.2, 0.3, 0.5]
    m = draw(RandomStreams(5).multinomial((N // 10,), n=10, pvals=pvals))
    assert m.shape == (N // 10, 3)
    assert (m.sum(axis=1) == 10).all()
    assert_chi2(m.sum(axis=0), pvals)


def test_choice_with_and_without_replacement():
    p = [0.1, 0.2, 0.3, 0.4]
    c = draw(RandomStreams(6).choice((N,), a=4, p=p))
    assert_chi2(np.bincount(c, minlength=4), p)
    picks = draw(RandomStreams(6).choice((5,), a=np.arange(10, 20), replace=False))
    assert len(set(picks.tolist())) == 5 and all(10 <= v < 20 for v in picks)


def test_permutation_rows_are_uniform_permutations():
    perms = draw(RandomStreams(7).permutation((N // 5,), n=4))
    assert perms.shape == (N // 5, 4)
    assert (np.sort(perms, axis=1) == np.arange(4)).all()
    assert_chi2(np.bincount(perms[:, 0], minlength=4), np.full(4, 0.25))


def test_parameters_broadcast_to_size_and_give_the_shape_without_size():
    s = RandomStreams(8)
    avg = T.dvector("avg")
    f = function([avg], s.normal(avg=avg, std=1e-6), mode=PY)
    np.testing.assert_allclose(f(np.array([1.0, -5.0, 9.0])), [1.0, -5.0, 9.0], atol=1e-4)
    low = np.array([0.0, 10.0, 20.0])
    u = draw(s.uniform((4, 3), low=low, high=low + 1))
    assert ((u >= low) & (u < low + 1)).all()


# ------------------------------------------------------------------ streams and updates


def test_each_call_advances_the_state():
    f = function([], RandomStreams(9).uniform((5,)), mode=PY)
    a, b = f(), f()
    assert not np.array_equal(a, b)


def test_same_seed_same_values_and_seed_resets():
    def run(seed):
        s = RandomStreams(seed)
        f = function([], [s.uniform((3,)), s.normal((2,))], mode=PY)
        return s, f, [f() for _ in range(3)]

    s, f, first = run(42)
    _, _, again = run(42)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    _, _, other = run(43)
    assert not np.array_equal(first[0][0], other[0][0])
    s.seed(42)
    np.testing.assert_array_equal(f()[0], first[0][0])
    s.seed(7)
    assert not np.array_equal(f()[0], first[0][0])


def test_two_samples_of_one_stream_are_independent():
    s = RandomStreams(10)
    a, b = function([], [s.normal((N,)), s.normal((N,))], mode=PY)()
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(N)
    f = function([], s.normal((N,)), mode=PY)
    c, d = f(), f()  # successive calls
    assert abs(np.corrcoef(c, d)[0, 1]) < 5 / math.sqrt(N)


def test_one_sample_used_twice_is_the_same_value():
    u = RandomStreams(11).uniform((4,))
    np.testing.assert_array_equal(draw(u + u - 2 * u), np.zeros(4))


def test_no_default_updates_and_explicit_updates():
    s = RandomStreams(12)
    u = s.uniform((3,))
    frozen = function([], u, mode=PY, no_default_updates=True)
    np.testing.assert_array_equal(frozen(), frozen())
    ((state, _),) = s.updates()
    listed = function([], u, mode=PY, no_default_updates=[state])
    np.testing.assert_array_equal(listed(), listed())
    before = state.get_value()
    function([], u, mode=PY, updates=[(state, state)])()  # explicit update wins
    np.testing.assert_array_equal(state.get_value(), before)
    function([], u, mode=PY)()
    assert not np.array_equal(state.get_value(), before)


def test_symbolic_size():
    s = RandomStreams(13)
    x = T.dmatrix("x")
    n = T.lscalar("n")
    f = function([x, n], [s.uniform(x.shape), s.normal((n, 2))], mode=PY)
    a, b = f(np.zeros((3, 5)), 4)
    assert a.shape == (3, 5) and b.shape == (4, 2)
    a, b = f(np.zeros((1, 2)), 0)
    assert a.shape == (1, 2) and b.shape == (0, 2)


def test_dropout_mask_and_its_gradient():
    s = RandomStreams(14)
    x = T.dmatrix("x")
    w = shared(np.ones(4), name="w")
    mask = s.binomial(size=x.shape, n=1, p=0.5, dtype="float64")
    cost = (mask * x * w).sum()
    g = graphc.grad(cost, w)
    f = function([x], [mask, g], mode=PY)
    xv = np.arange(12.0).reshape(3, 4)
    m, gv = f(xv)
    assert set(np.unique(m)) <= {0.0, 1.0}
    np.testing.assert_allclose(gv, (m * xv).sum(axis=0))


def test_c_py_matches_py_and_optimized_matches_unoptimized():
    def values(mode):
        s = RandomStreams(15)
        x = T.dvector("x")
        outs = [s.uniform((3,)) * x, s.normal((2, 3)).sum(axis=0) + x, s.binomial((3,), 5, 0.4)]
        f = function([x], outs, mode=mode)
        return [f(np.arange(3.0)) for _ in range(2)]

    for a, b in zip(values(PY), values(CPY)):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12)


def test_a_failed_call_leaves_the_state_unchanged():
    s = RandomStreams(16)
    x = T.dvector("x")
    f = function([x], s.uniform((3,)) + x, mode=CPY)
    ((state, _),) = s.updates()
    before = state.get_value()
    with pytest.raises(ValueError):
        f(np.zeros(4))  # cannot broadcast (4,) against (3,)
    np.testing.assert_array_equal(state.get_value(), before)
    first = f(np.zeros(3))
    state.set_value(before)
    np.testing.assert_array_equal(f(np.zeros(3)), first)


def test_bad_parameters_name_the_distribution():
    s = RandomStreams(17)
    with pytest.raises(ValueError, match="binomial"):
        draw(s.binomial((3,), n=1, p=1.5))
    with pytest.raises(ValueError, match="ndim"):
        s.uniform((2, 2), ndim=3)
    with pytest.raises(TypeError, match="state"):
        graphc.tensor.random.RandomVariable("uniform", "float64", 0)(T.dvector(), [], 0.0, 1.0)


# ------------------------------------------------------------------ pickling


def test_functions_with_random_streams_pickle_and_continue_the_stream():
    s = RandomStreams(18)
    x = T.dvector("x")
    f = function([x], s.normal((3,)) + x, mode=CPY)
    f(np.zeros(3))
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(np.zeros(3)), f(np.zeros(3)))
    np.testing.assert_array_equal(g(np.zeros(3)), f(np.zeros(3)))  # g updates its own copy


def test_graphs_with_random_streams_pickle():
    s = RandomStreams(19)
    u = s.uniform((2, 2))
    v = pickle.loads(pickle.dumps(u))
    a = function([], v, mode=PY)
    b = function([], u, mode=PY)
    np.testing.assert_array_equal(a(), b())
    assert not np.array_equal(a(), a())  # the default update came along


# ------------------------------------------------------------------ shapes and dtypes


@settings(max_examples=12, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    dtype=st.sampled_from(["float32", "float64"]),
    seed=st.integers(0, 2**20),
)
def test_uniform_shapes_and_dtypes_py_and_cpy(shape, dtype, seed):
    results = [
        function([], RandomStreams(seed).uniform(tuple(shape), 2.0, 5.0, dtype=dtype), mode=m)()
        for m in (PY, CPY)
    ]
    for r in results:
        assert r.shape == tuple(shape) and r.dtype == dtype
        assert ((r >= 2.0) & (r <= 5.0)).all()
    np.testing.assert_array_equal(results[0], results[1])


def test_pytensor_random_stream_takes_parameters_first():
    s = RandomStream(26)
    x = T.dmatrix("x")
    outs = [
        s.normal(5.0, 1e-9, size=x.shape),
        s.uniform(2, 3, size=(4,)),
        s.binomial(10, 0.5, size=(3,)),
        s.bernoulli(0.5, size=(N,)),
        s.integers(3, size=(N,)),
        s.integers(-2, 1, size=(5,)),
        s.multinomial(4, [0.5, 0.5], size=(2,)),
        s.choice(5, size=(2,), replace=False),
        s.permutation(6),
    ]
    vals = function([x], outs, mode=PY)(np.zeros((2, 3)))
    np.testing.assert_allclose(vals[0], np.full((2, 3), 5.0), atol=1e-6)
    assert ((vals[1] >= 2) & (vals[1] < 3)).all() and vals[1].shape == (4,)
    assert vals[2].shape == (3,) and ((0 <= vals[2]) & (vals[2] <= 10)).all()
    assert_chi2(np.bincount(vals[3], minlength=2), [0.5, 0.5])
    assert_chi2(np.bincount(vals[4], minlength=3), np.full(3, 1 / 3))
    assert vals[5].min() >= -2 and vals[5].max() <= 0
    assert vals[6].shape == (2, 2) and (vals[6].sum(axis=1) == 4).all()
    assert len(set(vals[7].tolist())) == 2
    assert sorted(vals[8].tolist()) == list(range(6))


# ------------------------------------------------------------------ C thunks


def _run_both(make, calls=3):
    """Values and final state of ``make(stream)`` under py and c|py, and whether c|py ran
    the node in C (PyTensor's ``RandomStream``: its Philox draws have C code)."""
    results = []
    for mode in (PY, CPY):
        s = RandomStream(21)
        f = function([], make(s), mode=mode)
        results.append(([f() for _ in range(calls)], s.state_updates[0][0].get_value()))
    in_c = [n.c_thunk is not None for n in f.linked.program.nodes]
    return results, in_c


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(0, 9), min_size=0, max_size=3),
    dist=st.sampled_from(["uniform", "binomial"]),
    n=st.integers(0, 40),
    p=st.sampled_from([0.0, 0.05, 0.3, 0.5, 0.77, 0.99, 1.0]),
    dtype=st.sampled_from(["float32", "float64", "int64", "int32"]),
)
def test_c_draws_exactly_what_numpy_draws(shape, dist, n, p, dtype):
    if dist == "uniform":
        dtype = dtype if dtype.startswith("float") else "float64"
        make = lambda s: s.uniform(-n, p * 10 + 1, size=tuple(shape), dtype=dtype)  # noqa: E731
    else:
        make = lambda s: s.binomial(n, p, size=tuple(shape), dtype=dtype)  # noqa: E731
    (py, cpy), in_c = _run_both(make)
    for a, b in zip(py[0], cpy[0]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(py[1], cpy[1])  # the same new state
    expect_c = dist == "uniform" or n * min(p, 1 - p) <= 30
    assert in_c == [expect_c]


def test_c_uniform_with_symbolic_parameters_and_size():
    x = T.dmatrix("x")
    lo = T.dscalar("lo")
    outs = []
    for mode in (PY, CPY):
        s = RandomStream(22)
        f = function([x, lo], s.uniform(lo, lo + 2, size=x.shape), mode=mode)
        outs.append(f(np.zeros((4, 5)), -1.0))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[1].shape == (4, 5) and outs[1].min() >= -1.0
    with pytest.raises(OverflowError):
        f(np.zeros((2, 2)), -np.inf)


def test_c_rejects_a_negative_size_and_keeps_the_state():
    n = T.lscalar("n")
    s = RandomStream(23)
    f = function([n], s.uniform(size=(n, 2)), mode=CPY)
    assert [nd.c_thunk is not None for nd in f.linked.program.nodes if "Random" in nd.name] == [
        True
    ]
    before = s.state_updates[0][0].get_value()
    with pytest.raises(ValueError, match="negative"):
        f(-3)
    np.testing.assert_array_equal(s.state_updates[0][0].get_value(), before)


def test_debug_fast_compile_and_monitor_modes_draw_the_same_values():
    def run(mode):
        s = RandomStreams(24)
        x = T.dmatrix("x")
        mask = s.binomial(size=x.shape, p=0.5, dtype="float64")
        f = function([x], mask * x + s.uniform(x.shape) + s.normal(x.shape), mode=mode)
        return [f(np.ones((2, 3))) for _ in range(2)]

    ref = run(PY)
    for mode in ("DEBUG_MODE", "FAST_COMPILE", graphc.compile.MonitorMode()):
        for a, b in zip(ref, run(mode)):
            np.testing.assert_allclose(a, b, rtol=1e-14)


def test_a_size_vector_of_unknown_length_needs_ndim():
    s = RandomStreams(25)
    shp = T.lvector("shp")
    with pytest.raises(ValueError, match="pass ndim"):
        s.uniform(shp)
    f = function([shp], s.normal(shp, ndim=2), mode=PY)
    assert f(np.array([3, 2])).shape == (3, 2)
    with pytest.raises(ValueError, match="dimensions"):
        f(np.array([3, 2, 1]))


def test_normal_rejects_a_negative_std():
    with pytest.raises(ValueError, match="normal"):
        draw(RandomStreams(27).normal((3,), 0.0, -1.0), CPY)
