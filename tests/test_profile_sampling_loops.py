"""Sampled profiles (profile_sample=N) of functions with loops (scan): an untimed call
times none of its steps, a timed one times them all, and the steps' estimates scale with
the enclosing function's calls, with an interval whose unit is that function's call."""

from __future__ import annotations

import copy
import gc
import io

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.profiling import FunctionProfiler
from graphc.profile import ProfileStats
from graphc.profile.summaries.sampling import loop_estimate, scaled
from graphc.scan_module.op import _Runner


def _loop(profile, name: str = "loop"):
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    hs, _ = graphc.scan(lambda r, h: T.tanh(h + r), sequences=x, outputs_info=h0)
    return graphc.function([x, h0], hs[-1].sum(), profile=profile, name=name)


def _runner(f) -> _Runner:
    (runner,) = [i.perform for i in f.linked.impls if isinstance(i.perform, _Runner)]
    return runner


def _body(fp):
    (node,) = [n for n in fp.nodes if n.inner is not None]
    return node.inner


@pytest.mark.parametrize("compiled_loop", [True, False])
def test_only_the_timed_calls_time_their_steps(compiled_loop):
    stats = ProfileStats(atexit_print=False)
    with graphc.config.change_flags(profile_sample=4, profiling__ignore_first_call=False):
        f = _loop(stats)
    runner = _runner(f)
    runner.compiled_loop = compiled_loop  # False: the Python loop, which calls on_step
    clock = runner.clock
    assert isinstance(clock, FunctionProfiler) and clock.nested
    for i in range(41):
        before = (clock.totals(), runner.vm.stats()["calls"].tolist())
        f(np.ones((7, 3)), np.zeros(3))
        after = (clock.totals(), runner.vm.stats()["calls"].tolist())
        if i % 4:  # calls 2-4, 6-8, ...: no step counted, no node of the step timed
            assert after == before, i
        else:
            assert after[0][0] == before[0][0] + 7, i
    stats.refresh()
    (fp,) = stats.functions
    body = _body(fp)
    # calls 1, 5, ..., 41 timed: 11 of 41 (hand count), 7 steps each
    assert (fp.calls, fp.unsampled_calls, fp.sample_every) == (11, 30, 4)
    assert (body.calls, body.unsampled_calls, body.sample_every) == (77, 210, 4)
    assert all(n.calls == 77 for n in body.nodes)
    est = _body(scaled(fp))
    assert all(n.calls == 41 * 7 for n in est.nodes)
    out = io.StringIO()
    stats.summary(file=out, width=200)
    text = out.getvalue()
    assert "Sampled loop: 1 call in 4 timed (10 of 40)" in text
    assert "step (node" in text and "the steps of the timed calls (70 of about 280)" in text


def test_loop_estimate_covers_the_full_profile_of_the_same_run():
    # a full profile of a run (every call timed) is the truth; the calls a sampled profile
    # times (every 5th after the first) give the estimate of the loop body's total step
    # time, whose interval must hold it
    seen: list[tuple[int, int]] = []  # per call: (vm_ns, ns of that call's steps)
    stats = ProfileStats(atexit_print=False)
    with graphc.config.change_flags(profiling__ignore_first_call=False):
        f = _loop(stats, "full")
    (child,) = f._profiler.children

    def spy(call_ns, vm_ns):  # after each call, the clock's hook
        done = sum(s for _, s in seen)
        seen.append((vm_ns, child.totals()[2] - done))

    f._clock.hook = spy
    # the Python loop: each step's time is an integer the clock gives once (the CVM's
    # cumulative tick count is converted again at each read as its calibration improves)
    _runner(f).compiled_loop = False
    # 7 lengths in turn: the calls' step times vary for a reason of their own, and each
    # call is long enough that the shared machine's stalls are a small part of the run
    rng = np.random.default_rng(0)
    batches = [rng.random((n, 64)) for n in (20, 80, 320, 640, 480, 160, 40)]
    for i in range(281):
        f(batches[i % 7], np.zeros(64))
    stats.refresh()
    (fp,) = stats.functions
    body = _body(fp)
    assert sum(s for _, s in seen) == body.vm_ns and len(seen) == fp.calls == 281
    steady = [s for _, s in seen[1:]]  # the summaries leave the first call out
    every = 5  # prime to the 7 lengths: the timed calls see every length equally often
    timed = steady[every - 1 :: every]
    first = seen[0][1]
    parent = copy.copy(fp)  # what profile_sample=5 records of this run
    parent.calls, parent.unsampled_calls = 1 + len(timed), len(steady) - len(timed)
    parent.first_calls = 1
    sampled = copy.copy(body)
    sampled.vm_ns, sampled.first_vm_ns = first + sum(timed), first
    sampled.sampled_vm_ns_sq = float(first) ** 2 + sum(float(t) ** 2 for t in timed)
    est = loop_estimate(parent, sampled)
    assert est.half_width is not None and 0 < est.half_width < est.ns  # not vacuous
    assert abs(est.ns - sum(steady)) <= est.half_width, (est, sum(steady))
    assert est.ns == pytest.approx(np.mean(timed) * len(steady))


def test_the_sampled_squares_are_per_timed_call():
    # the loop body's squares sum, per timed call of its parent, the square of that call's
    # step time: with one call timed (and the first), they are the two calls' squares
    stats = ProfileStats(atexit_print=False)
    with graphc.config.change_flags(profile_sample=2, profiling__ignore_first_call=False):
        f = _loop(stats)
    clock = _runner(f).clock
    per_call = []
    for i in range(3):  # calls 1 and 3 timed
        ns0 = clock.totals()[2]
        f(np.ones((5 + i, 3)), np.zeros(3))
        per_call.append(clock.totals()[2] - ns0)
    stats.refresh()
    body = _body(stats.functions[0])
    assert per_call[1] == 0 and body.calls == 5 + 7
    assert body.sampled_vm_ns_sq == float(per_call[0]) ** 2 + float(per_call[2]) ** 2


def test_a_trace_keeps_the_timed_calls_of_a_sampled_function():
    stats = ProfileStats(atexit_print=False)
    flags = dict(profile_sample=3, profile_trace=True, profiling__ignore_first_call=False)
    with graphc.config.change_flags(**flags):
        f = _loop(stats)
    for _ in range(10):  # calls 1, 4, 7, 10 timed
        f(np.ones((7, 3)), np.zeros(3))
    stats.refresh()
    (fp,) = stats.functions
    n_nodes = len(fp.nodes)
    assert fp.trace is not None and fp.trace.dropped == 0
    assert len(fp.trace.events) == 4 * n_nodes
    assert len({e[0] for e in fp.trace.events}) == 4  # call indices count the timed calls
    body = _body(fp)
    assert body.trace is not None and len(body.trace.events) == 4 * 7 * len(body.nodes)
    assert (fp.calls, fp.unsampled_calls, body.calls) == (4, 6, 28)


def test_a_freed_loop_function_keeps_its_steps_and_lets_its_vms_go():
    stats = ProfileStats(atexit_print=False)
    f = _loop(stats)
    for _ in range(3):
        f(np.ones((7, 3)), np.zeros(3))
    (profiler,) = stats._live
    (child,) = profiler.children
    del f
    gc.collect()
    assert profiler.parts is None and child.parts is None  # the VMs are no longer held
    stats.refresh()
    (fp,) = stats.functions
    body = _body(fp)
    assert (fp.calls, body.calls) == (3, 21)
    assert all(n.calls == 21 for n in body.nodes) and body.vm_ns > 0
