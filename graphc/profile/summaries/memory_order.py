"""Peak intermediate memory under other node orders, and with in-place outputs counted as
new buffers (as if the in-place rewrites were excluded).

The model frees a buffer after the last node (in the order simulated) that reads or writes
any slot sharing it; function outputs are never freed. The minimum over valid orders is an
exhaustive branch-and-bound search for small graphs and a greedy heuristic otherwise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from graphc.profile.data.model import FunctionProfile, NodeRecord

EXHAUSTIVE_MAX_NODES = 12
EXHAUSTIVE_MAX_STEPS = 50_000


@dataclass(frozen=True)
class OrderPeak:
    """The smallest peak found over valid node orders and how it was found."""

    peak: int
    method: str  # "exhaustive" or "greedy"
    seconds: float


def _kind(node: NodeRecord, k: int) -> str:
    return node.output_kinds[k] if k < len(node.output_kinds) else "c"


def _alias_slot(node: NodeRecord, k: int) -> int | None:
    alias = node.output_aliases[k] if k < len(node.output_aliases) else None
    alias = 0 if alias is None else alias
    return node.input_slots[alias] if alias < len(node.input_slots) else None


def _new_bytes(node: NodeRecord, k: int) -> int:
    """Bytes of output ``k`` as a buffer of its own: as recorded, or (an in-place output,
    recorded as 0 since it reuses its input) from its shape and dtype."""
    size = node.out_bytes_max[k] if k < len(node.out_bytes_max) else 0
    if size or _kind(node, k) != "i" or k >= len(node.outputs):
        return size
    value = node.outputs[k]
    if value.shape is None or not value.dtype:
        return 0
    return int(np.prod(value.shape, dtype=np.int64)) * np.dtype(value.dtype).itemsize


class _Model:
    """Dependencies, buffer roots and created bytes of one function's nodes."""

    def __init__(self, fp: FunctionProfile, inplace: bool):
        self.nodes = fp.nodes
        fixed = {s.slot for s in fp.inputs} | {s.slot for s in fp.constants}
        self.root: dict[int, int] = {}
        self.created: list[dict[int, int]] = []
        producer: dict[int, int] = {}
        for i, node in enumerate(fp.nodes):
            made: dict[int, int] = {}
            for k, slot in enumerate(node.output_slots):
                kind = _kind(node, k)
                src = _alias_slot(node, k)
                shares = kind == "v" or (kind == "i" and inplace)
                if shares and src is not None:
                    self.root[slot] = self.root.get(src, src)
                else:
                    self.root[slot] = slot
                    if slot not in fixed:
                        made[slot] = made.get(slot, 0) + _new_bytes(node, k)
                producer[slot] = i
            self.created.append(made)
        self.kept = {self.root.get(s, s) for s in fp.output_slots}
        self.preds: list[set[int]] = [set() for _ in fp.nodes]
        readers: dict[int, list[int]] = {}
        for i, node in enumerate(fp.nodes):
            for s in node.input_slots:
                if s in producer and producer[s] != i:
                    self.preds[i].add(producer[s])
                readers.setdefault(s, []).append(i)
        for i, node in enumerate(fp.nodes):  # a node destroying an input runs after its readers
            for k in range(len(node.output_slots)):
                src = _alias_slot(node, k)
                if _kind(node, k) == "i" and src is not None:
                    self.preds[i].update(r for r in readers.get(src, ()) if r != i)
        self.touches: list[set[int]] = [
            {self.root.get(s, s) for s in (*n.input_slots, *n.output_slots)} for n in fp.nodes
        ]
        self.users: dict[int, set[int]] = {}
        for i, roots in enumerate(self.touches):
            for r in roots:
                self.users.setdefault(r, set()).add(i)

    def peak(self, order: list[int]) -> int:
        """Peak live bytes when the nodes run in ``order``."""
        done: set[int] = set()
        live = peak = 0
        size: dict[int, int] = {}
        for i in order:
            for r, b in self.created[i].items():
                size[r] = b
                live += b
            peak = max(peak, live)
            done.add(i)
            live -= self._freed(i, done, size)
        return peak

    def _freed(self, i: int, done: set[int], size: dict[int, int]) -> int:
        freed = 0
        for r in self.touches[i]:
            if r in size and r not in self.kept and self.users[r] <= done:
                freed += size.pop(r)
        return freed

    def ready(self, done: set[int]) -> list[int]:
        return [i for i in range(len(self.nodes)) if i not in done and self.preds[i] <= done]


def peak_in_schedule(fp: FunctionProfile, inplace: bool = True) -> int:
    """Peak of the recorded schedule; ``inplace=False`` counts in-place outputs as new,
    and, for a VM with a memory plan, adds the buffers the plan would then keep."""
    model = _Model(fp, inplace)
    order = list(range(len(fp.nodes)))
    if inplace or not fp.allow_gc or fp.memory_plan is None:
        return model.peak(order)
    plan_bytes, planned = _simulated_plan(fp, model)
    for made in model.created:
        for r in planned & made.keys():
            del made[r]
    return plan_bytes + model.peak(order)


def _simulated_plan(fp: FunctionProfile, model: _Model) -> tuple[int, set[int]]:
    """The VM's memory plan (``graphc.linker.memplan``) for ``model``'s buffers: values
    of C nodes that no output keeps, sharing a buffer of equal dtype and shape when their
    lifetimes do not overlap. Returns (bytes of the buffers, the planned roots)."""
    end: dict[int, int] = {}
    for i, roots in enumerate(model.touches):
        for r in roots:
            end[r] = i
    free: dict[tuple, list[int]] = {}
    busy: dict[int, list[tuple[int, tuple]]] = {}
    sizes: list[int] = []
    planned: set[int] = set()
    for i, node in enumerate(fp.nodes):
        for b, key in busy.pop(i - 1, ()):
            free.setdefault(key, []).append(b)
        if node.impl != "C":
            continue
        for k, slot in enumerate(node.output_slots):
            size = model.created[i].get(slot)
            if size is None or slot in model.kept or k >= len(node.outputs):
                continue
            key = (node.outputs[k].dtype, node.outputs[k].shape)
            pool = free.get(key)
            b = pool.pop() if pool else len(sizes)
            if b == len(sizes):
                sizes.append(0)
            sizes[b] = max(sizes[b], size)
            planned.add(slot)
            busy.setdefault(end[slot], []).append((b, key))
    return sum(sizes), planned


def _greedy(model: _Model) -> int:
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(model.nodes):
        ready = model.ready(done)
        if not ready:
            break

        def net(i: int) -> int:
            made = sum(model.created[i].values())
            frees = sum(
                sum(model.created[j].get(r, 0) for j in model.users[r])
                for r in model.touches[i]
                if r not in model.kept and model.users[r] <= done | {i}
            )
            return made - frees

        best = min(ready, key=lambda i: (net(i), i))
        order.append(best)
        done.add(best)
    return model.peak(order)


def _exhaustive(model: _Model, bound: int) -> int | None:
    """Smallest peak over every valid order, None when the step budget runs out."""
    best = bound
    steps = 0
    n = len(model.nodes)

    def visit(done: set[int], live: int, peak: int, size: dict[int, int]) -> bool:
        nonlocal best, steps
        steps += 1
        if steps > EXHAUSTIVE_MAX_STEPS:
            return False
        if peak >= best:
            return True
        if len(done) == n:
            best = peak
            return True
        for i in model.ready(done):
            sz = dict(size)
            now = live + sum(model.created[i].values())
            sz.update(model.created[i])
            done.add(i)
            after = now - model._freed(i, done, sz)
            ok = visit(done, after, max(peak, now), sz)
            done.discard(i)
            if not ok:
                return False
        return True

    return best if visit(set(), 0, 0, {}) else None


def minimum_peak(fp: FunctionProfile) -> OrderPeak:
    """The smallest peak over valid node orders (never above the recorded schedule's)."""
    start = time.perf_counter()
    model = _Model(fp, inplace=True)
    bound = min(model.peak(list(range(len(fp.nodes)))), _greedy(model))
    method = "greedy"
    if len(fp.nodes) <= EXHAUSTIVE_MAX_NODES:
        found = _exhaustive(model, bound + 1)
        if found is not None:
            bound, method = min(bound, found), "exhaustive"
    return OrderPeak(bound, method, time.perf_counter() - start)
