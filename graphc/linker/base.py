"""From a FunctionGraph to a Program: slot assignment and one NodeSpec per Apply node.

A linker chooses how each node runs (``NodeImpl``); this module lays out storage the same
way for every linker: function inputs first, then constants, then each node's outputs in
schedule order (so a node's outputs are contiguous, as the VM's C entry point expects).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from graphc.graph.basic import Apply, Constant, Variable
from graphc.graph.fg import FunctionGraph
from graphc.linker.memplan import plan_memory, slot_infos
from graphc.linker.program import NodeSpec, Program


@dataclass
class NodeImpl:
    """How one node runs: Python ``perform`` and, optionally, a C thunk."""

    perform: Callable | None = None
    c_thunk: Any = None
    c_params: Any = None
    c_kernel: Any = None  # an element-wise node's "graphc.ew_kernel" capsule (linker/c/registry)
    lazy: Callable | None = None
    step: CompiledStep | None = None  # the step function of a node running a graph (scan)

    @property
    def is_c(self) -> bool:
        return self.c_thunk is not None


@dataclass
class Linked:
    """A Program plus what the function and the profiler need to map it back to the graph."""

    program: Program
    schedule: list[Apply]
    slots: dict[Variable, int]
    impls: list[NodeImpl]
    linker_name: str
    phases: dict[str, int] = field(default_factory=dict)  # ns: codegen, compile, import
    notes: list[str] = field(default_factory=list)  # e.g. why C was not used
    c_source: str | None = None  # the "c|py" linker's C module source, when it made one
    c_module: Any = None  # that module once imported (it owns the C thunks)


class StepClock(Protocol):
    """What a loop node's thunk reports its steps to (the step function's profiler)."""

    @property
    def timing(self) -> bool: ...  # whether this call's steps are timed (sampling)

    def on_step(self, ns: int) -> None: ...  # one step's time, from a driver that timed it


@dataclass(frozen=True)
class CompiledStep:
    """A loop's step graph compiled before the enclosing function's first call: the
    callable ``function`` (its ``vm`` runs the steps) and the profiler timing its steps
    (None when the enclosing function is not profiled)."""

    function: Any
    clock: StepClock | None = None


class InnerCompiler(Protocol):
    """Compiles the graph an Op runs per call (a scan's step) the way the enclosing
    function is compiled (``compile/maker.py`` ``StepCompiler`` is the compile layer's)."""

    def compile_step(
        self, inputs: list[Variable], outputs: list[Variable], mode: Any
    ) -> CompiledStep: ...


@runtime_checkable
class GraphRunningOp(Protocol):
    """An Op that runs a graph of its own (scan): the linker compiles that graph
    (``inner_step()``: its inputs, outputs and compile mode, None for the enclosing
    function's) and builds the node's thunk from the result (``make_perform``)."""

    def inner_step(self) -> tuple[list[Variable], list[Variable], Any]: ...

    def make_perform(self, node: Apply, step: CompiledStep) -> Callable: ...


def py_impl(node: Apply, compiler: InnerCompiler | None = None) -> NodeImpl:
    """Run ``node`` through its Op's Python ``perform`` (or lazy protocol); the graph of an
    Op running one is compiled by ``compiler`` now, at link time, before any call."""
    op = node.op
    if compiler is not None and isinstance(op, GraphRunningOp):
        step = compiler.compile_step(*op.inner_step())
        return NodeImpl(perform=op.make_perform(node, step), step=step)
    if op.lazy:
        return NodeImpl(lazy=functools.partial(op.lazy_perform, node))
    return NodeImpl(perform=functools.partial(op.perform, node))


def link(
    fgraph: FunctionGraph,
    outputs: Sequence[Variable],
    impl_for: Callable[[list[Apply]], list[NodeImpl]],
    linker_name: str,
    schedule: list[Apply] | None = None,
) -> Linked:
    """Lay out storage for ``fgraph`` and build a Program computing ``outputs``.

    ``impl_for(schedule)`` returns one NodeImpl per node (a C linker compiles them all at
    once there).
    """
    t0 = time.perf_counter_ns()
    order = schedule if schedule is not None else fgraph.toposort()
    slots: dict[Variable, int] = {}
    for v in fgraph.inputs:
        slots[v] = len(slots)
    constants: list[tuple[int, Any]] = []
    for node in order:
        for v in node.inputs:
            if isinstance(v, Constant) and v not in slots:
                slots[v] = len(slots)
                constants.append((slots[v], v.data))
    for v in outputs:
        if isinstance(v, Constant) and v not in slots:
            slots[v] = len(slots)
            constants.append((slots[v], v.data))
    for node in order:
        for v in node.outputs:
            slots[v] = len(slots)
    impls = impl_for(order)
    specs = []
    for node, impl in zip(order, impls):
        destroys = sorted({i for ins in node.op.destroy_map.values() for i in ins})
        specs.append(
            NodeSpec(
                name=str(node),
                inputs=tuple(slots[v] for v in node.inputs),
                outputs=tuple(slots[v] for v in node.outputs),
                perform=impl.perform,
                c_thunk=impl.c_thunk,
                c_params=impl.c_params,
                lazy=impl.lazy,
                destroys=tuple(destroys),
                reuses_outputs=impl.c_thunk is None
                and impl.perform is not None
                and node.op.reuses_outputs,
            )
        )
    program = Program(
        n_storage=len(slots),
        inputs=tuple(slots[v] for v in fgraph.inputs),
        outputs=tuple(slots[v] for v in outputs),
        constants=tuple(constants),
        nodes=tuple(specs),
    )
    program = dataclasses.replace(
        program, buffers=plan_memory(program, slot_infos(order, slots)).buffer_of
    )
    linked = Linked(program, order, slots, impls, linker_name)
    linked.phases.setdefault("link", time.perf_counter_ns() - t0)
    return linked


def link_py(
    fgraph: FunctionGraph,
    outputs: Sequence[Variable],
    compiler: InnerCompiler | None = None,
) -> Linked:
    """The "py" linker: every node runs its Op's numpy ``perform``."""
    return link(fgraph, outputs, lambda order: [py_impl(n, compiler) for n in order], "py")
