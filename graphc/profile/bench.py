"""Repeated measurements of a compiled function, and a noise-aware comparison of two profiles.

:func:`benchmark` calls a profiled function many times and returns a ProfileStats whose
nodes carry one ``ns_samples`` entry per call (the JSON that ``graphc-prof diff`` reads).
:func:`compare` judges, per function, per Op and per Apply node, whether the new profile is
slower than the base by more than a ratio, from the medians and the spread of the samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphc.profile.data.merge import merge_all
from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.render.fmt import duration
from graphc.profile.stats import ProfileStats
from graphc.profile.summaries.diff import function_name, match_nodes, pair_functions, shown_node

#: Calls per chunk: the VM keeps the last 32 durations of each node, so the samples are
#: collected (and the VM's counters reset) every ``_CHUNK`` calls.
_CHUNK = 32


def benchmark(
    f: Any,
    args: Sequence[Any] = (),
    repeat: int = 200,
    warmup: int = 5,
    path: str | Path | None = None,
    name: str | None = None,
) -> ProfileStats:
    """Call ``f(*args)`` ``warmup`` times unmeasured, then ``repeat`` times measured.

    ``f`` must have been compiled with ``profile=True`` (or under ``config.profile``). Returns
    a ProfileStats holding only these measured calls (up to 1024 samples per node are kept
    for medians and spreads); with ``path`` it is also saved there as JSON.
    """
    profiler = getattr(f, "_profiler", None)
    if getattr(f, "profile", None) is None or profiler is None:
        raise ValueError(
            "graphc.profile.benchmark needs a function compiled with profiling on: "
            "graphc.function(..., profile=True)"
        )
    if repeat < 1 or warmup < 0:
        raise ValueError("benchmark: repeat must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        f(*args)
    record = profiler.record
    chunks: list[FunctionProfile] = []
    done = 0
    while done < repeat:
        profiler.reset()
        n = min(_CHUNK, repeat - done)
        for _ in range(n):
            f(*args)
        done += n
        profiler.pull()
        chunks += merge_all([[record]])
    profiler.reset()
    merged = merge_all([[c] for c in chunks])
    stats = ProfileStats(merged, name)
    if path is not None:
        stats.save(path)
    return stats


# ----------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Measure:
    """Median, minimum and median absolute deviation of a set of per-call times (ns)."""

    median: float
    min: float
    mad: float
    n: int

    @staticmethod
    def of(samples: Sequence[float]) -> Measure:
        med = statistics.median(samples)
        mad = statistics.median(abs(s - med) for s in samples)
        return Measure(float(med), float(min(samples)), float(mad), len(samples))

    def __add__(self, other: Measure) -> Measure:
        if self.n == 0:
            return other
        if other.n == 0:
            return self
        return Measure(
            self.median + other.median, self.min + other.min, self.mad + other.mad,
            min(self.n, other.n),
        )  # fmt: skip


ZERO = Measure(0.0, 0.0, 0.0, 0)


def node_measure(node: NodeRecord) -> Measure | None:
    """Per-call time of a node: from its samples, else its mean and minimum (None: never ran)."""
    if node.ns_samples:
        return Measure.of(node.ns_samples)
    if node.calls:
        mean = node.ns_total / node.calls
        return Measure(mean, float(node.ns_min), 0.0, 1)
    return None


@dataclass(frozen=True)
class Verdict:
    """One entry of a comparison (a function, an Op or an Apply node)."""

    kind: str  # "function", "op" or "apply"
    label: str
    base: Measure | None
    new: Measure | None
    failed: bool
    reason: str

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.new is None or self.base.median <= 0:
            return None
        return self.new.median / self.base.median

    @property
    def change(self) -> str:
        if self.base is None:
            return "added"
        if self.new is None:
            return "removed"
        r = self.ratio
        if r is None:
            return "~"
        if r > 1.1 and self.new.min > self.base.median:
            return "slower"
        if r < 1 / 1.1 and self.base.min > self.new.median:
            return "faster"
        return "~"


def judge(
    kind: str,
    label: str,
    base: Measure | None,
    new: Measure | None,
    ratio: float | None,
    min_delta_ns: float,
) -> Verdict:
    """Fail when the new median exceeds ``ratio`` x the base median, every new sample (its
    minimum) is above the base median plus 3 MADs, and the medians differ by more than
    ``min_delta_ns``: so a noisy sample or two cannot fail the comparison."""
    if base is None or new is None or base.n == 0 or new.n == 0:
        return Verdict(kind, label, base, new, False, "only in one profile")
    if ratio is None:
        return Verdict(kind, label, base, new, False, "")
    r = new.median / base.median if base.median > 0 else float("inf")
    floor = base.median + 3 * base.mad
    failed = r > ratio and new.min > floor and new.median - base.median > min_delta_ns
    reason = ""
    if failed:
        reason = (
            f"median {_t(base.median)} -> {_t(new.median)} ({r:.2f}x > {ratio:g}x), "
            f"new min {_t(new.min)} > base median + 3 MAD {_t(floor)}"
        )
    elif r > ratio:
        if new.min <= floor:
            reason = f"{r:.2f}x but within the spread (new min {_t(new.min)} <= {_t(floor)})"
        else:
            reason = f"{r:.2f}x but the difference is below {_t(min_delta_ns)}"
    return Verdict(kind, label, base, new, failed, reason)


def _t(ns: float) -> str:
    return duration(ns, ms_digits=3)


def _fn_measure(fp: FunctionProfile | None) -> Measure | None:
    if fp is None:
        return None
    ms = [m for m in (node_measure(n) for n in fp.nodes) if m is not None]
    if not ms:
        return None
    total = ZERO
    for m in ms:
        total = total + m
    return total


def _op_measures(fps: Sequence[FunctionProfile]) -> dict[str, Measure]:
    out: dict[str, Measure] = {}
    for fp in fps:
        for n in fp.nodes:
            m = node_measure(n)
            if m is not None:
                out[n.op_name] = out.get(n.op_name, ZERO) + m
    return out


def compare(
    base: ProfileStats | Sequence[FunctionProfile],
    new: ProfileStats | Sequence[FunctionProfile],
    ratio: float | None = None,
    min_delta_ns: float = 5_000,
) -> list[Verdict]:
    """Per function, per Op and per Apply node: base vs new times, with a verdict.

    Per-call times are the medians of ``ns_samples`` (functions and Ops: sums over their
    nodes). With ``ratio``, an entry fails as described in :func:`judge`.
    """
    a = _fps(base)
    b = _fps(new)
    out: list[Verdict] = []
    pairs = pair_functions(a, b)
    multi = len(pairs) > 1
    for fa, fb in pairs:
        name = function_name((fa, fb))
        out.append(judge("function", name, _fn_measure(fa), _fn_measure(fb), ratio, min_delta_ns))
    ops_a, ops_b = _op_measures(a), _op_measures(b)
    for op in sorted(set(ops_a) | set(ops_b)):
        out.append(judge("op", op, ops_a.get(op), ops_b.get(op), ratio, min_delta_ns))
    for fa, fb in pairs:
        for x, y in match_nodes(fa.nodes if fa else [], fb.nodes if fb else []):
            fn, shown = shown_node(fa, x, fb, y)
            label = f"{fn.name}: {shown.apply_name}" if multi else shown.apply_name
            mx = node_measure(x) if x is not None else None
            my = node_measure(y) if y is not None else None
            out.append(judge("apply", label, mx, my, ratio, min_delta_ns))
    return out


def _fps(s: Any) -> list[FunctionProfile]:
    if isinstance(s, ProfileStats):
        s.refresh()
        return list(s.functions)
    return list(s)


def render(verdicts: Sequence[Verdict], n: int = 20) -> str:
    """The comparison as text: per kind, the largest changes first; then the failures."""
    lines: list[str] = []
    titles = {"function": "Functions", "op": "Ops", "apply": "Apply nodes"}
    for kind, title in titles.items():
        rows = [v for v in verdicts if v.kind == kind]
        if not rows:
            continue

        def size(v: Verdict) -> float:
            if v.base is None or v.new is None:
                return float("inf")
            return abs(v.new.median - v.base.median)

        rows.sort(key=lambda v: (-size(v), v.label))
        lines.append(f"{title} (median per call: base -> new)")
        lines.append(f"  {'base':>11} {'new':>11} {'ratio':>7}  {'change':<8} name")
        for v in rows[:n]:
            b = _t(v.base.median) if v.base else "-"
            w = _t(v.new.median) if v.new else "-"
            r = f"{v.ratio:.2f}x" if v.ratio is not None else "-"
            flag = "FAIL" if v.failed else v.change
            lines.append(f"  {b:>11} {w:>11} {r:>7}  {flag:<8} {v.label}")
        if len(rows) > n:
            lines.append(f"  ... {len(rows) - n} more")
        lines.append("")
    failed = [v for v in verdicts if v.failed]
    if failed:
        lines.append(f"FAILED: {len(failed)} entries slower than allowed")
        for v in failed:
            lines.append(f"  {v.kind} {v.label}: {v.reason}")
    return "\n".join(lines) + "\n"
