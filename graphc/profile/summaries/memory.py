"""Memory model: intermediate storage over the recorded schedule, with and without gc.

Only storage created by Apply nodes counts (function inputs and constants are listed
separately). An output declared inplace ('i') or view ('v') reuses the storage of the input
it aliases (``output_aliases``, default input 0) and adds no bytes; that storage stays alive
while any slot aliasing it is alive. Sizes are each output's largest recorded size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphc.profile.data.memplan import MemoryPlanRecord
from graphc.profile.data.model import FunctionProfile, NodeRecord, StorageRecord
from graphc.profile.summaries.memory_order import OrderPeak, minimum_peak, peak_in_schedule
from graphc.profile.summaries.tables import pct


@dataclass(frozen=True)
class MemoryFigures:
    """Peaks of intermediate storage of one function, in bytes."""

    peak_gc: int
    peak_no_gc: int

    @property
    def saved_by_gc(self) -> int:
        """How much the gc schedule saves at peak."""
        return self.peak_no_gc - self.peak_gc


@dataclass(frozen=True)
class OutputRow:
    """The outputs of one Apply node, for the largest-outputs listing."""

    function: str
    apply_name: str
    nbytes: int
    shapes: tuple[tuple[int, ...] | None, ...]
    kinds: str


def _out_bytes(node: NodeRecord, k: int) -> int:
    return node.out_bytes_max[k] if k < len(node.out_bytes_max) else 0


def _kind(node: NodeRecord, k: int) -> str:
    return node.output_kinds[k] if k < len(node.output_kinds) else "c"


def _alias(node: NodeRecord, k: int) -> int:
    alias = node.output_aliases[k] if k < len(node.output_aliases) else None
    return 0 if alias is None else alias


def storage_roots(fp: FunctionProfile) -> dict[int, int]:
    """Map every slot written by a node to the slot that owns its storage."""
    roots: dict[int, int] = {}
    for node in fp.nodes:
        for k, slot in enumerate(node.output_slots):
            if _kind(node, k) in "iv" and _alias(node, k) < len(node.input_slots):
                src = node.input_slots[_alias(node, k)]
                roots[slot] = roots.get(src, src)
            else:
                roots[slot] = slot
    return roots


def gc_schedule(fp: FunctionProfile) -> list[list[int]]:
    """Slots freed after each node: the recorded ``frees_after`` when any node has one,
    else derived: an intermediate slot is freed after its last reader (or after its
    producer when nothing reads it); function outputs are never freed."""
    if any(n.frees_after is not None for n in fp.nodes):
        return [list(n.frees_after or ()) for n in fp.nodes]
    produced = {s: i for i, n in enumerate(fp.nodes) for s in n.output_slots}
    last = dict(produced)
    for i, node in enumerate(fp.nodes):
        for s in node.input_slots:
            if s in last:
                last[s] = max(last[s], i)
    keep = set(fp.output_slots)
    frees: list[list[int]] = [[] for _ in fp.nodes]
    for slot, i in last.items():
        if slot not in keep:
            frees[i].append(slot)
    return [sorted(f) for f in frees]


def _plan(fp: FunctionProfile) -> tuple[int, set[int]]:
    """``(bytes, slots)`` of the memory plan: buffers kept alive across calls, in which
    the planned slots are stored (they allocate nothing of their own)."""
    plan = fp.memory_plan
    if plan is None or not plan.buffers or not fp.planned_slots:
        return 0, set()
    return plan.bytes, set(fp.planned_slots)


def _created(fp: FunctionProfile, planned: set[int] | None = None) -> list[dict[int, int]]:
    """Bytes of new storage (by root slot) each node allocates (``planned`` slots none)."""
    fixed = {s.slot for s in fp.inputs} | {s.slot for s in fp.constants} | (planned or set())
    out: list[dict[int, int]] = []
    for node in fp.nodes:
        made: dict[int, int] = {}
        for k, slot in enumerate(node.output_slots):
            if _kind(node, k) == "c" and slot not in fixed:
                made[slot] = made.get(slot, 0) + _out_bytes(node, k)
        out.append(made)
    return out


def live_bytes(fp: FunctionProfile) -> list[int]:
    """Per node, in schedule order: bytes of intermediates alive while it runs (its new
    outputs and workspace included, the slots it frees still counted). A buffer lives from
    the node creating it to the last slot sharing it being freed; the memory plan's
    buffers, when the VM keeps one, are alive throughout."""
    roots = storage_roots(fp)
    plan_bytes, planned = _plan(fp)
    alive_slots: dict[int, int] = {}  # root -> number of live slots using it
    size: dict[int, int] = {}
    live = plan_bytes
    out: list[int] = []
    for node, made, frees in zip(fp.nodes, _created(fp, planned), gc_schedule(fp)):
        for root, b in made.items():
            size[root] = b
            live += b
        for slot in node.output_slots:
            root = roots.get(slot, slot)
            alive_slots[root] = alive_slots.get(root, 0) + 1
        out.append(live + node.workspace_bytes)
        for slot in frees:
            root = roots.get(slot, slot)
            if root not in alive_slots:
                continue
            alive_slots[root] -= 1
            if alive_slots[root] == 0:
                del alive_slots[root]
                live -= size.pop(root, 0)
    return out


def peak_with_gc(fp: FunctionProfile) -> int:
    """Largest live intermediate storage over the schedule when slots are freed."""
    return max(live_bytes(fp), default=_plan(fp)[0])


def peak_without_gc(fp: FunctionProfile) -> int:
    """Without gc every created intermediate stays alive: their sum (plus the largest
    scratch workspace, alive only during its node)."""
    scratch = max((n.workspace_bytes for n in fp.nodes), default=0)
    return sum(sum(made.values()) for made in _created(fp)) + scratch


def memory_figures(fp: FunctionProfile) -> MemoryFigures:
    """Peaks with and without gc for one function."""
    return MemoryFigures(peak_with_gc(fp), peak_without_gc(fp))


def output_rows(fps: Sequence[FunctionProfile]) -> list[OutputRow]:
    """Every Apply node's output bytes, largest first (ties keep schedule order)."""
    rows = [
        OutputRow(
            function=f.name,
            apply_name=n.apply_name,
            nbytes=sum(n.out_bytes_max),
            shapes=tuple(v.shape for v in n.outputs) or (None,) * len(n.output_slots),
            kinds="".join(_kind(n, k) for k in range(len(n.output_slots) or len(n.outputs))),
        )
        for f in fps
        for n in f.nodes
    ]
    return sorted(rows, key=lambda r: -r.nbytes)


@dataclass(frozen=True)
class FunctionMemory:
    """One function's peaks, arranged as the current setting and the alternatives."""

    name: str
    vm_kind: str
    other_vm: str
    allow_gc: bool
    current: int
    other_vm_peak: int
    other_gc: int
    saved_by_gc: int
    measured: int | None
    inputs: tuple[StorageRecord, ...]
    constants: tuple[StorageRecord, ...]
    plan: MemoryPlanRecord | None = None
    peak_without_inplace: int | None = None  # in-place outputs counted as new buffers
    min_order: OrderPeak | None = None  # smallest peak over valid node orders


@dataclass(frozen=True)
class MemorySummary:
    """The memory section's numbers."""

    functions: tuple[FunctionMemory, ...]
    shown: tuple[OutputRow, ...]
    remaining_count: int
    remaining_bytes: int
    total_bytes: int
    remaining_pct: float
    min_memory_size: int
    all_small: bool  # every Apply output sum is under min_memory_size
    workspace: tuple[tuple[str, int], ...] = ()  # (Apply name, scratch bytes), largest first


def function_memory(fp: FunctionProfile) -> FunctionMemory:
    """Peaks of one function with its current gc setting and the other choices."""
    fig = memory_figures(fp)
    current, other = (fig.peak_gc, fig.peak_no_gc) if fp.allow_gc else (fig.peak_no_gc, fig.peak_gc)
    return FunctionMemory(
        name=fp.name,
        vm_kind=fp.vm_kind or "-",
        other_vm={"cvm": "py", "py": "cvm"}.get(fp.vm_kind, "the other VM"),
        allow_gc=fp.allow_gc,
        current=current,
        other_vm_peak=current,  # both VMs free storage at the same points
        other_gc=other,
        saved_by_gc=fig.saved_by_gc,
        measured=fp.measured_peak_bytes,
        inputs=tuple(fp.inputs),
        constants=tuple(fp.constants),
        plan=fp.memory_plan,
        peak_without_inplace=peak_in_schedule(fp, inplace=False) if fp.allow_gc else None,
        min_order=minimum_peak(fp) if fp.allow_gc else None,
    )


def memory_summary(
    fps: Sequence[FunctionProfile], n_apply_to_print: int = 20, min_memory_size: int = 1024
) -> MemorySummary:
    """Peaks of the functions that recorded memory and their largest Apply outputs."""
    recorded = [f for f in fps if f.memory_recorded]
    rows = output_rows(recorded)
    shown = [r for r in rows if r.nbytes >= min_memory_size][: max(n_apply_to_print, 0)]
    rest = rows[len(shown) :]
    total = sum(r.nbytes for r in rows)
    rest_bytes = sum(r.nbytes for r in rest)
    return MemorySummary(
        functions=tuple(function_memory(f) for f in recorded),
        shown=tuple(shown),
        remaining_count=len(rest),
        remaining_bytes=rest_bytes,
        total_bytes=total,
        remaining_pct=pct(rest_bytes, total),
        min_memory_size=min_memory_size,
        all_small=bool(rows) and all(r.nbytes < min_memory_size for r in rows),
        workspace=workspace_rows(recorded),
    )


def workspace_rows(fps: Sequence[FunctionProfile]) -> tuple[tuple[str, int], ...]:
    """Nodes that allocate scratch besides their outputs, largest first."""
    several = len(fps) > 1
    rows = [
        (f"{f.name}: {n.apply_name}" if several else n.apply_name, n.workspace_bytes)
        for f in fps
        for n in f.nodes
        if n.workspace_bytes
    ]
    return tuple(sorted(rows, key=lambda r: -r[1]))
