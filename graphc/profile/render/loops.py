"""The "Scan Op profiles" section: each loop node's step function as its children, with
inclusive and exclusive time per call (the numbers come from ``summaries.loops``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graphc.profile.data.model import FunctionProfile
from graphc.profile.render.fmt import duration, middle_ellipsis, nbytes, table
from graphc.profile.summaries.loops import LoopSummary, loop_summaries


def memory_line(lp: LoopSummary) -> str:
    """The loop's memory: its stacked outputs, and what one step allocates and keeps."""
    parts = [f"stacked outputs {nbytes(lp.stacked_bytes)}"]
    body = lp.body
    if body.measured_peak_bytes is not None:
        parts.append(f"one step's peak {nbytes(body.measured_peak_bytes)}")
    if body.memory_plan is not None and body.memory_plan.bytes:
        plan = body.memory_plan
        parts.append(f"kept between steps {nbytes(plan.bytes)} in {plan.buffers} buffers")
    return "memory: " + ", ".join(parts)


def render_loops(
    fps: Sequence[FunctionProfile],
    width: int,
    tables: Callable[[FunctionProfile], list[str]],
    n_rows: int = 10,
) -> list[str]:
    """The "Scan Op profiles" section: per loop node, its children with inclusive and
    exclusive time per call, then ``tables(step profile)`` (its Class/Ops/Apply)."""
    loops = loop_summaries(fps)
    if not loops:
        return []
    lines = ["Scan Op profiles (each loop's step; times per call of the enclosing function)",
             "---"]  # fmt: skip
    for lp in loops:
        calls = max(lp.calls, 1)
        steps = lp.steps / calls
        per_step = lp.ns / max(lp.steps, 1)
        lines.append(
            f"{middle_ellipsis(lp.name, max(width - 60, 30))} (node {lp.position} of "
            f"{lp.function}): {duration(lp.ns / calls)}/call, {steps:.0f} steps/call, "
            f"{duration(per_step)}/step"
        )
        headers = ["<% loop>", "<incl./call>", "<excl./call>", "<per step>", "<child>"]
        body = []
        shown = lp.rows[:n_rows] + [r for r in lp.rows[n_rows:] if r.per_step == 0]
        for r in shown:
            share = 100.0 * r.inclusive_ns / max(lp.ns / calls, 1)
            body.append([f"{share:5.1f}%", duration(r.inclusive_ns),
                         duration(r.exclusive_ns), f"{r.per_step:g}" if r.per_step else "",
                         r.label])  # fmt: skip
        lines += ["  " + line for line in table(headers, body, width=width - 2)]
        lines.append("  " + memory_line(lp))
        hidden = len(lp.rows) - len(shown)
        if hidden:
            lines.append(f"  ... (remaining {hidden} nodes of the step)")
        lines.append("")
        lines += tables(lp.body)
    return lines
