"""The text of a comparison report (``graphc-prof diff`` and ``graphc-prof ab``)."""

from __future__ import annotations

from graphc.profile.render.fmt import duration
from graphc.profile.summaries.compare import SLOWER_BELOW, VERDICTS, Entry, Report


def _ns(ns: float | None) -> str:
    return "-" if ns is None else duration(ns, ms_digits=3)


def _verdict(e: Entry) -> str:
    """The verdict cell; an entry in one profile only says which."""
    if e.verdict == "unmatched":
        return "unmatched (base only)" if e.n_new == 0 else "unmatched (new only)"
    return f"{e.verdict:<8}"


def render(report: Report, n: int = 20) -> str:
    """The comparison as a table: base, new, ratio with its interval, verdict."""
    o = report.options
    lines = [f"Comparison (median per call; {o.confidence:.0%} interval of new/base; "
             f"gate {o.threshold:g}x)"]  # fmt: skip
    titles = {"function": "Functions", "op": "Ops", "apply": "Apply nodes"}
    rank = {v: i for i, v in enumerate(VERDICTS)}
    for kind, title in titles.items():
        rows = [e for e in report.entries if e.kind == kind]
        if not rows:
            continue
        rows.sort(key=lambda e: (rank[e.verdict], -(e.base_ns or e.new_ns or 0), e.label))
        lines.append(f"{title}")
        lines.append(f"  {'base':>10} {'new':>10} {'ratio':>6} {'interval':>13}  "
                     f"{'verdict':<8} name")  # fmt: skip
        for e in rows[:n]:
            r = f"{e.ratio:.2f}x" if e.ratio is not None else "-"
            ci = f"[{e.low:.2f}, {e.high:.2f}]" if e.low is not None else "-"
            lines.append(f"  {_ns(e.base_ns):>10} {_ns(e.new_ns):>10} {r:>6} {ci:>13}  "
                         f"{_verdict(e)} {e.label}")  # fmt: skip
        if len(rows) > n:
            lines.append(f"  ... {len(rows) - n} more")
        lines.append("")
    cov = report.coverage
    lines.append(f"Matched: {cov.matched_share:.0%} of the base time (need {o.min_matched:.0%})")
    if report.under_matched:
        lines.append(f"FAILED: too little of the base profile is matched; {cov.hint}")
    for e in report.slower:
        lines.append(f"FAILED: {e.kind} {e.label}: {e.ratio:.2f}x, interval "
                     f"[{e.low:.2f}, {e.high:.2f}] > {o.threshold:g}x")  # fmt: skip
    unstable = [e for e in report.entries if e.verdict == "unstable"]
    if unstable:
        names = ", ".join(f"{e.kind} {e.label}" for e in unstable[:5])
        more = f" and {len(unstable) - 5} more" if len(unstable) > 5 else ""
        lines.append(f"NOT JUDGED: {len(unstable)} unstable (too few or too spread samples; "
                     f"more calls or processes would decide): {names}{more}")  # fmt: skip
    below = [e for e in report.entries if e.verdict == SLOWER_BELOW]
    if below:
        names = ", ".join(f"{e.kind} {e.label} ({e.ratio:.2f}x)" for e in below[:5])
        more = f" and {len(below) - 5} more" if len(below) > 5 else ""
        lines.append(f"SLOWER, BELOW THE GATE: {len(below)} (interval above 1, not wholly above "
                     f"{o.threshold:g}x): {names}{more}")  # fmt: skip
    unmatched = [e for e in report.entries if e.verdict == "unmatched" and e.kind == "apply"]
    if unmatched:
        lines.append(
            f"NOT MATCHED: {len(unmatched)} Apply node(s) found in one profile only "
            "(no node of the same Op class, source line, shapes or position)"
        )
    if not report.failed:
        lines.append(f"OK: nothing slower than {o.threshold:g}x beyond the noise")
    return "\n".join(lines) + "\n"
