"""The CI gate's compile-time entries (benchmarks/baseline/compile_times.py): timed compiles
are judged as functions by the gate's own comparison, a compile whose rewrite passes were
made slower fails it, identical builds pass."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from graphc.profile.ab import Side, python_side, run_ab
from graphc.profile.summaries.compare import TIMED, Options, compare_runs
from graphc.tensor.elemwise import Elemwise

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "benchmarks" / "baseline"
WORKLOAD = BASELINE / "workload.py"
COMPILES = ("compile scan_grad", "compile elemwise_chain100")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
ARGS = ["--calls", "10", "--compiles", "3"]
#: pairs of processes, as the gate runs (``GATE_PROCESSES``): with 3, the interval of the
#: paired ratios has 2 degrees of freedom, and on a loaded machine one slow pair put a
#: 10x slower rewrite phase's whole interval below the threshold
PAIRS = 4

_spec = importlib.util.spec_from_file_location("compile_times", BASELINE / "compile_times.py")
assert _spec is not None and _spec.loader is not None
compile_times = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compile_times)

#: ``graphc-prof run`` with every rewrite pass followed by a busy loop of 9 times its CPU
#: time (compiles are timed in CPU time): the rewrite phase of each compile 10x slower, the
#: calls of the compiled functions unchanged
SLOW_REWRITES = """
import sys, time
import graphc.opt.passes as passes
from graphc.profile.cli import main
fast = passes.run_pass
def slow(*args):
    t0 = time.process_time()
    fast(*args)
    end = time.process_time() + 9 * (time.process_time() - t0)
    while time.process_time() < end:
        pass
passes.run_pass = slow
sys.exit(main(["run", *sys.argv[1:]]))
"""


def _runs(ms: float, seed: int, processes: int = 4) -> list[list]:
    """Processes each reporting 5 compile times around ``ms`` (sd 10% per process, 5% per
    compile) for both timed entries."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(processes):
        level = ms * 1e6 * float(np.exp(rng.normal(0.0, 0.1)))
        out.append([compile_times.timed_entry(name, [int(level * x) for x in
                                                     np.exp(rng.normal(0.0, 0.05, 5))])
                    for name in COMPILES])  # fmt: skip
    return out


def test_timed_entries_are_compared_as_functions_only():
    fp = compile_times.timed_entry("compile x", [3, 1, 2])
    assert fp.vm_kind == TIMED and fp.calls == 3 and fp.nodes[0].ns_samples == [3, 1, 2]
    rep = compare_runs(_runs(40, 1), _runs(40, 2))
    assert {(e.kind, e.label) for e in rep.entries} == {("function", n) for n in COMPILES}
    assert not rep.failed and rep.coverage.matched_share == 1.0


def test_synthetic_compile_3x_slower_fails_identical_passes():
    for seed in range(20):
        same = compare_runs(_runs(40, 2 * seed), _runs(40, 2 * seed + 1))
        assert not same.failed, [(e.label, e.ratio, e.low) for e in same.slower]
        slow = compare_runs(_runs(40, 2 * seed), _runs(120, 2 * seed + 1))
        assert {e.label for e in slow.slower} == set(COMPILES), seed


def test_compile_times_skip_the_warm_up_and_count_each_compile():
    times = compile_times.time_compiles(compile_times.elemwise_chain_graph, 2)
    assert len(times) == 2 and all(t > 0 for t in times)
    inputs, outputs = compile_times.elemwise_chain_graph(8)
    ops = [v.owner.op for v in _ancestors(outputs) if v.owner is not None]
    assert sum(isinstance(op, Elemwise) for op in ops) == 8  # 4 per link of the chain


def _ancestors(outputs: list) -> list:
    seen, todo = [], list(outputs)
    while todo:
        v = todo.pop()
        if any(v is s for s in seen):
            continue
        seen.append(v)
        todo += list(v.owner.inputs) if v.owner is not None else []
    return seen


def test_live_gate_flags_slower_rewrites_and_passes_identical_builds(monkeypatch):
    """The workload under ab, ``PAIRS`` pairs: the same build on both sides passes; the new
    side with slowed rewrite passes fails on both compile entries, and on nothing else."""
    for k, v in ONE_THREAD.items():
        monkeypatch.setenv(k, v)
    base = python_side("base", sys.executable, str(WORKLOAD), ARGS)
    a, b = run_ab(base, base, processes=PAIRS)
    same = compare_runs(a, b, Options())
    assert not same.failed, [(e.label, e.ratio, e.low) for e in same.slower]
    assert {e.label for e in same.entries if e.kind == "function"} >= set(COMPILES)

    slow = Side("new", (sys.executable, "-c", SLOW_REWRITES, str(WORKLOAD), *ARGS, "--json",
                        "{json}"))  # fmt: skip
    a, b = run_ab(base, slow, processes=PAIRS)
    rep = compare_runs(a, b, Options())
    assert rep.failed, [(e.kind, e.label, e.ratio, e.low, e.high) for e in rep.entries]
    assert {(e.kind, e.label) for e in rep.slower} == {("function", n) for n in COMPILES}, [
        (e.kind, e.label, e.ratio, e.low, e.high) for e in rep.entries
    ]
