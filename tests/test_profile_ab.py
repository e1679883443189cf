"""graphc-prof ab in fresh processes: identical versions pass, a slowed one fails the gate."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from profile_factory import noisy_run

from graphc.profile.ab import Side, python_side, run_ab, schedule
from graphc.profile.cli import main
from graphc.profile.summaries.compare import SLOWER_BELOW, Options, Report, compare_runs

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "benchmarks" / "baseline" / "workload.py"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PROCESSES = 3


def test_python_side_imports_graphc_from_its_tree(tmp_path):
    s = python_side("base", sys.executable, str(WORKLOAD), ["--calls", "30"], str(tmp_path))
    assert s.cwd == str(tmp_path.resolve())
    assert s.env["PYTHONPATH"].split(os.pathsep)[0] == str(tmp_path.resolve())
    assert s.command[-4:] == ("--calls", "30", "--json", "{json}")


def test_schedule_alternates():
    assert schedule(3) == [0, 1, 1, 0, 0, 1]


# A fresh process that writes, to the path it is given, the profile ``noisy_run`` makes for
# a seed taken from that path's name (e.g. ``a-3.json``): ab's processes, with the timings
# of a loaded machine made deterministic.
SYNTHETIC = """
import sys, zlib
from pathlib import Path
sys.path.insert(0, {tests!r})
from profile_factory import noisy_run
from graphc.profile import ProfileStats
out = Path(sys.argv[1])
ProfileStats([noisy_run(zlib.crc32(out.name.encode()))]).save(out)
"""


def _synthetic(name: str) -> Side:
    code = SYNTHETIC.format(tests=str(ROOT / "tests"))
    return Side(name, (sys.executable, "-c", code, "{json}"), str(ROOT))


def test_identical_pairs_pass_a_tight_gate():
    """Twelve alternating fresh processes of one version; four pairs of disjoint 3 x 3."""
    a, b = run_ab(_synthetic("a"), _synthetic("b"), processes=2 * PROCESSES)
    assert len({str(r[0].nodes[0].ns_samples) for r in a + b}) == 4 * PROCESSES  # distinct
    first, second = slice(0, PROCESSES), slice(PROCESSES, 2 * PROCESSES)
    opts = Options(threshold=1.2)
    for x, y in ((a[first], b[first]), (a[second], b[second]), (a[first], b[second]),
                 (b[first], a[second])):  # fmt: skip
        rep = compare_runs(x, y, opts)
        assert not rep.failed, [(e.kind, e.label, e.ratio, e.low) for e in rep.slower]
        assert rep.coverage.matched_share == 1.0
        assert all(e.n_base == PROCESSES for e in rep.entries)


def _seeded_ab(t: int, slower: float, paired: bool = True) -> Report:
    """One seeded comparison as the gate runs it (4 processes a side, 1.5x gate): pair k's
    two processes share a machine load (sd 15%) besides their own level."""
    load = np.exp(np.random.default_rng(t).normal(0.0, 0.15, 4))
    a = [[noisy_run(1000 * t + 2 * k, 1.0, load[k])] for k in range(4)]
    b = [[noisy_run(1000 * t + 2 * k + 1, slower, load[k])] for k in range(4)]
    return compare_runs(a, b, Options(paired=paired))


def test_identical_versions_never_fail_and_lean_neither_way():
    """100 seeded comparisons of one version: none fails, the entries' intervals hold 1 but
    for about 5% (95% intervals), as many faster as slower; pairing the processes cancels
    the load they share (unpaired, most entries are too spread to judge)."""
    verdicts: Counter[str] = Counter()
    unpaired: Counter[str] = Counter()
    for t in range(100):
        rep = _seeded_ab(t, 1.0)
        assert not rep.failed, t
        verdicts.update(e.verdict for e in rep.entries)
        unpaired.update(e.verdict for e in _seeded_ab(t, 1.0, paired=False).entries)
    n = sum(verdicts.values())
    assert verdicts["faster"] + verdicts[SLOWER_BELOW] < 0.1 * n, verdicts
    assert abs(verdicts["faster"] - verdicts[SLOWER_BELOW]) < 0.03 * n, verdicts
    assert verdicts["same"] > 0.75 * n and verdicts["unstable"] < unpaired["unstable"] / 3


def test_a_node_made_1_6x_slower_is_reported_slower_every_time():
    for t in range(100):
        rep = _seeded_ab(t, 1.6)
        (node,) = [e for e in rep.entries if e.label == "step: 0 add(x, y)"]
        assert node.verdict in ("slower", SLOWER_BELOW) and node.ratio > 1.25, (t, node)
        assert {e.label for e in rep.slower} <= {"step", "add", "step: 0 add(x, y)"}


def test_more_work_fails_the_gate_and_is_named(capsys, tmp_path, monkeypatch):
    """--work elemwise_chain=3: that function, and no other, fails a 1.3x gate (4 processes a
    side; the gate's power at smaller slowdowns is the seeded tests' and gate_power.py's)."""
    cmd = f"{sys.executable} -m graphc.profile run {WORKLOAD} --calls 30 --json {{json}}"
    report = tmp_path / "r.json"
    for k, v in ONE_THREAD.items():
        monkeypatch.setenv(k, v)
    slow = cmd + " --work elemwise_chain=3"
    gate = ["--processes", "4", "--fail-above", "1.3", "--json", str(report)]
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
