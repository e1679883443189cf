"""Profiled functions called from several threads at once: a function runs one call at a
time, each call timed from its start to its end, so its times add up to at most the wall
time (checked against a stopwatch around the threads and around each call), and the first
call's split is that call's alone."""

from __future__ import annotations

import io
import sys
import threading
import time

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import c_available

N_CALLS = 60


def _run_two_threads(f, arg) -> tuple[int, list[tuple[int, int]]]:
    """Two threads calling ``f(arg)``; the wall time and every call's (start, end)."""
    spans: list[tuple[int, int]] = []
    barrier = threading.Barrier(2)

    def work():
        barrier.wait()
        for _ in range(N_CALLS):
            t0 = time.perf_counter_ns()
            f(arg)
            spans.append((t0, time.perf_counter_ns()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL over often: calls meet at every step
    try:
        w0 = time.perf_counter_ns()
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        wall = time.perf_counter_ns() - w0
    finally:
        sys.setswitchinterval(old)
    assert len(spans) == 2 * N_CALLS
    return wall, spans


@pytest.mark.skipif(not c_available(), reason="needs C nodes, which hold the GIL")
@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_two_threads_times_add_up_to_at_most_the_wall_time(vm):
    x = T.dmatrix("x")
    mode = graphc.Mode(linker="c|py", vm=vm)
    f = graphc.function([x], T.exp(T.tanh(x) * 2.0 + 1.0).sum(), mode=mode, profile=True)
    wall, spans = _run_two_threads(f, np.random.default_rng(0).random((300, 300)))
    fp = f.profile.functions[0]
    f.profile.refresh()
    assert fp.calls == 2 * N_CALLS
    # the calls' timed spans are disjoint pieces of the stopwatch's (the profiler's clock
    # ticks, converted at a rate measured against CLOCK_MONOTONIC, which the stopwatch
    # reads: the conversion's error is far below the Python work around each call)
    assert fp.thunk_ns() <= fp.vm_ns <= fp.call_ns <= wall
    # each stopwatch span holds its call's wait and its timed run
    assert fp.call_ns + fp.wait_ns <= sum(e - s for s, e in spans)
    # the first call timed ends before any call's end is read (calls run one at a time),
    # so a span that starts no later than the earliest end read holds it; its split is
    # that call's alone. (Which span ends first is not known: a thread may read its end
    # after the other thread's next call.)
    earliest_end = min(e for _, e in spans)
    assert sum(n.first_ns for n in fp.nodes) <= fp.first_vm_ns <= fp.first_call_ns
    assert any(s <= earliest_end and fp.first_call_ns <= e - s for s, e in spans)
    assert all(n.first_calls == 1 for n in fp.nodes)
    out = io.StringIO()
    f.profile.summary(file=out, width=300)
    text = out.getvalue()
    assert f"Time in {2 * N_CALLS} calls to Function.__call__" in text
    said = "  Calls from several threads: " in text
    assert said == (fp.waited_calls > 0)
    if said:
        assert f"{fp.waited_calls} waited {fp.wait_ns / 1e9:.6e}s in all" in text
