"""Measure the performance gate's power and false-alarm rate (docs/ci-gate.md).

Runs ``graphc-prof ab`` at its default settings (1.5x gate, 95% interval) as
``benchmarks/baseline/gate.sh`` does (4 fresh processes a side, one BLAS thread) on
``benchmarks/baseline/scenario_workload.py``, ``--runs`` times for each scenario:

- identical: the same version on both sides (a fail is a false alarm);
- slow 1.6x: the Burn node made 1.6x slower (it must be reported slower every time);
- renamed: the Burn Op renamed, same speed (must pass);
- renamed 5x: the Burn Op renamed and made 5x slower (must fail).

    .venv/bin/python scripts/gate_power.py [--runs 20] [--processes 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

from graphc.profile.ab import Side, run_ab
from graphc.profile.summaries.compare import Options, compare_runs

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "benchmarks" / "baseline" / "scenario_workload.py"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SCENARIOS = {
    "identical": [],
    "slow 1.6x": ["--burn-work", "1.6"],
    "renamed": ["--burn-label", "renamed"],
    "renamed 5x": ["--burn-label", "renamed", "--burn-work", "5"],
}


def side(name: str, extra: list[str]) -> Side:
    cmd = (sys.executable, "-m", "graphc.profile", "run", str(WORKLOAD), *extra,
           "--json", "{json}")  # fmt: skip
    return Side(name, cmd, str(ROOT), ONE_THREAD)


def one_run(extra: list[str], processes: int) -> dict:
    """One ab comparison: whether it failed and the Burn node's verdict and interval."""
    base, new = run_ab(side("base", []), side("new", extra), processes)
    report = compare_runs(base, new, Options())
    burn_node = re.compile(r": \d+ Burn\{")
    (burn,) = [e for e in report.entries if e.kind == "apply" and burn_node.search(e.label)]
    unchanged = [  # neither the Burn node, its Op nor the function that holds it
        e for e in report.entries
        if not burn_node.search(e.label) and e.label != "step" and not e.label.startswith("Burn")
    ]  # fmt: skip
    return {
        "failed": report.failed,
        "other_verdicts": dict(Counter(e.verdict for e in unchanged)),
        "other_ratios": [round(e.ratio, 3) for e in unchanged if e.ratio is not None],
        "matched_share": report.coverage.matched_share,
        "burn_verdict": burn.verdict,
        "burn_ratio": burn.ratio,
        "burn_interval": [burn.low, burn.high],
        "slower": [f"{e.kind} {e.label}" for e in report.slower],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--processes", type=int, default=4)
    p.add_argument("--json", help="write every run's result here")
    p.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    args = p.parse_args()
    os.environ.update(ONE_THREAD)
    results: dict[str, list[dict]] = {}
    for name in args.scenario or list(SCENARIOS):
        results[name] = []
        for i in range(args.runs):
            results[name].append(one_run(SCENARIOS[name], args.processes))
            r = results[name][-1]
            print(f"{name:>11} run {i + 1:>2}: {'FAILED' if r['failed'] else 'passed'}; Burn "
                  f"{r['burn_verdict']} {r['burn_ratio'] or 0:.2f}x {r['burn_interval']}",
                  flush=True)  # fmt: skip
    print(f"\n{'scenario':>11}  runs  failed  Burn reported slower  Burn unmatched  "
          "unchanged entries' verdicts (ratios)")  # fmt: skip
    for name, rs in results.items():
        slower = sum(r["burn_verdict"].startswith("slower") for r in rs)
        unmatched = sum(r["burn_verdict"] == "unmatched" for r in rs)
        other: Counter[str] = Counter()
        for r in rs:
            other.update(r["other_verdicts"])
        ratios = [x for r in rs for x in r["other_ratios"]]
        span = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        print(f"{name:>11}  {len(rs):>4}  {sum(r['failed'] for r in rs):>6}  "
              f"{slower:>20}  {unmatched:>14}  {dict(other)} ({span})")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
