"""Loop nodes (scan) in the report: each one's step function as its children.

A loop node's time splits into the time of its step's nodes, the VM's dispatch between
them, and the loop's own bookkeeping (slicing the sequences, storing each step's outputs).
The rows below a loop node add up to its time exactly; a nested loop's inclusive time
covers its own children, its exclusive time only its bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from graphc.profile.fmt import duration, middle_ellipsis, nbytes, table
from graphc.profile.model import FunctionProfile, NodeRecord


@dataclass
class LoopRow:
    """One child of a loop node, per call of the enclosing function."""

    label: str
    inclusive_ns: float
    exclusive_ns: float
    per_step: float  # calls per step (1 for a node, 0 for the bookkeeping rows)


@dataclass
class LoopSummary:
    """A loop node: its calls, steps and time, and its children's split of that time."""

    function: str
    position: int
    name: str
    calls: int
    steps: int
    ns: int
    rows: list[LoopRow]
    body: FunctionProfile
    stacked_bytes: int = 0  # the loop node's outputs (every step's values), largest call


def inner_ns(fp: FunctionProfile) -> int:
    """Time inside ``fp``'s nodes, nested loops' children included (they are part of the
    loop node's own time)."""
    return sum(n.ns_total for n in fp.nodes)


def loop_summary(fp: FunctionProfile, node: NodeRecord) -> LoopSummary:
    """The split of ``node``'s time (``node.inner`` must be set)."""
    body = node.inner
    assert body is not None
    calls = max(node.calls, 1)
    rows = []
    for n in sorted(body.nodes, key=lambda n: -n.ns_total):
        excl = n.ns_total - (inner_ns(n.inner) if n.inner is not None else 0)
        rows.append(LoopRow(n.apply_name, n.ns_total / calls, excl / calls,
                            n.calls / max(body.calls, 1)))  # fmt: skip
    dispatch = max(body.vm_ns - body.thunk_ns(), 0)
    bookkeeping = max(node.ns_total - body.vm_ns, 0)
    rows.append(LoopRow("(VM dispatch between the step's nodes)", dispatch / calls,
                        dispatch / calls, 0))  # fmt: skip
    rows.append(LoopRow("(loop bookkeeping: slicing inputs, storing outputs)",
                        bookkeeping / calls, bookkeeping / calls, 0))  # fmt: skip
    return LoopSummary(fp.name, node.position, node.apply_name, node.calls, body.calls,
                       node.ns_total, rows, body, _output_bytes(node))  # fmt: skip


def _output_bytes(node: NodeRecord) -> int:
    """Bytes of the node's outputs: as measured, else from the shapes seen."""
    if any(node.out_bytes_max):
        return sum(node.out_bytes_max)
    return sum(int(np.prod(v.shape)) * np.dtype(v.dtype).itemsize
               for v in node.outputs if v.shape is not None)  # fmt: skip


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


def loop_summaries(fps: Sequence[FunctionProfile]) -> list[LoopSummary]:
    """Every loop node of ``fps`` that ran, outermost first, nested loops after their
    parent."""
    out: list[LoopSummary] = []

    def visit(fp: FunctionProfile) -> None:
        for node in fp.nodes:
            if node.inner is not None and node.calls:
                out.append(loop_summary(fp, node))
                visit(node.inner)

    for fp in fps:
        visit(fp)
    return out


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
