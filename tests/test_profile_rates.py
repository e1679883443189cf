"""Rates and compile times in the profile against numbers computed apart from it: flops
counted by hand, per-call durations from the trace, a stopwatch around compiling."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile.data.steady import steady_state
from graphc.profile.summaries.tables import apply_table


def test_gflops_of_a_node_whose_shapes_change_come_from_the_same_calls():
    """Shapes are recorded on calls 1, 2, 4, 8, ... (the first call is reported apart):
    the rate must be those calls' flops (2*m*k*n each, by hand, with each call's own m)
    over those calls' time (each call's duration, read from the trace)."""
    x, w = T.matrix("x"), T.matrix("w")
    with graphc.config.change_flags(profile_trace=True):
        f = graphc.function([x, w], T.dot(x, w), profile=True)
    rng = np.random.default_rng(0)
    wv = rng.normal(size=(120, 90))
    rows = [400, 20, 150]
    for k in range(40):
        f(rng.normal(size=(rows[k % 3], 120)), wv)
    f.profile.refresh()
    fp = f.profile.functions[0]
    (node,) = fp.nodes
    sampled = [1, 3, 7, 15, 31]  # calls 2, 4, 8, 16, 32 counted from 1
    flops = sum(2 * rows[k % 3] * 120 * 90 for k in sampled)
    dur = {int(e[0]): int(e[3]) for e in fp.trace.events if e[1] == 0}
    ns = sum(dur[k] for k in sampled)
    assert node.sampled_flops == flops
    # the clock's tick-to-ns factor is measured again at each read (parts per million
    # apart), and each trace duration is rounded to a whole ns
    tol = 1e-5 + len(sampled) / ns
    assert node.sampled_ns == pytest.approx(ns, rel=tol)
    (row,) = apply_table([steady_state(fp)]).rows
    assert row.gflops_s == pytest.approx(flops / ns, rel=tol)


def test_compile_phases_add_up_to_a_stopwatch_around_function():
    """``graphc.function(..., profile=True)`` timed from outside (the cyclic collector off:
    a collection it would start on the next allocation is not part of compiling): the total
    recorded covers the profiler's own setup too, leaving out only the few microseconds
    before the compile starts (the caller's line, the mode). A loop step's compile is its
    own phase, not C code generation. A stopwatch only gains from a preemption, so the gap
    is checked on the closest of five compiles: a part left out of the total shows in all."""
    import gc

    gaps = []
    for _ in range(5):
        X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
        hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=X,
                            outputs_info=h0, non_sequences=W, name="rnn")  # fmt: skip
        out = hs.sum()
        f = None  # freeing the previous function is not part of this compile
        gc.disable()
        try:
            t0 = time.perf_counter_ns()
            f = graphc.function([X, W, h0], out, profile=True)
            stopwatch = time.perf_counter_ns() - t0
        finally:
            gc.enable()
        c = f.profile.functions[0].compile
        assert 0 < c.total_ns <= stopwatch
        gaps.append((stopwatch - c.total_ns) / max(0.02 * stopwatch, 300_000))
        assert 0 < c.profiler_ns < c.total_ns
        named = c.rewrite_ns + c.linker_ns + c.python_import_ns + c.profiler_ns
        assert named + c.other_ns() == c.total_ns
        (node,) = [n for n in f.profile.functions[0].nodes if n.inner is not None]
        step = node.inner.compile.total_ns  # the step's own compile, by its own clock
        assert step <= c.loop_compile_ns <= c.linker_ns
        assert c.codegen_ns + c.loop_compile_ns <= c.linker_ns
        buf = io.StringIO()
        f.profile.summary(file=buf)
        text = buf.getvalue()
        assert "Loop step compile time (scan)" in text and ", profiler setup " in text
    assert min(gaps) <= 1.0, gaps


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_flops_of_a_fused_loop_are_what_its_generated_c_executes(dtype):
    """A C element-wise loop counts its vector math at the cost counted in the compiled
    code (``vecmath.FLOPS``), not one flop per function; numpy's loop (the py linker)
    keeps one flop per scalar operation."""
    from graphc.linker.c.vecmath import FLOPS

    x, y, z = (T.vector(n, dtype=dtype) for n in "xyz")
    expr = T.exp(x) * y + T.tanh(z)
    n = 1000
    vals = [np.full(n, 0.5, dtype=dtype)] * 3
    per = {}
    for linker in ("c|py", "py"):
        f = graphc.function([x, y, z], expr, profile=True, mode=graphc.Mode(linker=linker))
        f(*vals)
        f.profile.refresh()
        (node,) = f.profile.functions[0].nodes  # one fused loop
        per[linker] = node.flops_per_call / n
    assert per["c|py"] == FLOPS[dtype]["exp"] + FLOPS[dtype]["tanh"] + 2  # and a mul, an add
    assert per["py"] == 4  # exp, mul, tanh, add
