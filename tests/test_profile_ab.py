"""graphc-prof ab in fresh processes: identical versions pass, a slowed one fails the gate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from graphc.profile.ab import Side, python_side, run_ab, schedule
from graphc.profile.cli import main
from graphc.profile.summaries.compare import Options, compare_runs

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "benchmarks" / "baseline" / "workload.py"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PROCESSES = 3


def _side(name: str, *args: str) -> Side:
    s = python_side(name, sys.executable, str(WORKLOAD), ["--calls", "30", *args])
    return Side(s.name, s.command, str(ROOT), ONE_THREAD)


def test_schedule_alternates():
    assert schedule(3) == [0, 1, 1, 0, 0, 1]


def test_identical_pairs_pass_a_tight_gate():
    """Twelve alternating fresh processes of one version; four pairs of disjoint 3 x 3."""
    a, b = run_ab(_side("a"), _side("b"), processes=2 * PROCESSES)
    first, second = slice(0, PROCESSES), slice(PROCESSES, 2 * PROCESSES)
    opts = Options(threshold=1.2)
    for x, y in ((a[first], b[first]), (a[second], b[second]), (a[first], b[second]),
                 (b[first], a[second])):  # fmt: skip
        rep = compare_runs(x, y, opts)
        assert not rep.failed, [(e.kind, e.label, e.ratio, e.low) for e in rep.slower]
        assert rep.coverage.matched_share == 1.0
        assert all(e.n_base == PROCESSES for e in rep.entries)


def test_more_work_fails_the_gate_and_is_named(capsys, tmp_path, monkeypatch):
    """--work elemwise_chain=1.6: that function, and no other, fails a 1.3x gate (8 processes
    a side: with 4, a loaded machine left the interval too wide to judge)."""
    cmd = f"{sys.executable} -m graphc.profile run {WORKLOAD} --calls 30 --json {{json}}"
    report = tmp_path / "r.json"
    for k, v in ONE_THREAD.items():
        monkeypatch.setenv(k, v)
    slow = cmd + " --work elemwise_chain=1.6"
    gate = ["--processes", "8", "--fail-above", "1.3", "--json", str(report)]
    code = main(["ab", "--base-cmd", cmd, "--new-cmd", slow, *gate])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "FAILED: function elemwise_chain:" in out
    doc = json.loads(report.read_text())
    failed = {e["label"] for e in doc["entries"] if e["failed"] and e["kind"] == "function"}
    assert failed == {"elemwise_chain"}, out


def test_ab_reports_a_failing_command():
    bad = Side("base", (sys.executable, "-c", "raise SystemExit(3)"))
    with pytest.raises(RuntimeError, match="base command failed"):
        run_ab(bad, bad, processes=1)
