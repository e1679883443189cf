"""Connect a compiled Function to graphc.profile: describe its nodes as plain records and
pull the VM's counters into them when a summary is asked for."""

from __future__ import annotations

import os
import threading
import time
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Constant
from graphc.linker.c.loop_flops import node_flops
from graphc.linker.clinker import has_c_code
from graphc.linker.machine import machine_limits
from graphc.linker.program import gc_schedule
from graphc.profile.data import model
from graphc.profile.data.model import FunctionProfile, StorageRecord
from graphc.profile.data.vmstats import update_from_vm_stats
from graphc.profile.registry import REGISTRY
from graphc.profile.stats import ProfileStats
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums
from graphc.vm.callclock import clock_read_ns, make_call_clock

_LOOP_OPS = (Elemwise, ElemwiseSums)  # the element-wise C loops loop_flops counts
_COUNTED = ("float32", "float64")  # the dtypes of the vector math's counts

if TYPE_CHECKING:
    from graphc.compile.mode import CompilePlan
    from graphc.compile.sharedvalue import SharedVariable
    from graphc.graph.basic import Apply, Op
    from graphc.linker.base import Linked

_register_at_exit = REGISTRY.register_at_exit


@dataclass(frozen=True)
class CompiledParts:
    """What a profiler reads of its compiled function, handed to it at construction (the
    profiler never holds the Function: it pulls from these until the function is freed)."""

    vm: Any  # the Cython or the reference VM (make_vm's result)
    linked: Linked
    n_in: int
    shared: Sequence[SharedVariable]
    compile_start_ns: int  # the maker's t_start, on the trace's clock

    @classmethod
    def of(cls, fn: ProfiledFunction) -> CompiledParts:
        return cls(fn.vm, fn.linked, fn.n_in, fn.shared, fn.maker.t_start)


class ProfiledFunction(Protocol):
    """A compiled function being profiled (``graphc.compile.callable.Function``)."""

    @property
    def name(self) -> str | None: ...

    @property
    def vm(self) -> Any: ...

    @property
    def maker(self) -> Any: ...  # the FunctionMaker (compile phases, mode, graph)

    @property
    def linked(self) -> Linked: ...

    @property
    def n_in(self) -> int: ...

    @property
    def shared(self) -> Sequence[SharedVariable]: ...


class FunctionProfiler:
    """Owns one FunctionProfile and fills it from its function's VM on demand (``pull``);
    the function times its calls with :attr:`clock` (a C ``CallClock``: counters read
    here only on demand, this object called only on rare events), a loop node reports
    each step of a loop body (``nested``) through :meth:`on_step`. ``children``: the
    profilers of the loop bodies of the function's nodes, created with them."""

    def __init__(
        self,
        parts: CompiledParts,
        record: FunctionProfile,
        memory: bool,
        trace_capacity: int,
        nested: bool = False,
        children: Sequence[FunctionProfiler] = (),
    ):
        self.parts: CompiledParts | None = parts  # None once the function is freed
        self.nested = nested  # a loop body: its first call is the outer function's
        self.children = list(children)
        self.record = record
        self.ignore_first = config.profiling__ignore_first_call
        self.calls = 0  # steps reported through on_step (the clock counts the calls)
        self.call_ns = 0
        self.vm_ns = 0
        self.skipped = 0  # an ignored first call (n_seen = clock.calls + skipped)
        self._next_event = 1  # _event runs when n_seen reaches this
        self.memory = memory
        self.shapes_on = True
        self.trace_capacity = trace_capacity
        self.first: tuple | None = None  # (call_ns, vm_ns, per-node ns, per-node calls)
        if int(config.profile_sample) < 1:
            raise ValueError(f"profile_sample must be >= 1 (1: time every call), "
                             f"got {config.profile_sample}")  # fmt: skip
        budget = 0.0 if nested else float(config.profile_budget)
        if not 0.0 <= budget < 1.0:
            raise ValueError(f"profile_budget must be in [0, 1), got {budget}")
        self.sample_every = 1 if nested else int(config.profile_sample)
        self.budget = budget
        if budget > 0.0:  # the clock adapts its 1-in-N from the measured calls
            self.sample_every = max(self.sample_every, 2)
        self.clock, self.ticks_per_ns = make_call_clock(parts.vm, self.sample_every,
                                                        self._on_clock_event)  # fmt: skip
        if budget > 0.0:
            self.clock.budget = budget
            self.clock.cost_ticks = timed_call_cost_ns(parts) * self.ticks_per_ns
        if self.sample_every > 1 and (children or not hasattr(parts.vm, "arm")):
            self.clock.arm = self._vm_profiling  # loop bodies, or a VM armed from Python
        self.vm_sq = 0.0  # a loop body: sum of its steps' squared time per timed call
        self.timing = True  # whether this call's steps are timed (StepClock)
        self._mark = (0, 0)  # a loop body's (steps, ns) at the end of the last timed call
        self.waited_calls = 0  # calls that waited for another thread's call to finish
        self.wait_ns = 0
        #: a loop body: its parent's ``sample_every`` and untimed over timed calls
        self.parent_sampling = (1, 0.0)
        self._trace_kept: list[list[int]] = []  # events saved while sampling paused the VM
        self._trace_dropped = 0
        parts.vm.set_profiling(timing=True, memory=memory, shapes=True,
                               trace_capacity=trace_capacity)  # fmt: skip

    def _on_clock_event(self, calls: int, call_ns: int, vm_ns: int) -> None:
        """The clock's timed calls reached the next event (it passes its count)."""
        n = calls + self.skipped
        if n >= self._next_event:
            self._event(n, call_ns, vm_ns)
        self.clock.next_event = self._next_event - self.skipped

    def after_timed_call(self) -> None:
        """A timed call of a sampled function is over: each loop body adds the square
        of its steps' time in it."""
        for child in self.children:
            child.end_timed_call()

    @property
    def n_seen(self) -> int:
        """Calls timed, an ignored first one included."""
        return self.clock.calls + self.skipped

    def end_timed_call(self) -> None:
        """A loop body, after a timed call of its parent: add the square of the time its
        steps took in that call (the sampling unit is the parent's call)."""
        steps, _, ns = self.totals()
        self.vm_sq += float(ns - self._mark[1]) ** 2
        self._mark = (steps, ns)
        for child in self.children:
            child.end_timed_call()

    @property
    def unsampled(self) -> int:
        """Calls made but not timed."""
        return int(self.clock.untimed)

    def _vm_profiling(self, on: bool) -> None:
        """Record the next call (``on``) or leave it untimed, loop bodies included: an
        untimed call reads no clock, not even per step. A Cython VM is armed by a flag
        (the choices, counters and trace kept); another is switched by set_profiling."""
        parts = self.parts
        if parts is not None:
            arm = getattr(parts.vm, "arm", None)
            if arm is not None:
                arm(on)
            else:
                cap = self.trace_capacity
                if cap and not on:
                    self._keep_trace(parts.vm.stats())
                parts.vm.set_profiling(timing=on, memory=self.memory and on,
                                       shapes=self.shapes_on and on,
                                       trace_capacity=cap if on else 0)  # fmt: skip
        self.timing = on
        for child in self.children:
            child._vm_profiling(on)

    def _keep_trace(self, st: dict) -> None:
        """Save the VM's trace events before sampling pauses it (which clears them)."""
        self._trace_kept += [[int(v) for v in row] for row in st.get("trace", ())]
        self._trace_dropped += int(st.get("trace_dropped", 0))

    def _event(self, n: int, call_ns: int, vm_ns: int) -> None:
        """The rare part of on_call: ``n`` calls made, this one included."""
        if self.ignore_first:
            self.clock.uncount_last()
            self.skip_call()
            self._next_event = self.n_seen + 1
            return
        if n == 1:  # the first call (not an ignored one)
            self.note_first_call(call_ns, vm_ns)
        self._schedule_shapes(n)

    def _schedule_shapes(self, n: int) -> None:
        """After ``n`` calls: sample shapes on the next one if it is call 1, 2, 4, 8, ...,
        and remember the next ``n`` where that changes."""
        m = n + 1
        want = m & (m - 1) == 0
        if want != self.shapes_on:
            self.sample_shapes(want)
        self._next_event = n + 1 if want else (1 << m.bit_length()) - 1

    def on_wait(self, ns: int) -> None:
        """Count a call that waited ``ns`` for another thread's call of the function."""
        self.waited_calls += 1
        self.wait_ns += ns

    def on_step(self, ns: int) -> None:
        """Count one step of a loop body run by a driver that does not time its steps
        itself (a CVM driven in C counts them in ``step_counts``, see :meth:`totals`)."""
        self.calls += 1
        self.call_ns += ns
        self.vm_ns += ns

    def totals(self) -> tuple[int, int, int]:
        """``(calls, call_ns, vm_ns)``: the calls reported here plus, for a loop body,
        the steps its VM timed itself (``vm.step_counts()``, when it has one)."""
        timed, c_ns, v_ns, _, _ = self.clock.counts()
        calls, call_ns, vm_ns = self.calls + timed, self.call_ns + c_ns, self.vm_ns + v_ns
        parts = self.parts
        counts = getattr(parts.vm, "step_counts", None) if self.nested and parts else None
        if counts is not None:
            steps, ns = counts()
            calls, call_ns, vm_ns = calls + steps, call_ns + ns, vm_ns + ns
        return calls, call_ns, vm_ns

    def reset(self) -> None:
        """Forget every call so far (the VM's counters and trace too)."""
        self.calls = self.call_ns = self.vm_ns = 0
        self.clock.reset()
        self._next_event = self.clock.next_event = 1
        self.skipped = 0
        self.first = None
        self.ignore_first = False
        self.vm_sq, self._mark = 0.0, (0, 0)
        self._trace_kept, self._trace_dropped = [], 0
        if self.parts is not None:
            self.parts.vm.reset_stats()
        for child in self.children:
            child.reset()

    def skip_call(self) -> None:
        """Leave the first call out (``profiling__ignore_first_call``)."""
        self.ignore_first = False
        self.skipped += 1
        if self.parts is not None:
            self.parts.vm.reset_stats()
        for child in self.children:
            child.reset()

    def note_first_call(self, call_ns: int, vm_ns: int) -> None:
        """Keep the first call's times apart: summaries leave them out by default."""
        if self.parts is not None:
            st = self.parts.vm.stats()
            n_calls = 1
            if self.nested:
                n_calls, call_ns, vm_ns = self.totals()
            self.first = (call_ns, vm_ns, [int(v) for v in st["ns_total"]],
                          [int(v) for v in st["calls"]], n_calls,
                          st.get("shape_ns"))  # fmt: skip
        for child in self.children:  # the steps of this first call
            child.note_first_call(child.call_ns, child.vm_ns)

    def _store_first(self) -> None:
        rec = self.record
        rec.waited_calls, rec.wait_ns = self.waited_calls, self.wait_ns
        if self.first is None:
            rec.first_calls = rec.first_call_ns = rec.first_vm_ns = 0
            return
        call_ns, vm_ns, node_ns, node_calls, n_calls, _ = self.first
        rec.first_calls, rec.first_call_ns, rec.first_vm_ns = n_calls, call_ns, vm_ns
        for node, ns, calls in zip(rec.nodes, node_ns, node_calls):
            node.first_calls, node.first_ns = (calls if self.nested else min(calls, 1)), ns

    def sample_shapes(self, want: bool) -> None:
        """Record run-time shapes on calls 1, 2, 4, 8, ... only: a shape change is still
        seen, but steady-state calls pay nothing for it (it costs ~4 us per node)."""
        if self.parts is not None:
            self.shapes_on = want
            self.parts.vm.set_profiling(timing=True, memory=self.memory, shapes=want,
                                        trace_capacity=self.trace_capacity)  # fmt: skip
        for child in self.children:  # a loop body samples the steps of the same calls
            child.sample_shapes(want)

    def held_and_peak(self) -> tuple[int, int]:
        """What the VM holds between calls, and its highest call peak (with memory on)."""
        if self.parts is None:
            return 0, 0
        vm = self.parts.vm
        held = int(vm.held_bytes())
        return held, (int(vm.stats().get("peak_bytes", 0)) if self.memory else 0)

    def close(self) -> None:
        """The function is being freed: pull its counters one last time and let its VM go
        (e.g. a function compiled inside a script's ``main``, printed or saved at exit)."""
        if self.parts is not None:
            self.pull()
            for child in self.children:
                child.close()
            self.parts = None

    def pull(self) -> None:
        """Bring the record up to date: this function's counters and its loop bodies'."""
        every, share = self.parent_sampling if self.nested else (self.current_every(), 0.0)
        if every > 1 and not self.nested:
            timed = self.clock.calls
            share = self.unsampled / timed if timed else 0.0
        for child in self.children:
            child.parent_sampling = (every, share)
            child.pull()
        if self.parts is None:  # freed: the record holds its last counters
            return
        rec = self.record
        self._pull_vm(self.parts)
        rec.calls, rec.call_ns, rec.vm_ns = self.totals()
        rec.sampled_vm_ns_sq = self.vm_sq + self.clock.counts()[3]
        if self.nested:  # a loop body: its steps are timed in its parent's timed calls
            rec.sample_every = every
            rec.unsampled_calls = round(rec.calls * share)
        else:
            rec.sample_every, rec.unsampled_calls = self.current_every(), self.unsampled
        self._store_first()

    def current_every(self) -> int:
        """1 call in how many is timed (with a budget: N as last adapted)."""
        if self.budget <= 0.0:
            return self.sample_every
        return max(int(self.clock.every), 1)

    def _pull_vm(self, parts: CompiledParts) -> None:
        rec = self.record
        st = parts.vm.stats()
        update_from_vm_stats(rec, st)
        if self.trace_capacity and ("trace" in st or self._trace_kept):
            events = self._trace_kept + [[int(v) for v in row] for row in st.get("trace", ())]
            dropped = self._trace_dropped + int(st.get("trace_dropped", 0))
            rec.trace = model.TraceRecord(
                pid=os.getpid(),
                capacity=self.trace_capacity,
                dropped=dropped + max(len(events) - self.trace_capacity, 0),
                events=events[: self.trace_capacity],
                compile_start_ns=parts.compile_start_ns,
            )
        first_times = self.first[5] if self.first is not None else None
        linked = parts.linked
        for i, sigs in enumerate(st["shapes"]):
            if sigs:
                ins, outs = sigs[-1]
                is_c = linked.impls[i].is_c
                rec.nodes[i].flops_per_call = _flops(linked.schedule[i], ins, outs, is_c)
                if "shape_ns" in st:
                    first = first_times[i] if first_times else []
                    rec.nodes[i].sampled_flops, rec.nodes[i].sampled_ns = _sampled_rate(
                        linked.schedule[i], sigs, st["shape_ns"][i], first, is_c
                    )
                ws = _workspace(linked.schedule[i], ins, outs, is_c)
                rec.nodes[i].workspace_bytes = max(rec.nodes[i].workspace_bytes, ws)
        inputs = linked.program.inputs
        for srec in rec.inputs:
            k = inputs.index(srec.slot) if srec.slot in inputs else None
            if k is not None and k >= parts.n_in:
                val = parts.shared[k - parts.n_in]._value
                srec.nbytes, srec.shape = int(val.nbytes), tuple(val.shape)


_costs_ns: list[float] = []  # (clock read, fixed part of a timed call), once per process


def _noop_vm(values: Any) -> Any:
    return values


def _measure_costs() -> tuple[float, float]:
    """What one clock read costs, and the fixed part of timing a call: the call lock and
    the clock's two wrappers around an empty body (best of 5 rounds of 64)."""
    if not _costs_ns:
        scratch, _ = make_call_clock(None, 1, None)
        lock = threading.RLock()

        def body(args: Any, kwargs: Any) -> Any:
            return scratch.time_vm(_noop_vm, args)

        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(64):
                lock.acquire(False)
                scratch.time_call(body, (), None)
                lock.release()
            best = min(best, (time.perf_counter_ns() - t0) / 64)
        _costs_ns.extend((clock_read_ns(), best))
    return _costs_ns[0], _costs_ns[1]


def timed_call_cost_ns(parts: CompiledParts) -> float:
    """What timing one call of the function adds to it (``profile_budget``'s cost): per
    node a clock read and its fold (about another read), plus the fixed part of a timed
    call, both measured once per process."""
    read_ns, fixed_ns = _measure_costs()
    return 2.0 * read_ns * (len(parts.linked.program.nodes) + 2) + fixed_ns


def _out_dtype(node: Apply) -> str | None:
    return getattr(node.outputs[0].type, "dtype", None) if node.outputs else None


def _flops(node: Apply, ins, outs, c_impl: bool = False):
    """Flops of one call of ``node`` with these input and output signatures: for an
    element-wise loop that ran as generated C, the operations that C executes per element
    (``loop_flops.node_flops``: exp, tanh... at their vector math's counted cost) times
    the loop's elements; else the Op's own ``flops`` hook (one flop per scalar operation for
    an Elemwise run by numpy); None when neither says."""
    try:
        in_shapes, out_shapes = [s[1] for s in ins], [s[1] for s in outs]
    except (TypeError, IndexError):  # a value with no shape recorded (a lazy node's)
        return None
    if c_impl and isinstance(node.op, _LOOP_OPS) and _out_dtype(node) in _COUNTED:
        try:
            per = node_flops(node)
            loop = np.broadcast_shapes(*in_shapes) if in_shapes else out_shapes[0]
            return per * float(np.prod(loop))
        except (NotImplementedError, ValueError, TypeError):
            pass  # a scalar Op with no count: the Op's own hook
    fl = getattr(node.op, "flops", None)
    if fl is None:
        return None
    try:
        return float(fl(node, in_shapes, out_shapes))
    except Exception:  # noqa: BLE001 - a flops hook must never break a summary
        return None


def _sampled_rate(node: Apply, sigs, times, first, c_impl: bool) -> tuple[float | None, int]:
    """``(flops, ns)`` over the calls whose shapes were recorded, each signature's flops
    times its calls, with those calls' time; the first call's share (``first``: the
    per-signature counts then) is left out when other calls were recorded."""
    first = list(first) + [(0, 0)] * (len(times) - len(first))
    if sum(c for c, _ in times) > sum(c for c, _ in first):
        times = [(c - fc, t - ft) for (c, t), (fc, ft) in zip(times, first)]
    flops, ns = 0.0, 0
    for (ins, outs), (c, t) in zip(sigs, times):
        if not c:
            continue
        fl = _flops(node, ins, outs, c_impl)
        if fl is None:
            return None, 0
        flops, ns = flops + fl * c, ns + t
    return flops, ns


def _workspace(node: Apply, ins, outs, c_impl: bool) -> int:
    """Bytes of scratch the node's Op says one call of the implementation that ran
    allocates (its ``workspace_bytes``)."""
    hook = getattr(node.op, "workspace_bytes", None)
    if hook is None:
        return 0
    try:
        return int(hook(node, [s[1] for s in ins], [s[1] for s in outs], c_impl=c_impl))
    except Exception:  # noqa: BLE001 - like flops, never break a summary
        return 0


def _op_class(op: Op) -> str:
    cls = type(op)
    return f"{cls.__module__}.{cls.__qualname__}"


def _kinds(node: Apply) -> list[str]:
    out = []
    for k in range(len(node.outputs)):
        if k in node.op.destroy_map:
            out.append("i")
        elif k in node.op.view_map:
            out.append("v")
        else:
            out.append("c")
    return out


def _aliases(node: Apply) -> list[int | None]:
    res: list[int | None] = []
    for k in range(len(node.outputs)):
        ins = node.op.destroy_map.get(k) or node.op.view_map.get(k)
        res.append(ins[0] if ins else None)
    return res


def build_record(fn: ProfiledFunction) -> FunctionProfile:
    maker = fn.maker
    plan: CompilePlan = maker.plan
    linked = fn.linked
    prog = linked.program
    frees = gc_schedule(prog) if plan.allow_gc else None
    nodes = []
    for i, (node, impl, spec) in enumerate(zip(linked.schedule, linked.impls, prog.nodes)):
        nodes.append(
            model.NodeRecord(
                position=i,
                apply_name=str(node),
                op_name=str(node.op),
                op_class=_op_class(node.op),
                impl="C" if impl.is_c else "Py",
                output_kinds=_kinds(node),
                output_aliases=_aliases(node),
                input_slots=list(spec.inputs),
                output_slots=list(spec.outputs),
                frees_after=list(frees[i]) if frees is not None else None,
                has_c_impl=has_c_code(node),
                origins=list(node.origins),
            )
        )
    phases = linked.phases
    loop_ns = maker.phases.get("loop_compile", 0)  # inside the C linker's codegen window
    compile_ = model.CompilePhases(
        total_ns=maker.phases.get("total", 0),
        rewrite_ns=maker.phases.get("rewrite", 0),
        validate_ns=maker.phases.get("validate", 0),
        linker_ns=maker.phases.get("linker", 0),
        codegen_ns=max(phases.get("codegen", 0) - loop_ns, 0),
        compile_ns=phases.get("compile", 0),
        import_ns=phases.get("import", 0),
        python_import_ns=maker.phases.get("python_imports", 0),
        n_apply=len(linked.schedule),
        loop_compile_ns=loop_ns,
    )
    inputs = []
    for v in maker.fgraph.inputs:
        inputs.append(StorageRecord(str(v), linked.slots[v], 0, v.type.dtype))
    consts = []
    for slot, val in prog.constants:
        arr = np.asarray(val)
        consts.append(StorageRecord(_const_name(linked, slot), slot, int(arr.nbytes),
                                    str(arr.dtype), tuple(arr.shape)))  # fmt: skip
    rep = maker.rewrite_report
    opt_prof = model.OptimizerProfile(
        passes=[model.PassRecord(n, int(ns)) for n, ns in getattr(rep, "passes", [])],
        rewrites=[
            model.RewriteRecord(n, t, a, int(ns)) for n, t, a, ns in getattr(rep, "rewrites", [])
        ],
    )
    return FunctionProfile(
        name=fn.name or "<unnamed>",
        compile=compile_,
        mode=str(plan.mode),
        linker=plan.linker.name,
        optimizer=plan.optimizer,
        rewrites_excluded=list(plan.excluding),
        rewrites_included=list(plan.including),
        vm_kind=fn.vm.kind,  # "cvm" or "py", as in the JSON schema
        allow_gc=plan.allow_gc,
        timing_supported=True,
        memory_recorded=bool(config.profile_memory),
        nodes=nodes,
        inputs=inputs,
        constants=consts,
        output_slots=list(prog.outputs),
        planned_slots=_planned_slots(prog, maker.allow_gc),
        optimizer_profile=opt_prof if config.profile_optimizer else None,
        machine=_machine_limits(),
    )


def _machine_limits() -> model.MachineLimits | None:
    """This machine's roofline limits (measured on the first profiled compile, then read
    from the compile cache), unless ``profile_roofline`` is off or they cannot be measured."""
    if not config.profile_roofline:
        return None
    try:
        found = machine_limits()
    except Exception as exc:  # no compiler, no BLAS: the profile goes on without a roofline
        warnings.warn(
            f"graphc: no roofline, the machine's limits were not measured: {exc}", stacklevel=2
        )
        return None
    return None if found is None else model.MachineLimits(**found)


def _planned_slots(prog, allow_gc: bool) -> list[int]:
    """The slots the VM stores in its memory plan's buffers (the plan is used with gc
    on and no lazy node)."""
    if not (allow_gc and prog.buffers) or prog.has_lazy:
        return []
    return [s for s, b in enumerate(prog.buffers) if b >= 0]


def _const_name(linked, slot) -> str:
    for v, s in linked.slots.items():
        if s == slot and isinstance(v, Constant):
            return str(v)
    return f"constant@{slot}"


def start_profile(
    fn: ProfiledFunction, plan: CompilePlan, t_setup: int
) -> tuple[ProfileStats, FunctionProfiler]:
    """The ProfileStats ``fn`` reports to (``plan.profile_target``, else a new one) and the
    profiler counting its calls, which ``fn`` keeps; the profilers of its loop bodies
    (created with their step functions, ``linked.impls[i].step.clock``) become its
    children. The stats hold the profiler as a live source; when ``fn`` is freed the
    profiler pulls its counters one last time and lets the VM go.

    The compile time recorded runs to the end of this setup, which is its own phase (from
    ``t_setup``, ``perf_counter_ns()`` before importing this module)."""
    stats = plan.profile_target or ProfileStats()
    record = build_record(fn)
    trace_capacity = config.profiling__trace_capacity if config.profile_trace else 0
    children = _adopt_loop_bodies(fn, record)
    profiler = FunctionProfiler(CompiledParts.of(fn), record, bool(config.profile_memory),
                                trace_capacity, children=children)  # fmt: skip
    stats.add_live(record, profiler)
    REGISTRY.track(fn, lambda _fn: profiler.held_and_peak())
    weakref.finalize(fn, profiler.close)
    if plan.print_at_exit and stats.atexit_print:
        _register_at_exit(stats)
    end = time.perf_counter_ns()
    record.compile.profiler_ns = end - t_setup
    # and the Function's construction after linking (its VM, its argument checks)
    linked_at = fn.maker.t_linked
    record.compile.total_ns = fn.maker.phases.get("total", 0) + end - min(linked_at, t_setup)
    return stats, profiler


def loop_body_profiler(fn: ProfiledFunction) -> FunctionProfiler:
    """The profiler of a loop's step function ``fn``, created with it: the loop node's
    thunk reports the steps to it, and the enclosing function's profiler adopts it."""
    record = build_record(fn)
    trace_capacity = config.profiling__trace_capacity if config.profile_trace else 0
    children = _adopt_loop_bodies(fn, record)
    profiler = FunctionProfiler(CompiledParts.of(fn), record, bool(config.profile_memory),
                                trace_capacity, nested=True, children=children)  # fmt: skip
    weakref.finalize(fn, profiler.close)
    return profiler


def _adopt_loop_bodies(fn: ProfiledFunction, record: FunctionProfile) -> list[FunctionProfiler]:
    """The profilers of the loop bodies of ``fn``'s nodes, their records set as the
    nodes' children (``NodeRecord.inner``)."""
    children = []
    for i, impl in enumerate(fn.linked.impls):
        clock = impl.step.clock if impl.step is not None else None
        if isinstance(clock, FunctionProfiler):
            clock.record.name = f"{fn.linked.schedule[i].op} step (node {i} of {record.name})"
            record.nodes[i].inner = clock.record
            children.append(clock)
    return children
