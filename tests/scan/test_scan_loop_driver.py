"""The compiled loop driver (graphc.vm._loop) against numpy and against the Python
reference loop (``_Runner.python_steps``): it re-points the previous step's row views at
the next rows and gives each copied output back to the step's VM to be written again, so
these cases look for a view moved while something still held it, an output overwritten
while still in use, and rows read from the wrong place (taps, strides, 0-d rows, dtypes,
unaligned data, while-loops, shared updates, gradients)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
import graphc.vm._loop  # noqa: F401 - these tests are about the compiled driver: it must be built
from graphc.graph.basic import Apply, Op
from graphc.scan_module.op import _Runner
from graphc.testing import numeric_grad


def runners(f) -> list[_Runner]:
    return [impl.perform for impl in f.linked.impls if isinstance(impl.perform, _Runner)]


def both_drivers(f, *args) -> list[np.ndarray]:
    """``f(*args)`` with the compiled driver, checked equal (bit for bit) to the Python
    reference loop's result, and, for a loop with the element-wise fast loop, to the
    compiled driver's general loop; returns the compiled driver's outputs."""
    assert runners(f), "no loop node"
    fast = [r.fast for r in runners(f)]
    runs = [fl.runs for fl in fast if fl is not None]
    got = [np.array(v, copy=True) for v in _as_list(f(*args))]
    wants = []
    for r in runners(f):
        r.compiled_loop = False
    try:
        wants.append(_as_list(f(*args)))
    finally:
        for r in runners(f):
            r.compiled_loop = True
    if runs != [fl.runs for fl in fast if fl is not None]:  # some loop ran the fast loop
        for r in runners(f):
            r.fast = None
        try:
            wants.append([np.array(v, copy=True) for v in _as_list(f(*args))])
        finally:
            for r, fl in zip(runners(f), fast):
                r.fast = fl
    for want in wants:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    return got


def _as_list(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def unaligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` whose data starts one byte past an aligned address."""
    raw = np.zeros(a.nbytes + 1, np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned or a.dtype.itemsize == 1
    return out


class Keep(Op):
    """Returns its input plus one and keeps the input array itself (as a step that caches
    its inputs would): the driver must not move a view something still holds."""

    __props__ = ()

    def __init__(self):
        self.kept: list[np.ndarray] = []

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        self.kept.append(inputs[0])
        out[0][0] = inputs[0] + 1


# ---------------------------------------------------------------- aliasing and reuse


def test_rows_a_step_keeps_are_not_moved_to_the_next_row():
    keep = Keep()
    x, h0 = T.matrix("x"), T.vector("h0")
    (hs, ys), _ = graphc.scan(lambda r, h: [h + r, keep(r) * 2.0], sequences=x,
                              outputs_info=[h0, None])  # fmt: skip
    f = graphc.function([x, h0], [hs, ys])
    xv = np.arange(15.0).reshape(5, 3)
    hv, yv = f(xv, np.zeros(3))
    assert len(keep.kept) == 5
    for i, kept in enumerate(keep.kept):
        np.testing.assert_array_equal(kept, xv[i])
    np.testing.assert_array_equal(hv, np.cumsum(xv, axis=0))
    np.testing.assert_array_equal(yv, (xv + 1) * 2)


def test_state_taps_a_step_keeps_are_not_moved():
    keep = Keep()
    h0 = T.vector("h0")
    hs, _ = graphc.scan(lambda h: keep(h) * 1.0, outputs_info=h0, n_steps=6)
    f = graphc.function([h0], hs)
    got = f(np.array([0.0, 10.0]))
    want = np.array([0.0, 10.0]) + np.arange(1, 7)[:, None]
    np.testing.assert_array_equal(got, want)
    assert [k.tolist() for k in keep.kept] == [[0.0, 10.0], *want[:-1].tolist()]


def test_a_vm_other_than_the_cvm_that_holds_its_arguments():
    x, h0 = T.matrix("x"), T.vector("h0")
    hs, _ = graphc.scan(lambda r, h: 0.5 * h + r, sequences=x, outputs_info=h0)
    f = graphc.function([x, h0], hs)
    (runner,) = runners(f)
    held: list[list] = []
    vm = runner.vm

    def holding_vm(args):  # not a CVM: called through Python, and keeps every argument
        held.append(args)
        return vm(args)

    runner.vm = holding_vm
    xv = np.random.default_rng(0).normal(size=(7, 4))
    got = both_drivers(f, xv, np.ones(4))[0]
    want, h = [], np.ones(4)
    for row in xv:
        h = 0.5 * h + row
        want.append(h)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert len(held) == 14  # compiled, then Python loop
    for i in range(7):  # the compiled run's arguments: each still its own row
        np.testing.assert_array_equal(held[i][0], xv[i])
        np.testing.assert_array_equal(held[i][1], got[i - 1] if i else np.ones(4))


def test_outputs_that_are_inputs_views_of_inputs_or_shared_between_outputs():
    x, h0, w = T.matrix("x"), T.vector("h0"), T.vector("w")

    def step(r, h, w):
        d = h * 2.0 + r
        return [d, r, r[::-1], d, w, (d * w).sum(), w + 0.0]

    outs, _ = graphc.scan(step, sequences=x, non_sequences=w,
                          outputs_info=[h0, None, None, None, None, None, None])  # fmt: skip
    f = graphc.function([x, h0, w], outs)
    xv = np.arange(12.0).reshape(4, 3) - 5
    wv = np.array([1.0, -2.0, 3.0])
    got = both_drivers(f, xv, np.ones(3), wv)
    h, want = np.ones(3), [[] for _ in range(7)]
    for r in xv:
        d = h * 2.0 + r
        for k, v in enumerate([d, r, r[::-1], d, wv, (d * wv).sum(), wv]):
            want[k].append(v)
        h = d
    for k in range(7):
        np.testing.assert_array_equal(got[k], want[k])
    np.testing.assert_array_equal(wv, [1.0, -2.0, 3.0])  # the non-sequence is untouched


def test_results_of_one_call_survive_the_next():
    x, h0 = T.matrix("x"), T.vector("h0")
    (hs, ys), _ = graphc.scan(lambda r, h: [h + r, h * r], sequences=x, outputs_info=[h0, None])
    f = graphc.function([x, h0], [hs, ys])
    a = [v.copy() for v in f(np.ones((3, 2)), np.zeros(2))]
    first = f(np.ones((3, 2)), np.zeros(2))
    f(np.full((3, 2), 7.0), np.ones(2))
    for kept, fresh in zip(first, a):
        np.testing.assert_array_equal(kept, fresh)


def test_a_state_returned_unchanged_is_copied_onto_its_own_row():
    # kept last only (out[-1]), the step's input row and the row its output is copied to
    # are the same memory; a transposed state is copied element by element
    h0, m0 = T.vector("h0"), T.matrix("m0")
    (hs, ms), _ = graphc.scan(lambda h, m: [h, m.T], outputs_info=[h0, m0], n_steps=5)
    f = graphc.function([h0, m0], [hs[-1], ms[-1]])
    assert any(all(r.op.info.state_last) for r in runners(f))
    mv = np.arange(9.0).reshape(3, 3)
    h, m = both_drivers(f, np.arange(4.0), mv)
    np.testing.assert_array_equal(h, np.arange(4.0))
    np.testing.assert_array_equal(m, mv.T)  # an odd number of transpositions


# ---------------------------------------------------------------- layouts, taps, dtypes

LAYOUTS = ["contiguous", "every other row", "transposed", "fortran", "unaligned", "reversed"]


def layout(a: np.ndarray, how: str) -> np.ndarray:
    """``a`` (rows are steps) laid out in memory another way, with the same values."""
    if how == "contiguous":
        return np.ascontiguousarray(a)
    if how == "every other row":
        big = np.zeros((2 * a.shape[0], *a.shape[1:]), a.dtype)
        big[::2] = a
        return big[::2]
    if how == "transposed":
        return np.ascontiguousarray(np.moveaxis(a, 0, -1)).transpose(
            (a.ndim - 1, *range(a.ndim - 1))
        )
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "unaligned":
        return unaligned(a)
    if how == "reversed":
        return np.ascontiguousarray(a[::-1])[::-1]
    raise ValueError(how)


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
def test_sequence_and_state_taps_over_every_layout(how, dtype):
    # h[t] = h[t-1] + h[t-3] // 2 + x[t-2] - x[t] + 2 x[t+1]; y[t] = x[t] * h[t-1]
    x = T.tensor(dtype, (None, None), "x")
    h0 = T.tensor(dtype, (None, None), "h0")

    def step(xm2, x0, xp1, hm3, hm1):
        new = hm1 + hm3 // 2 + xm2 - x0 + 2 * xp1
        return [T.cast(new, dtype), T.cast(x0 * hm1, dtype)]

    (hs, ys), _ = graphc.scan(step, sequences=dict(input=x, taps=[-2, 0, 1]),
                              outputs_info=[dict(initial=h0, taps=[-3, -1]), None])  # fmt: skip
    f = graphc.function([x, h0], [hs, ys])
    rng = np.random.default_rng(3)
    xv = rng.integers(-4, 5, size=(9, 3)).astype(dtype)
    hv = rng.integers(-4, 5, size=(3, 3)).astype(dtype)
    got_h, got_y = both_drivers(f, layout(xv, how), layout(hv, how))
    hist, ys_want = list(hv), []
    for t in range(2, 8):
        xm2, x0, xp1 = xv[t - 2], xv[t], xv[t + 1]
        new = hist[-1] + hist[-3] // 2 + xm2 - x0 + 2 * xp1
        ys_want.append(x0 * hist[-1])
        hist.append(new.astype(dtype))
    np.testing.assert_array_equal(got_h, np.array(hist[3:], dtype))
    np.testing.assert_array_equal(got_y, np.array(ys_want, dtype))


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
def test_zero_d_rows(how, dtype):
    x = T.tensor(dtype, (None,), "x")
    s0 = T.tensor(dtype, (), "s0")
    (ss, ds), _ = graphc.scan(lambda v, s: [T.cast(s * 2 - v, dtype), T.cast(v * v, dtype)],
                              sequences=x, outputs_info=[s0, None])  # fmt: skip
    f = graphc.function([x, s0], [ss, ds])
    xv = np.arange(-3, 5).astype(dtype)
    got_s, got_d = both_drivers(f, layout(xv, how), np.asarray(1, dtype))
    s, want = np.asarray(1, dtype), []
    for v in xv:
        s = (s * 2 - v).astype(dtype)
        want.append(s)
    np.testing.assert_array_equal(got_s, want)
    np.testing.assert_array_equal(got_d, (xv * xv).astype(dtype))


_FUNCTIONS: dict = {}


def _cumulative(dtype: str, ndim: int):
    """A compiled ``h = 2 h - x[t]`` loop with an extra stacked output, per dtype and rank
    (compiled once: hypothesis then varies the data, its layout and the step count)."""
    key = (dtype, ndim)
    if key not in _FUNCTIONS:
        x = T.tensor(dtype, (None,) * (ndim + 1), "x")
        h0 = T.tensor(dtype, (None,) * ndim, "h0")
        (hs, ys), _ = graphc.scan(lambda r, h: [T.cast(2 * h - r, dtype), T.cast(r + h, dtype)],
                                  sequences=x, outputs_info=[h0, None])  # fmt: skip
        _FUNCTIONS[key] = graphc.function([x, h0], [hs, ys])
    return _FUNCTIONS[key]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dtype=st.sampled_from(["float64", "float32", "int32", "int64"]),
    ndim=st.integers(0, 2),
    steps=st.integers(0, 9),
    width=st.integers(1, 3),
    how=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_random_loops_match_numpy_and_the_python_loop(dtype, ndim, steps, width, how, seed):
    f = _cumulative(dtype, ndim)
    rng = np.random.default_rng(seed)
    row = (width, width + 1)[:ndim]
    xv = rng.integers(-3, 4, size=(steps, *row)).astype(dtype)
    hv = rng.integers(-3, 4, size=row).astype(dtype)
    got_h, got_y = both_drivers(f, layout(xv, how) if steps else xv, hv)
    h, hs, ys = hv, [], []
    for r in xv:
        ys.append((r + h).astype(dtype))
        h = (2 * h - r).astype(dtype)
        hs.append(h)
    np.testing.assert_array_equal(got_h, np.array(hs, dtype).reshape(steps, *row))
    np.testing.assert_array_equal(got_y, np.array(ys, dtype).reshape(steps, *row))


# ---------------------------------------------------------------- until, updates, gradients


@pytest.mark.parametrize("how", ["contiguous", "every other row", "unaligned"])
def test_until_stops_at_the_same_step(how):
    x, h0 = T.matrix("x"), T.vector("h0")

    def step(r, h):
        new = h + r
        return [new, new.sum()], graphc.scan_module.until(new.sum() > 20)

    (hs, sums), _ = graphc.scan(step, sequences=x, outputs_info=[h0, None])
    f = graphc.function([x, h0], [hs, sums])
    xv = np.arange(30.0).reshape(10, 3) / 4
    got_h, got_s = both_drivers(f, layout(xv, how), np.zeros(3))
    h, want = np.zeros(3), []
    for r in xv:
        h = h + r
        want.append(h)
        if h.sum() > 20:
            break
    assert len(want) < 10
    np.testing.assert_array_equal(got_h, want)
    np.testing.assert_array_equal(got_s, [w.sum() for w in want])


def test_shared_updates_inside_the_loop():
    acc = graphc.shared(np.zeros(3), name="acc")
    count = graphc.shared(np.int64(0), name="count")
    x = T.matrix("x")
    out, updates = graphc.scan(lambda v: (v * 2, {acc: acc + v, count: count + 1}),
                               sequences=x)  # fmt: skip
    f = graphc.function([x], out, updates=updates)
    xv = np.arange(12.0).reshape(4, 3)[::-1]
    (runner,) = runners(f)
    for compiled in (True, False):
        acc.set_value(np.ones(3))
        count.set_value(np.int64(5))
        runner.compiled_loop = compiled
        np.testing.assert_array_equal(f(xv), xv * 2)
        np.testing.assert_array_equal(acc.get_value(), 1 + xv.sum(axis=0))
        assert int(count.get_value()) == 9


@pytest.mark.parametrize("how", ["contiguous", "every other row", "transposed"])
def test_gradients_match_the_python_loop_and_finite_differences(how):
    x, h0, w = T.matrix("x"), T.vector("h0"), T.vector("w")
    hs, _ = graphc.scan(lambda r, h, w: T.tanh(h * w + r), sequences=x, outputs_info=h0,
                        non_sequences=w)  # fmt: skip
    cost = (hs[-1] ** 2).sum() + hs.sum()
    f = graphc.function([x, h0, w], [cost, *graphc.grad(cost, [x, h0, w])])
    rng = np.random.default_rng(5)
    xv, hv, wv = rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=3)
    got = both_drivers(f, layout(xv, how), hv, wv)

    def cost_of(xa, ha, wa):
        h, total = ha, 0.0
        for r in xa:
            h = np.tanh(h * wa + r)
            total += h.sum()
        return total + (h**2).sum()

    np.testing.assert_allclose(got[0], cost_of(xv, hv, wv), rtol=1e-12)
    for k in range(3):
        want = numeric_grad(cost_of, [xv, hv, wv], k)
        np.testing.assert_allclose(got[k + 1], want, rtol=1e-5, atol=1e-7)


class _Clock:
    """A step clock (``linker.base.StepClock``) collecting the step times it is given."""

    def __init__(self, timing: bool = True):
        self.timing = timing
        self.times: list[int] = []

    def on_step(self, ns: int) -> None:
        self.times.append(ns)


def test_every_step_is_timed_once_for_the_profiler():
    """The Python loop reports each step to its clock's ``on_step``; the compiled loop
    driving a CVM lets the VM count and time its steps in C (``step_counts``) and makes no
    Python call; a clock that is not timing this call gets no step and no clock is read."""
    x, h0 = T.matrix("x"), T.vector("h0")
    hs, _ = graphc.scan(lambda r, h: h + r, sequences=x, outputs_info=h0)
    f = graphc.function([x, h0], hs)
    (runner,) = runners(f)
    runner.vm.set_profiling(timing=True)
    for compiled in (True, False):
        runner.clock = clock = _Clock()
        times = clock.times
        runner.compiled_loop = compiled
        runner.vm.reset_stats()
        t0 = time.perf_counter_ns()
        np.testing.assert_array_equal(f(np.ones((11, 2)), np.zeros(2))[-1], [11.0, 11.0])
        wall = time.perf_counter_ns() - t0
        steps, ns = runner.vm.step_counts()
        if not compiled:
            assert steps == 0 and len(times) == 11
            assert all(isinstance(t, int) and t >= 0 for t in times)
        else:
            assert steps == 11 and times == []
            assert 0 < ns <= wall  # inside the stopwatch around the whole call
    runner.clock = paused = _Clock(timing=False)
    runner.compiled_loop = False
    f(np.ones((11, 2)), np.zeros(2))
    assert paused.times == []
