"""Static memory plan: which intermediates share a buffer kept across calls.

A value's lifetime runs from the node producing it to the last node reading it or any of
its aliases (views and in-place outputs keep their base alive).  Intermediates whose
lifetimes do not overlap and whose (dtype, ndim) agree get the same buffer (a linear scan
over the schedule, as interval colouring).  Under gc the VM then hands each producing node
its buffer's array as the output slot's previous value (the C thunk ABI lets a thunk
overwrite it) and takes the array back when the slot is cleared, so steady-state calls
allocate only their outputs.  A thunk still allocates when the array is held elsewhere
(reference count above one) or has the wrong shape, so a plan can never corrupt a value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from graphc.graph.basic import Apply, Variable
from graphc.linker.program import NodeSpec, Program, last_readers
from graphc.opt.utils import size_key
from graphc.tensor.elemwise import Elemwise

__all__ = ["MemoryPlan", "SlotInfo", "plan_memory", "slot_infos", "NO_BUFFER"]

NO_BUFFER = -1


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """What the planner needs to know about one slot's value."""

    key: Hashable | None = None  # buffers are shared only between equal keys; None: never
    alias_of: int | None = None  # the input slot this value views or overwrites in place


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Per slot, the buffer it borrows (``NO_BUFFER`` for none)."""

    buffer_of: tuple[int, ...]
    n_buffers: int

    @property
    def n_planned(self) -> int:
        """Number of slots that borrow a buffer."""
        return sum(1 for b in self.buffer_of if b != NO_BUFFER)


def _roots(program: Program, info: Sequence[SlotInfo]) -> list[int]:
    root = list(range(program.n_storage))
    for node in program.nodes:
        for s in node.outputs:
            a = info[s].alias_of
            if a is not None:
                root[s] = root[a]
    return root


def plan_memory(program: Program, info: Sequence[SlotInfo] | None = None) -> MemoryPlan:
    """Assign the intermediates of ``program`` to reusable buffers.

    Only values written by nodes with a C thunk or a ``perform`` that reuses its output
    cells' arrays (``NodeSpec.reuses_outputs``) are planned (a numpy ``perform`` ignores
    the previous value); program outputs, anything a program output aliases, lazy programs
    and values with a ``None`` key get no buffer.
    """
    n = program.n_storage
    if info is None:
        info = [SlotInfo() for _ in range(n)]
    if len(info) != n:
        raise ValueError(f"plan_memory: {len(info)} slot infos for {n} slots")
    none = MemoryPlan(buffer_of=(NO_BUFFER,) * n, n_buffers=0)
    if program.has_lazy:
        return none
    root = _roots(program, info)
    producer = [-1] * n
    for i, node in enumerate(program.nodes):
        for s in node.outputs:
            producer[s] = i
    last = last_readers(program)
    end = [-1] * n  # per root: last node using it or any alias
    escapes = set()  # roots some program output aliases
    for s in range(n):
        r = root[s]
        end[r] = max(end[r], last[s], producer[s])
    for s in program.outputs:
        escapes.add(root[s])
    candidates = [
        s
        for s in range(n)
        if producer[s] >= 0
        and root[s] == s
        and s not in escapes
        and info[s].key is not None
        and info[s].alias_of is None
        and _writes_into_buffers(program.nodes[producer[s]])
    ]
    by_start: dict[int, list[int]] = {}
    for s in candidates:
        by_start.setdefault(producer[s], []).append(s)
    buffer_of = [NO_BUFFER] * n
    free: dict[Any, list[int]] = {}  # key -> buffers free now
    # end node -> (buffer, key) in the order taken; a value produced by node j ends at a
    # node >= j, so its buffer is free again from node end + 1 on
    busy: dict[int, list[tuple[int, Any]]] = {}
    n_buffers = 0
    for i in range(len(program.nodes)):
        for b, k in busy.pop(i - 1, ()):
            free.setdefault(k, []).append(b)
        for s in by_start.get(i, ()):
            k = info[s].key
            pool = free.get(k)
            if pool:
                b = pool.pop()
            else:
                b, n_buffers = n_buffers, n_buffers + 1
            buffer_of[s] = b
            busy.setdefault(end[s], []).append((b, k))
    return MemoryPlan(buffer_of=tuple(buffer_of), n_buffers=n_buffers)


def _writes_into_buffers(node: NodeSpec) -> bool:
    return node.c_thunk is not None or node.reuses_outputs


def slot_infos(order: Sequence[Apply], slots: dict[Variable, int]) -> list[SlotInfo]:
    """``SlotInfo`` per slot from the graph: for tensors the key is the dtype and, per
    axis, a size class (``size_classes``), so buffers change hands between values of one
    shape; ``alias_of`` from each Op's ``view_map`` and ``destroy_map``."""
    info = [SlotInfo() for _ in range(len(slots))]
    size_class = size_classes(order)
    for v, s in slots.items():
        t = v.type
        dtype, shape = getattr(t, "dtype", None), getattr(t, "shape", None)
        if isinstance(dtype, str) and isinstance(shape, tuple):
            info[s] = SlotInfo(key=(dtype, tuple(size_class(v, a) for a in range(len(shape)))))
    for node in order:
        aliases = {**node.op.view_map, **node.op.destroy_map}
        for o, ins in aliases.items():
            if ins:
                s = slots[node.outputs[o]]
                info[s] = SlotInfo(key=info[s].key, alias_of=slots[node.inputs[ins[0]]])
    return info


def size_classes(order: Sequence[Apply]) -> Callable[[Variable, int], Hashable]:
    """A function giving each (variable, axis) its size class: ``size_key`` (sizes surely
    equal), with the sizes an Elemwise's output and inputs share on an axis no input has
    static size 1 put in one class. Those are equal unless an input is broadcast from
    size 1 at run time; a wrong guess costs the thunk one allocation, never a value."""
    memo: dict = {}
    parent: dict[Hashable, Hashable] = {}  # union-find over size keys

    def find(key: Hashable) -> Hashable:
        while parent.get(key, key) != key:
            up = parent[key]
            parent[key] = key = parent.get(up, up)  # path halving
        return key

    for group in _elemwise_size_groups(order):
        roots = {find(size_key(v, axis, memo)) for v, axis in group}
        first = min(roots, key=repr)  # a deterministic representative
        for r in roots:
            parent[r] = first
    return lambda var, axis: find(size_key(var, axis, memo))


def _elemwise_size_groups(order: Sequence[Apply]) -> Iterator[list[tuple[Variable, int]]]:
    """Per Elemwise output and axis: that axis of the output and of every input it reads
    that is not statically of size 1."""
    for node in order:
        if isinstance(node.op, Elemwise):
            for k, out in enumerate(node.outputs):
                ins = [node.inputs[j] for j in node.op.output_inputs(node, k)]
                for axis in range(len(_shape(out))):
                    yield [(out, axis)] + [(i, axis) for i in ins if _shape(i)[axis] != 1]


def _shape(var: Variable) -> tuple[int | None, ...]:
    return getattr(var.type, "shape", ())
