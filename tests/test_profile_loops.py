"""Loop nodes (scan) in the profile, checked against numbers computed apart from it: steps
counted by hand, a stopwatch around an unprofiled twin, sums of the exported records."""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, benchmark
from graphc.profile.cli import main
from graphc.profile.data import model as pm
from graphc.profile.summaries.loops import loop_summaries
from graphc.profile.summaries.tips import py_share_tip
from graphc.scan_module import until


def _rnn(profile=True):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=X,
                        outputs_info=h0, non_sequences=W, name="rnn")  # fmt: skip
    return graphc.function([X, W, h0], hs.sum(), profile=profile)


def _growth(profile=True, limit=4150.0):
    """``x *= 1.05`` until it passes ``limit``: 171 steps from 1.0 for 4150."""
    x0 = T.scalar("x0")
    out, _ = graphc.scan(lambda x: (x * 1.05, until(x * 1.05 > limit)), outputs_info=x0,
                         n_steps=1000)  # fmt: skip
    return graphc.function([x0], out[-1], profile=profile)


def _loop_node(f) -> pm.NodeRecord:
    f.profile.refresh()
    fp = f.profile.functions[0]
    (node,) = [n for n in fp.nodes if n.inner is not None]
    return node


def test_a_loop_of_no_step_counts_no_step_and_no_node_call():
    f = _rnn()
    for _ in range(10):
        out = f(np.zeros((0, 5)), np.eye(5), np.ones(5))
    assert out == 0.0  # the sum of an empty stack
    node = _loop_node(f)
    assert node.calls == 10
    assert node.inner.calls == 0
    assert [n.calls for n in node.inner.nodes] == [0] * len(node.inner.nodes)
    assert all(n.ns_total == 0 for n in node.inner.nodes)
    (lp,) = loop_summaries(f.profile.functions)
    # the rows split the loop node's time: exactly, as they are differences of it
    assert sum(r.exclusive_ns for r in lp.rows) == lp.ns / lp.calls


def _hand_steps(limit=4150.0) -> tuple[int, float]:
    x, n = 1.0, 0
    while True:
        x *= 1.05
        n += 1
        if x > limit:
            return n, x


def test_each_step_is_counted_once_as_counted_by_hand():
    steps, last = _hand_steps()
    assert steps == 171
    f = _growth()
    for _ in range(7):
        assert f(1.0) == last
    node = _loop_node(f)
    assert node.inner.calls == 7 * steps
    assert [n.calls for n in node.inner.nodes] == [7 * steps] * len(node.inner.nodes)
    # the steps' VM time lies inside the loop node's, its nodes' inside that
    assert sum(n.ns_total for n in node.inner.nodes) <= node.inner.vm_ns <= node.ns_total


def test_loop_bookkeeping_is_not_the_profilers_own_cost():
    """The loop's own time (its driver: slicing inputs, storing outputs) is part of a
    call: per call it must stay below a whole call of the same loop unprofiled, timed by a
    stopwatch in the same run (interleaved; medians, so a preempted call does not decide).
    It was 1.8x a whole call when the profiler's per-step Python callback was counted in
    it; it is about half a call, which leaves room for a loaded machine."""
    fp, plain = _growth(), _growth(profile=False)
    for _ in range(40):  # past the calls that sample shapes (1, 2, 4, ..., 32)
        fp(1.0)
        plain(1.0)
    rec = fp.profile.functions[0]
    own, whole = [], []
    before = None
    for _ in range(41):
        t0 = time.perf_counter_ns()
        plain(1.0)
        whole.append(time.perf_counter_ns() - t0)
        fp(1.0)
        fp.profile.refresh()
        (node,) = [n for n in rec.nodes if n.inner is not None]
        now = node.ns_total - node.inner.vm_ns
        if before is not None:
            own.append(now - before)
        before = now
    (lp,) = loop_summaries([rec])
    (book,) = [r for r in lp.rows if r.label.startswith("(loop bookkeeping")]
    assert book.exclusive_ns * lp.calls == pytest.approx(before, abs=1)  # this difference
    assert 0 < statistics.median(own) < statistics.median(whole)


def test_python_share_counts_a_loop_as_its_step_nodes():
    """A loop node runs its step's nodes; their implementations are what the share is
    about. Checked on records whose share is known by hand, and on a real RNN whose step
    nodes all run in C."""

    def node(pos, impl, ns, inner=None):
        return pm.NodeRecord(position=pos, apply_name=f"n{pos}", op_name="op",
                             op_class="x.Op", impl=impl, ns_total=ns, calls=1,
                             inner=inner)  # fmt: skip

    body = pm.FunctionProfile(name="step", nodes=[node(0, "C", 800), node(1, "Py", 80)])
    outer = pm.FunctionProfile(name="f", nodes=[node(0, "Py", 1000, body), node(1, "C", 40)])
    assert py_share_tip([outer]) == []  # 80 of 920 ns: 8.7%
    body.nodes[1].ns_total = 8000  # 8000 / (800 + 8000 + 40) = 90.5%
    (tip,) = py_share_tip([outer])
    assert tip.startswith(f"{100 * 8000 / 8840:.1f}%")

    f = _rnn()
    rng = np.random.default_rng(0)
    for _ in range(3):
        f(rng.normal(size=(30, 20)), rng.normal(size=(20, 20)) * 0.1, rng.normal(size=20))
    loop = _loop_node(f)
    assert {n.impl for n in loop.inner.nodes} == {"C"}
    assert not any("Python implementations" in t for t in py_share_tip(f.profile.functions))


def test_added_profiles_and_benchmark_keep_every_step():
    f = _rnn()
    rng = np.random.default_rng(2)
    args = rng.normal(size=(40, 6)), np.eye(6) * 0.5, np.ones(6)
    a_calls, b_calls = 5, 3
    for _ in range(a_calls):
        f(*args)
    a = _copy(f.profile)
    f._profiler.reset()
    for _ in range(b_calls):
        f(*args)
    b = _copy(f.profile)
    both = a + b
    (node,) = [n for n in both.functions[0].nodes if n.inner is not None]
    steps = 40 * (a_calls + b_calls)
    assert node.inner.calls == steps  # every step of both parts (first calls included)
    assert all(n.calls == steps for n in node.inner.nodes)

    st = benchmark(f, (rng.normal(size=(20, 6)), *args[1:]), repeat=200, warmup=0)
    (node,) = [n for n in st.functions[0].nodes if n.inner is not None]
    assert node.calls == 200
    assert node.inner.calls == 200 * 20
    assert all(n.calls == 200 * 20 for n in node.inner.nodes)


def _copy(stats) -> ProfileStats:
    """A detached copy of ``stats`` (through its JSON, as a saved profile is read back)."""
    return ProfileStats.from_json(stats.to_json())


def test_show_full_lists_every_child_of_a_loop(tmp_path, capsys):
    """15 step nodes (no fusion, so each add is a node): --full lists all of them."""
    mode = graphc.Mode().excluding("fusion")

    def step(h):
        for k in range(15):
            h = h + float(k + 1) if k % 2 else h * float(k + 2)
        return h

    h0 = T.vector("h0")
    hs, _ = graphc.scan(step, outputs_info=h0, n_steps=4)
    f = graphc.function([h0], hs[-1], mode=mode, profile=True)
    f(np.ones(3))
    f(np.ones(3))
    n_body = len(_loop_node(f).inner.nodes)
    assert n_body >= 15
    path = tmp_path / "p.json"
    f.profile.save(path)
    assert main(["show", str(path), "--full", "--width", "200"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("Scan Op profiles") :]
    section = section[: section.index("\nClass (")]
    rows = [line for line in section.splitlines() if line.rstrip().endswith(")") and
            "%" in line and not line.strip().startswith("(")]  # fmt: skip
    assert len([r for r in rows if " 1 " in r]) == n_body
    assert "remaining" not in section
