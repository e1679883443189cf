"""MonitorMode: call user functions before and after every node runs (Theano's).

``pre_func(i, node, fn)`` and ``post_func(i, node, fn)`` receive the node's position in the
schedule, the Apply node and a thunk whose ``inputs`` and ``outputs`` are lists of
one-element lists holding the values (outputs are filled after the node ran). Nodes run
their Python ``perform``, one at a time, so every value can be looked at.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from graphc.compile.mode import Mode
from graphc.graph.basic import Apply, Constant, Variable
from graphc.vm.pyvm import RECURSED, FunctionBusy

NodeHook = Callable[[int, Apply, "NodeThunk"], Any]


@dataclass(frozen=True)
class MonitorMode(Mode):
    """``MonitorMode(pre_func=None, post_func=None, optimizer="fast_run")``."""

    linker: str = "py"
    name: str = "MonitorMode"
    pre_func: NodeHook | None = None
    post_func: NodeHook | None = None

    def make_vm(self, maker, linked) -> MonitorVM:
        """Run instead of ``graphc.vm.make_vm``'s VM (``vm_factory``)."""
        return MonitorVM(linked, self.pre_func, self.post_func)

    def vm_factory(self) -> Callable[[Any, Any], MonitorVM]:
        return self.make_vm


class NodeThunk:
    """One node's run: ``inputs`` / ``outputs`` as Theano's storage cells."""

    def __init__(self, node: Apply, perform: Callable, inputs: list):
        self.node = node
        self.perform = perform
        self.inputs = [[v] for v in inputs]
        self.outputs: list[list] = [[None] for _ in node.outputs]

    def __call__(self) -> None:
        self.perform([cell[0] for cell in self.inputs], self.outputs)


class NodeByNodeVM:
    """The VM protocol of the modes that run a function's nodes one at a time in Python
    (MonitorMode, DEBUG_MODE): not profiled, one call at a time; ``_call`` runs the nodes."""

    mode_name: ClassVar[str]

    def __init__(self, linked):
        self.linked = linked
        self.failed_node: int | None = None
        self._lock = threading.Lock()  # one run at a time
        self._owner: int | None = None  # the thread running it
        by_slot = {s: v for v, s in linked.slots.items()}
        self.in_vars = [by_slot[s] for s in linked.program.inputs]
        self.out_vars = [by_slot[s] for s in linked.program.outputs]

    def set_profiling(self, **kwargs: Any) -> None:
        if any(kwargs.values()):
            raise ValueError(f"{self.mode_name} functions cannot be profiled; use FAST_RUN")

    def stats(self) -> dict:
        return {}

    def reset_stats(self) -> None:
        pass

    def __call__(self, values) -> list:
        if not self._lock.acquire(blocking=False):
            if self._owner == threading.get_ident():
                raise RuntimeError(RECURSED)
            raise FunctionBusy()
        self._owner = threading.get_ident()
        self.failed_node = None
        try:
            return self._call(list(values))
        finally:
            self._owner = None
            self._lock.release()

    def _call(self, values: list) -> list:
        raise NotImplementedError

    def _storage(self, values: list) -> dict[Variable, Any]:
        """The inputs' and the constants' values, by variable."""
        storage: dict[Variable, Any] = dict(zip(self.in_vars, values))
        for v in self.linked.slots:
            if isinstance(v, Constant):
                storage[v] = v.data
        return storage


class MonitorVM(NodeByNodeVM):
    """Runs a function's nodes in schedule order, calling the hooks around each."""

    kind = "monitor"
    mode_name = "MonitorMode"

    def __init__(self, linked, pre_func: NodeHook | None, post_func: NodeHook | None):
        super().__init__(linked)
        self.pre_func = pre_func
        self.post_func = post_func
        self.performs = [
            impl.perform or _op_perform(node) for node, impl in zip(linked.schedule, linked.impls)
        ]

    def _call(self, values: list) -> list:
        storage = self._storage(values)
        for i, (node, perform) in enumerate(zip(self.linked.schedule, self.performs)):
            thunk = NodeThunk(node, perform, [storage[v] for v in node.inputs])
            try:
                if self.pre_func is not None:
                    self.pre_func(i, node, thunk)
                thunk()
                if self.post_func is not None:
                    self.post_func(i, node, thunk)
            except Exception:
                self.failed_node = i
                raise
            for var, cell in zip(node.outputs, thunk.outputs):
                storage[var] = cell[0]
        return [storage[v] for v in self.out_vars]


def _op_perform(node: Apply) -> Callable:
    def perform(inputs: list, cells: list) -> None:
        node.op.perform(node, inputs, cells)

    return perform
