"""Noise-aware comparison of profiles: a bootstrap interval on the ratio of medians.

Pure functions over profile data. Each side is one profile or several (one per process):
with several, an entry's sample is its median per process, so drift between processes
(CPU frequency, BLAS threads, a busy neighbour) is part of the measured noise. When both
sides have as many processes, the k-th of each ran back to back (``graphc-prof ab``) and
the interval is that of the paired ratios (Student's t on their logarithms): a drift of
the machine shared by a pair cancels. An entry fails only when the whole confidence
interval of ``new / base`` lies above the threshold; too few samples, or an interval too
wide to decide, make it "unstable".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.summaries.diff import match_nodes

#: Verdicts, from worst to best. Only "slower" fails: its whole interval is above the gate.
#: "slower, below the gate": the interval lies above 1 but not wholly above the gate;
#: "unmatched": the entry is in one profile only (``n_base`` or ``n_new`` is 0).
SLOWER_BELOW = "slower, below the gate"
#: The ``vm_kind`` of a timed entry: a record a workload made of times it measured itself
#: (e.g. compiles), held as its one node's samples; compared as a function only.
TIMED = "timed"
VERDICTS = ("slower", SLOWER_BELOW, "unstable", "unmatched", "same", "faster")


@dataclass(frozen=True)
class Options:
    """How strict a comparison is."""

    threshold: float = 1.5  # fail when the whole interval is above this ratio
    confidence: float = 0.95
    min_samples: int = 5  # per side, within one profile; 3 per side across processes
    max_width: float = 1.6  # interval high / low above this: "unstable"
    min_matched: float = 0.9  # share of the base time that must be matched
    n_boot: int = 2000
    seed: int = 0
    #: runs of two versions, as many a side: the k-th of each ran back to back (``ab``)
    paired: bool = True


@dataclass(frozen=True)
class Entry:
    """One compared function, Op or Apply node."""

    kind: str  # "function", "op" or "apply"
    label: str
    base_ns: float | None  # median per call
    new_ns: float | None
    n_base: int
    n_new: int
    ratio: float | None
    low: float | None
    high: float | None
    verdict: str

    @property
    def failed(self) -> bool:
        return self.verdict == "slower"


@dataclass(frozen=True)
class Coverage:
    """How much of the base profile's time found its counterpart in the new one."""

    matched_share: float
    unmatched_base: tuple[str, ...]  # functions of base absent from new
    unmatched_new: tuple[str, ...]  # functions of new absent from base

    @property
    def hint(self) -> str:
        if not self.unmatched_base:
            return "the graphs changed: most base nodes have no counterpart in the new profile"
        if self.unmatched_new:
            pairs = " ".join(f"--rename {a}={b}" for a, b in zip(self.unmatched_base,
                                                                 self.unmatched_new))  # fmt: skip
            return f"functions not in the new profile; if they were renamed, map them: {pairs}"
        return "functions not in the new profile: " + ", ".join(self.unmatched_base)


@dataclass(frozen=True)
class Report:
    """A whole comparison: the entries, the coverage and whether the gate failed."""

    entries: tuple[Entry, ...]
    coverage: Coverage
    options: Options

    @property
    def slower(self) -> list[Entry]:
        return [e for e in self.entries if e.failed]

    @property
    def under_matched(self) -> bool:
        return self.coverage.matched_share < self.options.min_matched

    @property
    def failed(self) -> bool:
        return bool(self.slower) or self.under_matched

    def to_json(self) -> dict:
        """Plain data for machines (``graphc-prof diff --json``)."""
        cov = asdict(self.coverage)
        cov["hint"] = self.coverage.hint if self.under_matched else ""
        return {
            "failed": self.failed,
            "options": asdict(self.options),
            "coverage": cov,
            "entries": [dict(asdict(e), failed=e.failed) for e in self.entries],
        }


# ----------------------------------------------------------------------------- statistics


def median_ratio_interval(
    base: Sequence[float], new: Sequence[float], confidence: float = 0.95,
    n_boot: int = 2000, seed: int = 0,
) -> tuple[float, float, float]:  # fmt: skip
    """``median(new) / median(base)`` and its bootstrap percentile interval."""
    a = np.asarray(base, dtype=float)
    b = np.asarray(new, dtype=float)
    if a.size == 0 or b.size == 0:
        raise ValueError("median_ratio_interval needs samples on both sides")
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, a.size, (n_boot, a.size))], axis=1)
    mb = np.median(b[rng.integers(0, b.size, (n_boot, b.size))], axis=1)
    ratios = mb / np.maximum(ma, 1e-9)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    ratio = float(np.median(b) / max(float(np.median(a)), 1e-9))
    return ratio, float(low), float(high)


def _t_coverage(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom (Abramowitz and Stegun
    26.7.3-4: a finite series for an integer ``df``)."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:
        term, acc = math.cos(theta), 0.0
        for k in range(1, (df - 1) // 2 + 1):
            acc += term
            term *= c2 * (2 * k) / (2 * k + 1)
        return 2 / math.pi * (theta + s * acc) if df > 1 else 2 / math.pi * theta
    term, acc = 1.0, 0.0
    for k in range(df // 2):
        acc += term
        term *= c2 * (2 * k + 1) / (2 * k + 2)
    return s * acc


def t_quantile(confidence: float, df: int) -> float:
    """The ``t`` with ``P(|T| <= t) = confidence`` (bisection on :func:`_t_coverage`)."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_coverage(mid, df) < confidence else (lo, mid)
    return (lo + hi) / 2


def paired_ratio_interval(
    base: Sequence[float], new: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """The geometric mean of the paired ratios ``new[k] / base[k]`` and its Student-t
    interval: a drift shared by the two runs of a pair cancels in their ratio, and the
    spread of the ratios, not of the runs, sets the width."""
    d = np.log(np.maximum(np.asarray(new, float), 1e-9) / np.maximum(np.asarray(base, float),
                                                                     1e-9))  # fmt: skip
    if d.size < 2:
        raise ValueError("paired_ratio_interval needs at least two pairs")
    half = t_quantile(confidence, d.size - 1) * float(np.std(d, ddof=1)) / math.sqrt(d.size)
    m = float(np.mean(d))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def judge(
    kind: str, label: str, base: Sequence[float] | None, new: Sequence[float] | None,
    opts: Options, min_samples: int | None = None, paired: bool = False,
) -> Entry:  # fmt: skip
    """Compare two sample sets: "slower" only when the whole interval is above the
    threshold, "slower, below the gate" when it is above 1 but not wholly above the
    threshold, "faster" when it is wholly below 1, "unstable" when there are too few
    samples or the interval is too wide to tell, else "same" (the interval holds 1).
    An entry with samples on one side only is "unmatched". ``paired``: ``base[k]`` and
    ``new[k]`` ran back to back (``paired_ratio_interval``), else independent samples
    (``median_ratio_interval``)."""
    need = opts.min_samples if min_samples is None else min_samples
    med = lambda s: float(np.median(s)) if s else None  # noqa: E731
    nb, nn = len(base or ()), len(new or ())
    if not base or not new:
        return Entry(kind, label, med(base), med(new), nb, nn, None, None, None, "unmatched")
    if paired and nb == nn >= 2:
        ratio, low, high = paired_ratio_interval(base, new, opts.confidence)
    else:
        ratio, low, high = median_ratio_interval(base, new, opts.confidence, opts.n_boot, opts.seed)
    if nb < need or nn < need:
        verdict = "unstable"
    elif low > opts.threshold:
        verdict = "slower"
    elif low > 1:
        verdict = SLOWER_BELOW
    elif high < 1:
        verdict = "faster"
    elif high / max(low, 1e-12) > opts.max_width:
        verdict = "unstable"
    else:
        verdict = "same"
    return Entry(kind, label, med(base), med(new), nb, nn, ratio, low, high, verdict)


# ----------------------------------------------------------------------------- samples


def aligned_sum(series: Sequence[Sequence[int]]) -> list[int]:
    """Per-call sums of several nodes' recent samples (the last calls each one kept)."""
    series = [s for s in series if s]
    if not series:
        return []
    m = min(len(s) for s in series)
    return [int(x) for x in np.sum([np.asarray(s[-m:], dtype=np.int64) for s in series], 0)]


def node_samples(node: NodeRecord) -> list[int]:
    """Per-call times of a node; its mean when no samples were kept."""
    if node.ns_samples:
        return list(node.ns_samples)
    return [node.ns_total // node.calls] if node.calls else []


def function_samples(fp: FunctionProfile) -> list[int]:
    """Per-call times of a function: its nodes' per-call samples summed (added nodes count)."""
    return aligned_sum([node_samples(n) for n in fp.nodes])


def _renamed(
    fps: Sequence[FunctionProfile], rename: Mapping[str, str]
) -> dict[str, FunctionProfile]:
    return {rename.get(f.name, f.name): f for f in fps}


def entry_samples(
    fps: Sequence[FunctionProfile], rename: Mapping[str, str]
) -> dict[tuple[str, str], list[int]]:
    """Samples per (kind, label) of one profile: functions, Ops and Apply nodes (a timed
    entry, ``vm_kind`` ``TIMED``, as a function only)."""
    out: dict[tuple[str, str], list[int]] = {}
    ops: dict[str, list[list[int]]] = {}
    for name, fp in _renamed(fps, rename).items():
        out[("function", name)] = function_samples(fp)
        if fp.vm_kind == TIMED:
            continue
        for n in fp.nodes:
            ops.setdefault(n.op_name, []).append(node_samples(n))
            out[("apply", f"{name}: {n.position} {n.apply_name}")] = node_samples(n)
    for op, series in ops.items():
        out[("op", op)] = aligned_sum(series)
    return out


# ----------------------------------------------------------------------------- comparison


def coverage(
    base: Sequence[FunctionProfile], new: Sequence[FunctionProfile],
    rename: Mapping[str, str] | None = None,
) -> Coverage:  # fmt: skip
    """Share of the base's node time whose function and node are found in ``new``."""
    rename = rename or {}
    a, b = _renamed(base, rename), {f.name: f for f in new}
    total = matched = 0
    for name, fa in a.items():
        fb = b.get(name)
        pairs = match_nodes(fa.nodes, fb.nodes if fb else [])
        for x, y in pairs:
            if x is None:
                continue
            total += x.ns_total
            if y is not None:
                matched += x.ns_total
    share = matched / total if total else (1.0 if not a else 0.0)
    return Coverage(share, tuple(n for n in a if n not in b), tuple(n for n in b if n not in a))


def _side_samples(
    runs: Sequence[Sequence[FunctionProfile]], rename: Mapping[str, str]
) -> dict[tuple[str, str], list[float | None]]:
    """Per entry: the samples of one run, or the per-run medians of several (None for a
    run without the entry, so that the k-th values of two sides stay a pair)."""
    per_run = [entry_samples(r, rename) for r in runs]
    if len(per_run) == 1:
        return {k: [float(x) for x in v] for k, v in per_run[0].items()}
    out: dict[tuple[str, str], list[float | None]] = {}
    for k, run in enumerate(per_run):
        for key, s in run.items():
            if s:
                out.setdefault(key, [None] * len(per_run))[k] = float(np.median(s))
    return out


def _pairs(
    a: list[float | None] | None, b: list[float | None] | None, paired: bool
) -> tuple[list[float] | None, list[float] | None]:
    """The values to judge: the complete pairs when paired, else every value of each side."""
    if a is None or b is None:
        return ([x for x in a if x is not None] if a else None,
                [x for x in b if x is not None] if b else None)  # fmt: skip
    if paired:
        both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        return [x for x, _ in both], [y for _, y in both]
    return [x for x in a if x is not None], [y for y in b if y is not None]


def compare_runs(
    base: Sequence[Sequence[FunctionProfile]], new: Sequence[Sequence[FunctionProfile]],
    opts: Options | None = None, rename: Mapping[str, str] | None = None,
) -> Report:  # fmt: skip
    """Compare the runs of two versions (one profile per process on each side).

    Functions pair by name (after ``rename``, old name -> new name); Apply nodes as
    ``match_nodes`` pairs them (name and position, else Op class, source lines, shapes),
    a node whose name changed labelled by both names. The whole comparison fails when an
    entry is "slower" or when less than ``opts.min_matched`` of the base's time is matched
    in the new profile.
    """
    opts = opts or Options()
    rename = dict(rename or {})
    if not base or not new:
        raise ValueError("compare_runs needs at least one profile per side")
    labels_a, labels_b = _apply_labels(base[0], new[0], rename)
    sa = _relabel(_side_samples(base, rename), labels_a)
    sb = _relabel(_side_samples(new, {}), labels_b)
    need = opts.min_samples if len(base) == 1 and len(new) == 1 else 3
    paired = opts.paired and len(base) == len(new) > 1
    entries = []
    order = {"function": 0, "op": 1, "apply": 2}
    for key in sorted(set(sa) | set(sb), key=lambda k: (order[k[0]], k[1])):
        a, b = _pairs(sa.get(key), sb.get(key), paired)
        entries.append(judge(key[0], key[1], a, b, opts, need, paired))
    cov = coverage(base[0], new[0], rename)
    return Report(tuple(entries), cov, opts)


def _apply_key(name: str, node: NodeRecord) -> tuple[str, str]:
    return ("apply", f"{name}: {node.position} {node.apply_name}")


def _apply_labels(
    base: Sequence[FunctionProfile], new: Sequence[FunctionProfile], rename: Mapping[str, str]
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """The label each side's Apply entries are compared under: matched nodes share one
    (``f: 3 A(x) -> 4 B(x)`` when the name or position changed), unmatched keep theirs."""
    a, b = _renamed(base, rename), {f.name: f for f in new}
    la: dict[tuple[str, str], str] = {}
    lb: dict[tuple[str, str], str] = {}
    for name in [*a, *(n for n in b if n not in a)]:
        fa, fb = a.get(name), b.get(name)
        for x, y in match_nodes(fa.nodes if fa else [], fb.nodes if fb else []):
            kx = _apply_key(name, x) if x is not None else None
            ky = _apply_key(name, y) if y is not None else None
            label = (kx or ky or ("", ""))[1]
            if kx and ky and kx != ky:
                label = f"{kx[1]} -> {ky[1].split(': ', 1)[1]}"
            if kx:
                la[kx] = label
            if ky:
                lb[ky] = label
    return la, lb


def _relabel(
    samples: dict[tuple[str, str], list[float | None]], labels: Mapping[tuple[str, str], str]
) -> dict[tuple[str, str], list[float | None]]:
    return {(k[0], labels.get(k, k[1])) if k[0] == "apply" else k: v
            for k, v in samples.items()}  # fmt: skip


def compare(
    base: Sequence[FunctionProfile], new: Sequence[FunctionProfile],
    opts: Options | None = None, rename: Mapping[str, str] | None = None,
) -> Report:  # fmt: skip
    """Compare two single profiles (the samples each node kept)."""
    return compare_runs([base], [new], opts, rename)
