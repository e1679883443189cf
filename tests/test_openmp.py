"""config.openmp: long element-wise loops split across threads give the same results."""

import os

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


# Split loops (openmp_policy=split) against the serial C loop: bit for bit, since each
# element is computed by the same kernel whichever thread runs it.
N_SPLIT = 4099  # odd, not a multiple of any vector width; minsize 1000: 4 threads' worth


def _pair(inputs, expr, **kw):
    with graphc.config.change_flags(openmp=True, openmp_elemwise_minsize=1000,
                                    openmp_policy="split"):  # fmt: skip
        par = graphc.function(inputs, expr, **kw)
    serial = graphc.function(inputs, expr, **kw)
    return par, serial


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "expr",
    [
        lambda x, y: (x * y + y) * x - y,
        lambda x, y: T.exp(x) * y + T.tanh(y) - x**2,
        lambda x, y: T.sin(x) + T.log1p(abs(y)),
    ],
)
def test_split_loops_equal_serial_bit_for_bit(dtype, expr):
    from graphc.linker.c import par_policy

    x, y = T.tensor(dtype, (None,), name="x"), T.tensor(dtype, (None,), name="y")
    par, serial = _pair([x, y], expr(x, y))
    rng = np.random.default_rng(1)
    before = par_policy.counts()["split"]
    for n in (N_SPLIT, 1000, 999, 2 * N_SPLIT + 1):
        xv, yv = (rng.uniform(-2, 2, n).astype(dtype) for _ in range(2))
        np.testing.assert_array_equal(par(xv, yv), serial(xv, yv))
    assert par_policy.counts()["split"] >= before + 3  # the runs of >= 1000 elements split


def test_split_loops_with_strides_and_broadcasting():
    x, m = T.dvector("x"), T.dmatrix("m")
    par, serial = _pair([x, m], T.exp(m) * x + m)
    rng = np.random.default_rng(2)
    big = rng.standard_normal((3, 2 * N_SPLIT))
    cases = [
        (rng.standard_normal(N_SPLIT), rng.standard_normal((3, N_SPLIT))),  # broadcast row
        (big[0, ::2], big[:, ::2]),  # strided
        (big[0, ::-2], big[:, 1::2]),  # negative strides
        (rng.standard_normal(1), rng.standard_normal((1, N_SPLIT))),  # size-1 broadcast
        (rng.standard_normal(N_SPLIT), np.asfortranarray(rng.standard_normal((3, N_SPLIT)))),
    ]
    for xv, mv in cases:
        np.testing.assert_array_equal(par(xv, mv), serial(xv, mv))


def test_split_in_place_outputs_over_their_input():
    m, v, y = T.dmatrix("m"), T.dvector("v"), T.dvector("y")
    expr = T.tanh(T.dot(m, v)) * y + T.dot(m, v)  # the loop overwrites the product
    par, serial = _pair([m, v, y], expr)
    assert "inplace" in str(par.linked.program.nodes[-1].name)
    rng = np.random.default_rng(3)
    mv, vv, yv = (
        rng.standard_normal((N_SPLIT, 3)),
        rng.standard_normal(3),
        rng.standard_normal(N_SPLIT),
    )
    for _ in range(3):
        np.testing.assert_array_equal(par(mv, vv, yv), serial(mv, vv, yv))
    t = mv @ vv
    np.testing.assert_allclose(par(mv, vv, yv), np.tanh(t) * yv + t, rtol=1e-12, atol=1e-12)


def test_loops_with_sums_match_python():
    # a loop that also sums (multi-output fusion) runs its accumulators through zero
    # strides, so it is not split; it must stay right under openmp
    x = T.dvector("x")
    par, _ = _pair([x], [T.exp(x) * 2, (T.exp(x) * x).sum()])
    ref = graphc.function([x], [T.exp(x) * 2, (T.exp(x) * x).sum()],
                          mode=graphc.Mode(linker="py"))  # fmt: skip
    xv = np.random.default_rng(4).standard_normal(N_SPLIT)
    for got, want in zip(par(xv), ref(xv)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# The split-or-serial policy with made-up timings (ns per run of 1e6 elements; a split
# run's main thread has half of them).
def _runs(serial, split, main, k):
    return [(serial, split, main, 1e6, 5e5)] * k


def test_policy_splits_while_it_is_faster():
    from graphc.linker.c.par_policy import simulate

    ways = [w for w, *_ in simulate(_runs(1000, 600, 550, 300))]
    assert ways[:2] == [0, 1]  # one run each way first
    assert ways.count(0) <= 8  # serial only in the rare tries after
    assert all(w == 1 for w in ways[-100:-1] if w != 0) and sum(ways[-128:]) >= 126


def test_policy_falls_back_at_once_when_a_thread_is_late():
    from graphc.linker.c.par_policy import simulate

    # the other core busy: the split run waits 1500 ns for a share the main thread did in 500
    out = simulate(_runs(1000, 2000, 500, 3000))
    ways = [w for w, *_ in out]
    # the first split started the workers: measured again, late, and left at once
    assert ways[:4] == [0, 1, 1, 0] and out[1][3] == 1 and out[1][2] == 0 and out[2][2] == 1
    tries = [k for k in range(4, len(ways)) if ways[k] and not ways[k - 1]]
    assert all(ways[k + 1] == 1 and out[k][3] == 1 and out[k + 1][3] == 0 for k in tries)
    gaps = np.diff(tries)
    assert list(gaps) == [8, 16, 32] + [32] * (len(gaps) - 3)  # doubling, to 32 runs
    assert sum(ways) <= 2 * 3000 / 32 + 6  # a try and its second run every 32 runs


def test_policy_does_not_learn_the_wake_up_from_a_try():
    from graphc.linker.c.par_policy import simulate

    # a split takes 600 ns with the workers polling but 2500 when it wakes them: tried
    # after serial runs (which put them to sleep), every try would wake them
    out = simulate([(1000, 600, 550, 1e6, 5e5, 2500)] * 300)
    ways = [w for w, *_ in out]
    assert ways[:3] == [0, 1, 1]  # the first split woke them: a second one measures
    assert sum(ways) >= 290
    # the split after each serial try woke them too: learnt, it moves the cost a little
    assert all(out[k + 1][3] for k in range(3, 299) if ways[k] == 0)


def test_policy_learns_the_wake_up_a_caller_always_pays():
    from graphc.linker.c.par_policy import simulate

    # a pause before every run: each split wakes the workers, at 1500 ns against 1000
    out = simulate([(1000, 600, 550, 1e6, 5e5, 1500, True)] * 600)
    ways = [w for w, *_ in out]
    assert sum(ways) <= 2 * 600 / 32 + 6  # a try and its second run every 32 runs at most


def test_policy_notices_a_freed_core_within_a_short_gap():
    from graphc.linker.c.par_policy import simulate

    # a long busy spell (the tries of a split 32 runs apart by then), then the core frees
    busy, idle = _runs(1000, 2000, 500, 2000), _runs(1000, 600, 550, 200)
    ways = [w for w, *_ in simulate(busy + idle)]
    first = next(k for k in range(2000, len(ways)) if ways[k] == 1)
    assert first < 2000 + 32
    assert sum(ways[first:]) >= len(ways) - first - 3


def test_policy_is_not_put_off_by_a_worker_that_woke_late():
    from graphc.linker.c.par_policy import simulate

    # a worker woke near the end and took the last block: the main thread ran 97% of the
    # elements and waited 40 ns for the rest, under an eighth of its own time
    woke_late = (1000, 1040, 1000, 1e6, 9.7e5)
    runs = _runs(1000, 600, 550, 20) + [woke_late] + _runs(1000, 600, 550, 20)
    out = simulate(runs)
    assert out[-1][2] == 0  # no late split counted
    ways = [w for w, *_ in out]
    assert sum(ways[21:]) >= 18  # still splitting but for a try or two


def test_policy_returns_to_splitting_when_the_core_frees():
    from graphc.linker.c.par_policy import simulate

    busy, idle = _runs(1000, 2000, 500, 40), _runs(1000, 600, 550, 200)
    ways = [w for w, *_ in simulate(busy + idle)]
    first_split = next(k for k in range(40, 240) if ways[k] == 1)
    assert first_split < 40 + 64  # within one gap
    assert sum(ways[first_split + 1 :]) >= len(ways) - first_split - 1 - 8


def test_policy_returns_to_splitting_soon_after_one_late_run():
    from graphc.linker.c.par_policy import simulate

    # a long steady state of splitting (the serial tries 512 runs apart by then), one split
    # run late (another process took the core for a moment), then idle again
    steady, late = _runs(1000, 600, 550, 1500), _runs(1000, 2000, 500, 1)
    ways = [w for w, *_ in simulate(steady + late + _runs(1000, 600, 550, 100))]
    assert ways[1500] == 1 and ways[1501] == 0  # the late run, then serial at once
    back = next(k for k in range(1501, len(ways)) if ways[k] == 1)
    assert back - 1500 <= 6  # within a first gap, not the steady state's 512
    assert sum(ways[back:]) >= len(ways) - back - 3


def test_policy_needs_a_margin_and_two_threads():
    from graphc.linker.c.par_policy import simulate

    # a split 2% faster is not worth the risk: serial but for the tries
    ways = [w for w, *_ in simulate(_runs(1000, 980, 490, 200))]
    assert sum(ways[3:]) <= 2 * (200 / 32 + 3)  # tries (and their second runs) only
    assert all(w == 0 for w, *_ in simulate(_runs(1000, 500, 500, 20), threads=1))


def test_policy_goes_by_the_mean_not_the_luckiest_run():
    from graphc.linker.c.par_policy import simulate

    # a busy second core: split runs take 400 or 1900 ns (mean 1400), serial 1000; no run
    # is late by the main thread's measure, so only the costs decide
    runs = [(1000, (400, 1900, 1900)[k % 3], 1000, 1e6, 5e5) for k in range(600)]
    ways = [w for w, *_ in simulate(runs)]
    assert any(w and runs[k][1] == 400 for k, w in enumerate(ways))  # a lucky split seen
    assert sum(ways) <= 0.2 * len(ways)  # the tries, and the few runs a lucky one wins


def test_split_loops_work_in_a_forked_child():
    # the worker threads do not survive a fork: the child starts its own
    x = T.dvector("x")
    par, serial = _pair([x], T.exp(x) * 2 + x)
    xv = np.random.default_rng(5).standard_normal(N_SPLIT)
    want = serial(xv)
    np.testing.assert_array_equal(par(xv), want)
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only if its split loops are right
        ok = all(np.array_equal(par(xv), want) for _ in range(3))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
