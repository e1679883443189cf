"""Function: the callable a compiled graph becomes. A call binds and checks the
arguments, runs the VM, writes the updates back and copies what the aliasing policy
(``compile/aliasing.py``) says must not be shared with the caller."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphc.compile.aliasing import outputs_needing_copy
from graphc.compile.io import In, Out
from graphc.flags import config
from graphc.graph.basic import Constant
from graphc.graph.fg import FunctionGraph
from graphc.vm import input_checker
from graphc.vm.pyvm import FunctionBusy

if TYPE_CHECKING:
    from graphc.compile.mode import CompilePlan
    from graphc.compile.profiling import FunctionProfiler
    from graphc.compile.sharedvalue import SharedVariable
    from graphc.graph.basic import Apply, Variable
    from graphc.linker.base import Linked
    from graphc.vm import VM


class Maker(Protocol):
    """What a Function reads of the FunctionMaker that built it (``compile/maker.py``,
    which imports this module)."""

    plan: CompilePlan
    name: str | None
    allow_input_downcast: bool | None
    inputs: list[In]
    outputs: list[Out]
    shared: list[SharedVariable]
    updates: list[tuple[SharedVariable, Variable]]
    return_list: bool
    n_outputs: int
    fgraph: FunctionGraph
    t_start: int

    def link(self) -> Linked: ...

    def make_vm(self, linked: Linked) -> VM: ...

    def relinked(self, profile: Any) -> Maker: ...

    def recompiled(self, swap: dict, delete_updates: bool, profile: Any) -> Maker: ...

    def create(self) -> Function: ...

    def reduce_function(self, trust_input: bool, profiled: bool) -> tuple: ...


class Function:
    """A compiled function: ``f(*args, **kwargs)`` returns the outputs' values."""

    def __new__(cls, maker: Maker, linked: Linked, vm: VM) -> Function:
        """A profiled function is made of its call path's class from the start (a class
        switched once the instance exists leaves its attribute reads uncached by the
        interpreter: ~2,300 more instructions per call)."""
        if cls is Function and maker.plan.profile:
            cls = _call_path(_configured_sampling())
        return object.__new__(cls)

    def __init__(self, maker: Maker, linked: Linked, vm: VM):
        self.maker = maker
        self.linked = linked
        self.vm = vm
        self.name = maker.name
        self.trust_input = False
        self.input_types: list[Any] = [i.variable.type for i in maker.inputs]
        self.input_names = [i.name for i in maker.inputs]
        self.defaults = [self._default_value(k, i) for k, i in enumerate(maker.inputs)]
        self.n_in = len(maker.inputs)
        # per input (position, dtype, ndim, static shape or None) for the call's fast check:
        # an exact ndarray of the right dtype, ndim and static sizes passes as is
        self._checks = tuple(
            (k, np.dtype(t.dtype), t.ndim, t.shape if _known_axes(t) else None)
            for k, t in enumerate(self.input_types)
        )
        self.shared = maker.shared
        self._mutable = [k for k, i in enumerate(maker.inputs) if i.mutable]
        n_out = maker.n_outputs
        self.update_targets = [(maker.shared.index(s), s) for s, _ in maker.updates]
        self._copy_outputs, self._copy_updates = outputs_needing_copy(
            maker.fgraph, len(maker.inputs), maker.outputs, maker.shared, maker.updates
        )
        self.n_out = n_out
        # the common case: one output returned as is, no updates
        self._single = (
            not maker.return_list and n_out == 1 and not self.update_targets
            and not self._copy_outputs
        )  # fmt: skip
        self.profile = None
        self._calls = 0
        # calls with updates are serialized: reading the shared values, running the VM and
        # writing the updates back form one critical section, so no thread loses an update
        # (reentrant: a call from inside its own run still gets the VM's "already running").
        # Calls without updates take no lock until two threads meet (see _queue_calls).
        self._call_lock = threading.RLock() if self.update_targets else None
        self._queue_lock = threading.Lock()
        self._profiler: FunctionProfiler | None = None  # counts the calls when profiled
        self._clock: Any = None  # the profiler's CallClock (a profiled function)
        if maker.plan.profile:  # the one place that decides (a loop body: its loop's clock)
            t_setup = time.perf_counter_ns()  # the import is the profiler's setup too
            from graphc.compile.profiling import start_profile

            self.profile, self._profiler = start_profile(self, maker.plan, t_setup)
            self._clock = self._profiler.clock
            if type(self) is not _call_path(self._profiler.sample_every):
                self.__class__ = _call_path(self._profiler.sample_every)
            if self._profiler.sample_every == 1:
                # profiled calls run one at a time, so each call's times are its own
                self._call_lock = self._call_lock or threading.RLock()

    def _default_value(self, k: int, inp: In):
        """``In(value=...)`` converted once to the input's type (None: no default)."""
        if inp.value is None:
            return None
        try:
            return inp.variable.type.filter(
                inp.value, allow_downcast=self.maker.allow_input_downcast
            )
        except (TypeError, ValueError) as e:
            label = inp.name or str(inp.variable)
            raise type(e)(
                f"{self.name}: default value of input {k} ({label}, expected "
                f"{inp.variable.type}): {e}"
            ) from None

    # ------------------------------------------------------------------ calling
    def _bind(self, args: Any, kwargs: Any) -> list:
        """Arguments by position, keyword and default, in input order (unchecked)."""
        n = self.n_in
        if len(args) > n:
            raise TypeError(f"{self.name}: takes at most {n} arguments ({len(args)} given)")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, val in kwargs.items():
            try:
                k = self.input_names.index(key)
            except ValueError:
                raise TypeError(
                    f"{self.name}: unknown keyword argument {key!r}; inputs are "
                    f"{[nm for nm in self.input_names if nm]}"
                ) from None
            if values[k] is not _MISSING:
                raise TypeError(f"{self.name}: got multiple values for input {key!r}")
            values[k] = val
        for k in range(n):
            if values[k] is _MISSING:
                if self.defaults[k] is None:
                    raise TypeError(
                        f"{self.name}: missing input {k} "
                        f"({self.input_names[k] or self.maker.inputs[k].variable})"
                    )
                values[k] = self.defaults[k]
        return values

    def _filter(self, k: int, v):
        """Argument ``k`` converted to its input's type, or a TypeError / ValueError naming
        the input."""
        dt = self._checks[k][1]
        if self._checks[k][2] == 0 and (type(v) is dt.type or (type(v) is float and dt == _F8)):
            return np.asarray(v)  # a numpy scalar of the input's dtype, a float for float64
        try:
            return self.input_types[k].filter(v, allow_downcast=self.maker.allow_input_downcast)
        except (TypeError, ValueError) as e:
            label = self.input_names[k] or str(self.maker.inputs[k].variable)
            raise type(e)(
                f"{self.name}: bad argument {k} ({label}, expected {self.input_types[k]}): {e}"
            ) from None

    def __call__(self, *args: Any, **kwargs: Any):
        lock = self._call_lock
        if lock is None:
            try:
                return self._call(args, kwargs)
            except FunctionBusy:
                lock = self._queue_calls()
        if not lock.acquire(blocking=False):
            self._wait_turn(lock)
        try:
            return self._call_when_free(args, kwargs)
        finally:
            lock.release()

    def _wait_turn(self, lock: threading.RLock) -> None:
        """Wait for the call another thread is making; a profiled function counts the wait
        (it is not part of the call's time)."""
        t0 = time.perf_counter_ns()
        lock.acquire()
        if self._profiler is not None:
            self._profiler.on_wait(time.perf_counter_ns() - t0)

    def _call_when_free(self, args: Any, kwargs: Any):
        """A call made holding the call lock: it waits out a call still running from before
        the lock existed (at most one; later calls queue on the lock)."""
        pause = 2e-5
        while True:
            try:
                return self._call(args, kwargs)
            except FunctionBusy:
                time.sleep(pause)
                pause = min(2 * pause, 1e-3)

    def _queue_calls(self) -> threading.RLock:
        """From the first time two threads call this function at once, every call takes a
        lock: the second thread waits for its turn instead of being refused."""
        with self._queue_lock:
            if self._call_lock is None:
                self._call_lock = threading.RLock()
            return self._call_lock

    def _call(self, args: Any, kwargs: Any):
        """One call: arguments checked, the VM run, outputs returned, updates written."""
        values = self._prepare(args, kwargs)
        try:
            outs = self.vm(values)
        except FunctionBusy:
            raise
        except Exception as e:
            raise self._node_error(e, values) from e
        if self._single:
            return outs[0]
        return self._finish(outs)

    def _prepare(self, args: Any, kwargs: Any) -> list:
        """The VM's arguments: inputs bound and checked (exact ndarrays pass on a fast
        path), then the shared values."""
        values = self._bind(args, kwargs) if kwargs or len(args) != self.n_in else list(args)
        if not self.trust_input:
            j = _first_unfit(values, self._checks, 0)
            while j >= 0:
                k = self._checks[j][0]
                values[k] = self._filter(k, values[k])
                j = _first_unfit(values, self._checks, j + 1)
        if self.shared:
            values += [s._value for s in self.shared]
        for k in self._mutable:
            values[k] = _own_buffer(values, k)
        return values

    def _recycle_replaced(self, old_values, new_values) -> None:
        """Give the VM the shared values just replaced: the next call writes the updates
        into them (double buffering) when nothing else holds them by then."""
        recycle = getattr(self.vm, "recycle", None)
        if recycle is not None:
            for j, (old, new) in enumerate(zip(old_values, new_values)):
                if old is not new:
                    recycle(self.n_out + j, old)

    def _finish(self, outs):
        n = self.n_out
        if self.update_targets:
            old_values = [s._value for _, s in self.update_targets]
            new_values = outs[n:]
            for k in self._copy_updates:
                new_values[k] = np.array(new_values[k], copy=True)
            for (_, s), v in zip(self.update_targets, new_values):
                s._value = v
            self._recycle_replaced(old_values, new_values)
        results = outs[:n]
        for k in self._copy_outputs:
            results[k] = np.array(results[k], copy=True)
        if self.maker.return_list:
            return results
        return results[0] if results else None

    def _node_error(self, exc: BaseException, values) -> BaseException:
        idx = getattr(self.vm, "failed_node", None)
        if idx is None:
            return exc
        node = self.linked.schedule[idx]
        lines = [
            f"Apply node that caused the error: {node}",
            f"Toposort index: {idx}",
            "Inputs types: [" + ", ".join(str(v.type) for v in node.inputs) + "]",
        ]
        shapes, strides = _runtime_inputs(node, self, values)
        if shapes is not None:
            lines.append(f"Inputs shapes: {shapes}")
            lines.append(f"Inputs strides: {strides}")
        lines.append(
            "HINT: use graphc.printing.debugprint(f) to see the compiled graph, or compile "
            "with optimizer=None to see the node as you wrote it."
        )
        msg = f"{exc}\n" + "\n".join(lines)
        try:
            new = type(exc)(msg)
        except Exception:  # noqa: BLE001 - exception types with unusual constructors
            if sys.version_info >= (3, 11):  # else the context is lost: the error as raised
                exc.add_note("\n".join(lines))
            return exc
        return new

    # ------------------------------------------------------------------ misc
    def copy(self, share_memory: bool = False, swap: dict | None = None,
             delete_updates: bool = False, name: str | None = None,
             profile=None) -> Function:  # fmt: skip
        """A new Function over the same graph, with its own VM and storage.

        ``swap`` maps shared variables to others of the same type to use instead (in the
        copy only); ``delete_updates`` drops every update (explicit and default);
        ``name`` defaults to this function's. Both functions read and update the same
        shared variables. ``share_memory`` is accepted for Theano's signature: the copy's
        intermediate buffers are always its own.
        """
        profiled = self.profile is not None or None
        if swap or delete_updates:
            fn = self.maker.recompiled(dict(swap or {}), delete_updates, profiled).create()
        else:
            maker = self.maker.relinked(profile if profile is not None else profiled)
            linked = maker.link()
            fn = Function(maker, linked, maker.make_vm(linked))
        fn.trust_input = self.trust_input
        fn.name = name if name is not None else self.name
        return fn

    def __reduce__(self):
        """Pickled as the graph it was built from + mode, compiled again on load."""
        return self.maker.reduce_function(self.trust_input, self.profile is not None)

    @property
    def fgraph(self) -> FunctionGraph:
        return self.maker.fgraph

    def __repr__(self) -> str:
        return f"<graphc.Function {self.name}>"


class _ProfiledFunction(Function):
    """A profiled Function: its timed calls run ``_timed_body`` under the profiler's C
    clock (``clock.time_call`` around the whole call, ``clock.time_vm`` around the VM),
    which counts them in C; the profiler reads the counters on demand."""

    _profiler: FunctionProfiler
    _clock: Any  # the profiler's CallClock

    def _timed_body(self, args: Any, kwargs: Any):
        """One call, its VM run timed (a call that raises is counted by the clock too:
        its nodes that ran were timed, so thunks <= VM <= call always holds)."""
        values = self._prepare(args, kwargs)
        try:
            outs = self._clock.time_vm(self.vm, values)
        except FunctionBusy:  # the VM run from outside this Function: not a call
            raise
        except Exception as e:
            raise self._node_error(e, values) from e
        return outs[0] if self._single else self._finish(outs)


class _TimedFunction(_ProfiledFunction):
    """A profiled Function timing every call: the calls run one at a time under the call
    lock (no lock-free path, no sampling check), so a call costs an unprofiled one plus
    the lock and the clock's two C wrappers."""

    _call_lock: threading.RLock

    def __call__(self, *args: Any, **kwargs: Any):
        lock = self._call_lock
        if not lock.acquire(False):
            self._wait_turn(lock)
        try:
            return self._clock.time_call(self._timed_body, args, kwargs)
        finally:
            lock.release()


class _SampledFunction(_ProfiledFunction):
    """A profiled Function with ``profile_sample=N`` (or ``profile_budget``): the clock's
    ``tick`` (C) says which calls are timed, every N-th, the first included, and arms the
    VM for them; the others are unprofiled calls.

    The untimed calls take the unprofiled path, lock-free until two threads meet; a
    timed call takes the call lock when it exists (threads met), else none."""

    def __call__(self, *args: Any, **kwargs: Any):
        # tick is one C call under the GIL: no thread's count is lost, and one call alone
        # takes each timed turn
        turn = self._clock.tick()
        if turn:
            if turn == 1:
                return self._sample(args, kwargs)
            # with a budget, the call after a timed one: an untimed call timed whole
            return self._clock.time_reference(self._untimed_call, args, kwargs)
        # Function.__call__'s body, repeated here to save a call layer per call
        lock = self._call_lock
        if lock is None:
            try:
                return self._call(args, kwargs)
            except FunctionBusy:
                lock = self._queue_calls()
        if not lock.acquire(False):
            self._wait_turn(lock)
        try:
            return self._call_when_free(args, kwargs)
        finally:
            lock.release()

    def _untimed_call(self, args: Any, kwargs: Any):
        """An unprofiled call (a budget's reference call: rare, so the extra layer is
        free)."""
        return Function.__call__(self, *args, **kwargs)

    def _sample(self, args: Any, kwargs: Any):
        """The timed call: the VM records it (armed by ``tick``), the clock counts it."""
        clock = self._clock
        try:
            lock = self._call_lock
            if lock is None:
                try:
                    return clock.time_call(self._timed_body, args, kwargs)
                except FunctionBusy:  # another thread's call runs: queue behind it
                    lock = self._queue_calls()
            if not lock.acquire(False):
                self._wait_turn(lock)
            try:
                pause = 2e-5
                while True:  # as _call_when_free: a call from before the lock existed
                    try:
                        return clock.time_call(self._timed_body, args, kwargs)
                    except FunctionBusy:
                        time.sleep(pause)
                        pause = min(2 * pause, 1e-3)
            finally:
                lock.release()
        finally:
            clock.disarm()
            if self._profiler.children:
                self._profiler.after_timed_call()


def _call_path(sample_every: int) -> type[Function]:
    """The class of a profiled Function: its ``__call__`` is the profiled call path,
    chosen once here instead of checked on every call."""
    return _TimedFunction if sample_every == 1 else _SampledFunction


def _configured_sampling() -> int:
    """The ``sample_every`` a profiler of a function compiled now gets (2: adapted)."""
    if float(config.profile_budget) > 0.0:
        return 2
    return int(config.profile_sample)


_MISSING = object()
_first_unfit = input_checker()
_F8 = np.dtype("float64")


def _known_axes(t) -> bool:
    return any(s is not None for s in getattr(t, "shape", ()))


Cells = list[tuple[int, ...] | str]  # per input: a shape (or strides), "?" when unknown


def _runtime_inputs(
    node: Apply, fn: Function, values: list[Any]
) -> tuple[Cells | None, Cells | None]:
    try:
        slots = fn.linked.slots
        prog = fn.linked.program
        shapes: Cells = []
        strides: Cells = []
        for v in node.inputs:
            s = slots[v]
            if s in prog.inputs:
                val = values[prog.inputs.index(s)]
            elif isinstance(v, Constant):
                val = v.data
            else:
                shapes.append("?")
                strides.append("?")
                continue
            arr = np.asarray(val)
            shapes.append(arr.shape)
            strides.append(arr.strides)
        return shapes, strides
    except Exception:  # noqa: BLE001 - best effort context for an error message
        return None, None


def _own_buffer(values: list, k: int):
    """Argument ``k`` of an ``In(mutable=True)`` input, which in-place nodes may overwrite:
    a copy when it is read-only or shares memory with another argument or a shared value
    (overwriting it would change what the other one reads)."""
    v = values[k]
    if not isinstance(v, np.ndarray):
        return v
    if not v.flags.writeable or any(
        j != k and isinstance(w, np.ndarray) and np.may_share_memory(v, w)
        for j, w in enumerate(values)
    ):
        return v.copy()
    return v
