"""Loop nodes (scan) in the report: each one's step function as its children.

A loop node's time splits into the time of its step's nodes, the VM's dispatch between
them, and the loop's own bookkeeping (slicing the sequences, storing each step's outputs).
The rows below a loop node add up to its time exactly; a nested loop's inclusive time
covers its own children, its exclusive time only its bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graphc.profile.data.model import FunctionProfile, NodeRecord


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
