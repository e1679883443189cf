"""The Program: the flat, validated description of a compiled function that a VM runs.

Storage is an array of ``n_storage`` value slots.  Program inputs, constants and node
outputs each write disjoint slots; every slot a node reads must be written by an input, a
constant or an earlier node (the node list is a schedule, i.e. topologically sorted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["NodeSpec", "Program", "last_readers", "gc_schedule"]


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One Apply node of a Program.

    Exactly one implementation is required: ``perform``, ``c_thunk`` or ``lazy``.  A node
    with a ``c_thunk`` may also carry ``perform`` as a fallback (used by the "py" linker or
    when C is unavailable); the VMs always run the ``c_thunk`` when there is one.
    """

    name: str
    inputs: tuple[int, ...]  # slots read, in the Apply's input order
    outputs: tuple[int, ...]  # slots written; contiguous and ascending
    perform: Callable[[list, list], None] | None = None  # perform(inputs, output_cells)
    c_thunk: Any = None  # PyCapsule "graphc.thunk" holding a graphc_thunk_fn
    c_params: Any = None  # PyCapsule "graphc.params": the thunk's void *params
    lazy: Callable[[list, list, list], Sequence[int]] | None = None
    destroys: tuple[int, ...] = ()  # input positions overwritten in place
    # perform writes into the arrays its output cells hold on entry when nothing else
    # holds them (Op.reuses_outputs): the memory plan may lend it buffers
    reuses_outputs: bool = False

    def __post_init__(self) -> None:
        for field in ("inputs", "outputs", "destroys"):
            _check_ints(getattr(self, field), f"node {self.name!r}: {field}")
        outs = self.outputs
        if any(b != a + 1 for a, b in zip(outs, outs[1:])):
            raise ValueError(f"node {self.name!r}: outputs {outs} are not contiguous ascending")
        if self.lazy is not None:
            if self.perform is not None or self.c_thunk is not None:
                raise ValueError(f"node {self.name!r}: a lazy node has no perform or c_thunk")
        elif self.perform is None and self.c_thunk is None:
            raise ValueError(f"node {self.name!r}: needs one of perform, c_thunk or lazy")
        if self.c_params is not None and self.c_thunk is None:
            raise ValueError(f"node {self.name!r}: c_params without c_thunk")
        if self.reuses_outputs and (self.perform is None or self.c_thunk is not None):
            raise ValueError(f"node {self.name!r}: reuses_outputs is for a perform-only node")
        for p in self.destroys:
            if not 0 <= p < len(self.inputs):
                raise ValueError(f"node {self.name!r}: destroys input position {p} out of range")
        if self.perform is not None and not callable(self.perform):
            raise TypeError(f"node {self.name!r}: perform is not callable")
        if self.lazy is not None and not callable(self.lazy):
            raise TypeError(f"node {self.name!r}: lazy is not callable")

    @property
    def out_start(self) -> int:
        """First output slot (0 for a node without outputs)."""
        return self.outputs[0] if self.outputs else 0


@dataclass(frozen=True, slots=True)
class Program:
    """What a linker hands to a VM (see docs/architecture.md)."""

    n_storage: int  # number of slots
    inputs: tuple[int, ...]  # slots receiving the call's arguments, in order
    outputs: tuple[int, ...]  # slots returned by a call (function outputs, then updates)
    constants: tuple[tuple[int, Any], ...]  # (slot, value) pairs filled once, never freed
    nodes: tuple[NodeSpec, ...]  # in schedule (topological) order
    buffers: tuple[int, ...] = ()  # per slot, memory-plan buffer or -1; () for no plan

    def __post_init__(self) -> None:
        n = self.n_storage
        if type(n) is not int:
            raise TypeError(f"n_storage must be an int, got {type(n).__name__}")
        if n < 0:
            raise ValueError("n_storage must be >= 0")
        for field in ("inputs", "outputs", "buffers"):
            _check_ints(getattr(self, field), field)
        if type(self.constants) is not tuple or type(self.nodes) is not tuple:
            raise TypeError("constants and nodes must be tuples")
        _check_ints(tuple(c[0] for c in self.constants), "constant slots")
        if self.buffers and (len(self.buffers) != n or min(self.buffers) < -1):
            raise ValueError("buffers: one buffer index (or -1) per slot expected")

        def check(slot: int, what: str) -> None:
            if not 0 <= slot < n:
                raise ValueError(f"{what}: slot {slot} out of range [0, {n})")

        writer: dict[int, str] = {}

        def write(slot: int, what: str) -> None:
            check(slot, what)
            if slot in writer:
                raise ValueError(f"{what}: slot {slot} is already written by {writer[slot]}")
            writer[slot] = what

        for s in self.inputs:
            write(s, "program input")
        for s, _ in self.constants:
            write(s, "constant")
        for i, node in enumerate(self.nodes):
            if not isinstance(node, NodeSpec):
                raise TypeError(f"nodes[{i}] is not a NodeSpec")
            what = f"node {i} ({node.name!r})"
            for s in node.inputs:
                check(s, what)
                if s not in writer:
                    raise ValueError(f"{what}: reads slot {s} before anything writes it")
            for s in node.outputs:
                write(s, what)
        for s in self.outputs:
            check(s, "program output")
            if s not in writer:
                raise ValueError(f"program output slot {s} is never written")

    @property
    def has_lazy(self) -> bool:
        """True when some node is lazy (the VMs then use stack-based evaluation)."""
        return any(node.lazy is not None for node in self.nodes)


def _check_ints(values: Any, what: str) -> None:
    """``values`` must be a tuple of ints (slot or position numbers, as the VMs read them)."""
    if type(values) is not tuple or any(type(v) is not int for v in values):
        raise TypeError(f"{what} must be a tuple of ints, got {values!r}")


def last_readers(program: Program) -> list[int]:
    """Per slot, the index of the last node (in schedule order) reading it, or -1."""
    last = [-1] * program.n_storage
    for i, node in enumerate(program.nodes):
        for s in node.inputs:
            last[s] = i
    return last


def gc_schedule(program: Program) -> list[tuple[int, ...]]:
    """Per node, the slots to clear right after it runs (garbage collection).

    Only intermediates are cleared: slots written by a node that are not program outputs.
    An intermediate is cleared after its last reader, or right after its producer when
    nothing reads it.  Program inputs, constants and outputs are never in the schedule.
    """
    keep = set(program.outputs)
    last = last_readers(program)
    plan: list[list[int]] = [[] for _ in program.nodes]
    for i, node in enumerate(program.nodes):
        for s in node.outputs:
            if s not in keep:
                plan[max(last[s], i)].append(s)
    return [tuple(sorted(p)) for p in plan]
