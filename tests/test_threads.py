"""Compiled functions and threads: distinct functions called from several threads at once
give correct results; one function called from several threads at once runs every call
(once two calls meet, calls queue on a lock), and a call from inside its own run fails
instead of deadlocking; compiling from several threads at once works."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.debugmode import DebugMode
from graphc.compile.mode import Mode
from graphc.linker import c_available

MODES = [Mode(linker="py"), Mode(linker="py", vm="py")]
if c_available():
    MODES += [Mode(linker="c|py"), Mode(linker="c|py", vm="py"), Mode(linker="c|py_nogc")]
IDS = [f"{m.linker}-{m.vm or 'cvm'}" for m in MODES]
N_THREADS = 6


def _graph():
    x, v = T.matrix("x"), T.vector("v")
    return [x, v], [T.tanh(x) * v + x.sum(axis=0), T.max(x, axis=1)]


def _want(x, v):
    return [np.tanh(x) * v + x.sum(axis=0), x.max(axis=1)]


def _run_threads(target, n):
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def wrap(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return errors


@pytest.mark.parametrize("mode", MODES, ids=IDS)
def test_distinct_functions_in_parallel(mode):
    ins, outs = _graph()
    fns = [graphc.function(ins, outs, mode=mode) for _ in range(N_THREADS)]

    def work(k):
        rng = np.random.default_rng(k)
        for _ in range(200):
            x = rng.normal(size=(int(rng.integers(1, 60)), 40))
            v = rng.normal(size=40)
            for g, w in zip(fns[k](x, v), _want(x, v)):
                np.testing.assert_allclose(g, w, rtol=1e-9)

    assert _run_threads(work, N_THREADS) == []


@pytest.mark.parametrize("mode", [*MODES, DebugMode(linker="py")], ids=[*IDS, "DEBUG_MODE"])
def test_one_function_from_several_threads_runs_every_call(mode):
    ins, outs = _graph()
    f = graphc.function(ins, outs, mode=mode)
    n_calls = 20 if isinstance(mode, DebugMode) else 200
    done = [0] * 3

    def work(k):
        rng = np.random.default_rng(100 + k)
        for _ in range(n_calls):
            x = rng.normal(size=(int(rng.integers(1, 200)), 50))
            v = rng.normal(size=50)
            for g, w in zip(f(x, v), _want(x, v)):
                np.testing.assert_allclose(g, w, rtol=1e-9)
            done[k] += 1

    assert _run_threads(work, 3) == []
    assert done == [n_calls] * 3


def test_a_second_thread_waits_for_the_running_call_instead_of_failing():
    from graphc.graph.basic import Apply, Op

    started, release = threading.Event(), threading.Event()
    order = []

    class Slow(Op):
        __props__ = ()

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            order.append(float(inputs[0]))
            if inputs[0] == 1.0:  # the first thread's call holds the function
                started.set()
                assert release.wait(30)
            out[0][0] = inputs[0] * 2

    x = T.dscalar("x")
    f = graphc.function([x], Slow()(x))
    f(0.0)
    assert f._call_lock is None  # one thread at a time so far: no lock on the call path
    order.clear()
    results = {}
    first = threading.Thread(target=lambda: results.update(a=f(1.0)))
    second = threading.Thread(target=lambda: results.update(b=f(2.0)))
    first.start()
    assert started.wait(30)
    second.start()
    deadline = time.monotonic() + 30
    while f._call_lock is None and time.monotonic() < deadline:  # the second call queued
        time.sleep(0.001)
    release.set()
    first.join(30)
    second.join(30)
    assert results == {"a": 2.0, "b": 4.0} and order == [1.0, 2.0]


@pytest.mark.skipif(not c_available(), reason="no C linker in this build")
def test_compiling_from_several_threads():
    results: dict[int, object] = {}

    def work(k):
        x = T.vector("x")
        f = graphc.function([x], T.exp(x) * (k + 2) - T.sqr(x), mode=Mode(linker="c|py"))
        xv = np.linspace(-1, 1, 7)
        results[k] = (f(xv), np.exp(xv) * (k + 2) - xv**2)

    assert _run_threads(work, 4) == []
    for got, want in results.values():
        np.testing.assert_allclose(got, want)


def _hammer_updates(mode, n_threads: int, seconds: float) -> None:
    """``n_threads`` call one function with updates for ``seconds``: each call sees a distinct
    counter value, and the counter ends at the number of calls (no update lost)."""
    import time

    c = graphc.shared(np.int64(0), name="c")
    acc = graphc.shared(np.zeros(3), name="acc")
    x = T.vector("x")
    f = graphc.function([x], [c * 1, acc.sum()], updates=[(c, c + 1), (acc, acc + x)], mode=mode)
    seen: list[list[int]] = [[] for _ in range(n_threads)]
    stop = time.monotonic() + seconds

    def work(k):
        one = np.ones(3)
        while time.monotonic() < stop:
            old, _ = f(one)
            seen[k].append(int(old))

    assert _run_threads(work, n_threads) == []
    calls = [v for s in seen for v in s]
    assert len(calls) > n_threads
    assert c.get_value() == len(calls)
    assert sorted(calls) == list(range(len(calls)))  # each call saw its own counter value
    np.testing.assert_array_equal(acc.get_value(), np.full(3, float(len(calls))))


@pytest.mark.parametrize("mode", [*MODES, DebugMode(linker="py")], ids=[*IDS, "DEBUG_MODE"])
def test_threads_calling_one_function_with_updates_lose_none(mode):
    _hammer_updates(mode, 8, 0.3)


@pytest.mark.fuzz
def test_fuzz_threads_calling_one_function_with_updates(fuzz_examples):
    """8 threads, 1.5 s in the default suite; 10 s under ``make fuzz``."""
    _hammer_updates(Mode(linker="c|py") if c_available() else Mode(linker="py"), 8,
                    10.0 if fuzz_examples > 100 else 1.5)  # fmt: skip


def test_a_call_from_inside_its_own_run_refuses_instead_of_deadlocking():
    from graphc.graph.basic import Apply, Op

    class CallsBack(Op):
        __props__ = ()
        callback = None

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            type(self).callback()
            out[0][0] = inputs[0].copy()

    c = graphc.shared(np.float64(0.0), name="c")
    x = T.scalar("x")
    f = graphc.function([x], CallsBack()(x), updates=[(c, c + 1)], mode=Mode(linker="py"))
    CallsBack.callback = lambda: f(1.0)
    errors = _run_threads(lambda k: f(2.0), 1)
    assert len(errors) == 1 and "already running" in str(errors[0])
    assert c.get_value() == 0.0  # the failed call left the shared value as it was
