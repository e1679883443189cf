"""The README's benchmark table, rendered from one run's JSON: every workload's median per
candidate with its spread, and graphc's time over the fastest peer's.

    python -m benchmarks.table [bench-results/benchmarks.json] [--readme README.md]
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks.common import ratio_note

#: the peers' columns: each holds the first of its candidates a row has
COLUMNS = {"numpy": ("numpy", "numpy loop"), "pytensor": ("pytensor",), "jax": ("jax",),
           "corrmm": ("corrmm",)}  # fmt: skip
PEERS = frozenset(k for names in COLUMNS.values() for k in names)
#: candidates that measure the machine, not an implementation (a same-size triad)
REFERENCES = ("triad", "triad openmp")
_SCALE = {"us": 1e6, "ms": 1e3, "ns": 1e9, "s": 1.0, "MB": 1e-6}


def _cell(value: float, spread: float | None, unit: str) -> str:
    text = f"{value * _SCALE[unit]:.3g} {unit}"
    return text + (f" (IQR {spread:.0%})" if spread is not None else "")


def _peer(times: dict[str, float], column: str) -> str | None:
    return next((k for k in COLUMNS[column] if k in times), None)


def accuracy_text(accuracy: dict) -> str:
    """``graphc 0.5 / 1.21, jax 1.59 / 6.5``: each candidate's largest errors in ulps
    (three significant digits: a flush of subnormals to zero is millions of ulps)."""
    return ", ".join(f"{k} {e:.3g} / {t:.3g}" for k, (e, t) in accuracy.items())


def cores_text(cores: dict) -> str:
    """``cores busy (CPU time / wall time): graphc 1.00, jax 1.87``, the machine's
    references left out."""
    busy = ", ".join(f"{k} {v:.2f}" for k, v in cores.items() if k not in REFERENCES)
    return "cores busy (CPU time / wall time): " + busy


def _verdict(times: dict[str, float], ours: list[str], note: str) -> str:
    """graphc over the fastest peer; in a row without peers, the run's own note on it (the
    profiling rows: medians of per-round ratios), else each variant over the first."""
    peers = [times[k] for c in COLUMNS if (k := _peer(times, c)) is not None]
    if not ours:
        return "-"
    if peers:
        key = "graphc" if "graphc" in times else ours[0]
        return f"**{times[key] / min(peers):.2f}x**"
    if note:
        return note
    first = ours[0]
    return "; ".join(f"{k} / {first}: {times[k] / times[first]:.3f}x" for k in ours[1:]) or "-"


def row(result: dict) -> str:
    """One table row: workload, graphc's candidates, each peer, the machine's references,
    graphc / fastest peer."""
    times, spread, unit = result["times"], result.get("spread", {}), result["unit"]
    ours = [k for k in times if k not in PEERS and k not in REFERENCES]
    graphc = "; ".join(f"{k}: {_cell(times[k], spread.get(k), unit)}" for k in ours)
    cells = []
    for column in COLUMNS:
        k = _peer(times, column)
        cells.append("-" if k is None else _cell(times[k], spread.get(k), unit))
    refs = "; ".join(f"{k}: {_cell(times[k], spread.get(k), unit)}" for k in REFERENCES
                     if k in times) or "-"  # fmt: skip
    verdict = _verdict(times, ours, result.get("note", ""))
    if result.get("accuracy"):
        verdict += " (largest error in ulps, exp / tanh: " + accuracy_text(result["accuracy"]) + ")"
    if result.get("cores"):
        verdict += " (" + cores_text(result["cores"]) + ")"
    if result.get("ratios"):
        verdict += " (" + ratio_note(result["ratios"]) + ")"
    return f"| {result['workload']} | {graphc} | " + " | ".join(cells) + f" | {refs} | {verdict} |"


def render(run: dict) -> str:
    """The markdown table of one run, under a caption naming its machine."""
    head = ("| workload | graphc | numpy | PyTensor | JAX | CorrMM | machine reference | "
            "graphc / fastest peer |")  # fmt: skip
    lines = [f"Machine: {run.get('machine_line', 'not recorded')}.", "", head,
             "|---" * 8 + "|"]  # fmt: skip
    lines += [row(r) for r in run["results"] if r.get("times")]
    return "\n".join(lines)


START, END = "<!-- benchmark table: start -->", "<!-- benchmark table: end -->"


def replace_block(text: str, table: str) -> str:
    """``text`` with what lies between the START and END markers replaced by ``table``."""
    head, sep, rest = text.partition(START)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise ValueError(f"no {START} ... {END} block to replace")
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json", nargs="?", default="bench-results/benchmarks.json")
    ap.add_argument("--readme", help="write the table into this file's marked block")
    args = ap.parse_args(argv)
    with open(args.json) as fh:
        table = render(json.load(fh))
    if args.readme is None:
        print(table)
        return 0
    with open(args.readme) as fh:
        text = fh.read()
    with open(args.readme, "w") as fh:
        fh.write(replace_block(text, table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
