"""The reference VM, in plain Python: readable, and the specification of VM semantics.

The Cython VM (``_cvm.pyx``) implements the same API and must agree with this one.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphc.linker.program import Program, gc_schedule

__all__ = [
    "PyVM", "value_nbytes", "value_signature", "public_signatures", "RING",
    "MAX_SHAPE_SIGNATURES", "record_call",
]  # fmt: skip

RING = 32  # per-node ring of recent per-call durations (ns_samples)
MAX_SHAPE_SIGNATURES = 4  # distinct (inputs, outputs) signatures kept per node
_INT64_MAX = np.iinfo(np.int64).max
REENTERED = "function is already running in another thread"
RECURSED = "function is already running: a node of it called it again"


class FunctionBusy(RuntimeError):
    """A VM asked to run while another thread runs it (``Function.__call__`` waits and
    retries; a call from inside its own run raises a plain RuntimeError instead)."""

    def __init__(self) -> None:
        super().__init__(REENTERED)


def first_unfit(values: list, checks: tuple, start: int = 0) -> int:
    """The position (from ``start``) of the first of ``checks`` -- per input ``(k, dtype,
    ndim, static shape or None)`` -- that ``values[k]`` fails, else -1: an exact ndarray of
    the dtype and ndim, with the static sizes (None = any), passes as it is. (The compiled
    VM's twin, ``graphc.vm._cvm.first_unfit``, is what a call uses when it is built.)"""
    for j in range(start, len(checks)):
        k, dt, ndim, static = checks[j]
        v = values[k]
        if type(v) is not np.ndarray or v.ndim != ndim or (v.dtype is not dt and v.dtype != dt):
            return j
        if static is not None and any(b is not None and a != b for a, b in zip(v.shape, static)):
            return j
    return -1


def value_nbytes(value: Any) -> int:
    """Bytes owned by a value as seen by the memory profiler (0 for non-numpy values)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, np.generic):
        return int(value.itemsize)
    return 0


def aliased_input(value: Any, inputs: Sequence[Any]) -> int | None:
    """The position of the input whose buffer ``value`` is (in place) or views, if any."""
    base = value.base if isinstance(value, np.ndarray) else None
    for k, inp in enumerate(inputs):
        if inp is None:
            continue
        if inp is value or (base is not None and base is inp):
            return k
        if base is not None and isinstance(inp, np.ndarray) and base is inp.base:
            return k
    return None


def _one_signature(value: Any) -> tuple | None:
    # the dtype object, not dtype.str (which builds a string on every access): this runs
    # per node on sampled calls; public_signatures() turns it into dtype.str
    if isinstance(value, np.ndarray):
        return (value.dtype, value.shape, value.strides)
    if isinstance(value, np.generic):
        return (value.dtype, (), ())
    return None


def public_signatures(per_node: list) -> list:
    """Recorded signatures as ``stats()`` reports them: ``(dtype.str, shape, strides)``."""

    def one(sig):
        return None if sig is None else (sig[0].str, sig[1], sig[2])

    return [
        [(tuple(one(a) for a in ins), tuple(one(b) for b in outs)) for ins, outs in sigs]
        for sigs in per_node
    ]


def record_call(sigs: list, times: list, sig: tuple, dur: int) -> None:
    """Add a call of duration ``dur`` to signature ``sig``'s ``[calls, time]`` in
    ``times`` (parallel to ``sigs``), adding ``sig`` while there is room for it."""
    try:
        j = sigs.index(sig)
    except ValueError:
        if len(sigs) >= MAX_SHAPE_SIGNATURES:
            return
        sigs.append(sig)
        times.append([0, 0])
        j = len(sigs) - 1
    times[j][0] += 1
    times[j][1] += dur


def value_signature(inputs: Sequence[Any], outputs: Sequence[Any]) -> tuple:
    """``((dtype.str, shape, strides) per input, ... per output)``; None for non-arrays."""
    return (
        tuple(_one_signature(v) for v in inputs),
        tuple(_one_signature(v) for v in outputs),
    )


def clock_resolution_ns() -> int:
    """Resolution of CLOCK_MONOTONIC in nanoseconds (at least 1)."""
    try:
        return max(1, round(time.clock_getres(time.CLOCK_MONOTONIC) * 1e9))
    except (AttributeError, OSError):  # pragma: no cover - non-POSIX
        return max(1, round(time.get_clock_info("perf_counter").resolution * 1e9))


# -- calling C thunks from Python ---------------------------------------------------------

_THUNK_FN = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_IncRef = ctypes.pythonapi.Py_IncRef
_IncRef.restype = None
_IncRef.argtypes = [ctypes.c_void_p]
_DecRef = ctypes.pythonapi.Py_DecRef
_DecRef.restype = None
_DecRef.argtypes = [ctypes.c_void_p]


def capsule_pointer(capsule: Any, name: bytes) -> int:
    """The pointer inside a PyCapsule named ``name`` (ValueError if the name differs)."""
    ptr = _GetPointer(capsule, name)
    if not ptr:  # pragma: no cover - PyCapsule_GetPointer raises first
        raise ValueError(f"capsule {capsule!r} holds a NULL pointer")
    return ptr


def _take(addr: int) -> Any:
    """Turn an owned ``PyObject *`` (an address) into a Python object, consuming the ref."""
    obj = ctypes.cast(ctypes.c_void_p(addr), ctypes.py_object).value
    _DecRef(addr)
    return obj


class _CThunk:
    """A ctypes trampoline calling one ``graphc_thunk_fn`` with the VM's ABI."""

    def __init__(self, name: str, capsule: Any, params: Any, n_in: int, n_out: int):
        self.name = name
        self.fn = _THUNK_FN(capsule_pointer(capsule, b"graphc.thunk"))
        self.params = None if params is None else capsule_pointer(params, b"graphc.params")
        # Buffers hold plain addresses, never references: nothing is kept alive by them.
        self.inbuf = (ctypes.c_void_p * max(n_in, 1))()
        self.outbuf = (ctypes.c_void_p * max(n_out, 1))()
        self.n_out = n_out

    def __call__(self, inputs: list, previous: list) -> list:
        """Run the thunk; ``previous`` are the output slots' current values (or None).

        ``previous`` is emptied: its references move into the thunk's output slots, so a
        value nothing else holds has a reference count of one there and may be reused.
        """
        inbuf, outbuf = self.inbuf, self.outbuf
        for k, v in enumerate(inputs):
            inbuf[k] = id(v)  # borrowed: ``inputs`` keeps them alive during the call
        for k in range(len(previous)):
            if previous[k] is None:
                outbuf[k] = None
            else:
                _IncRef(id(previous[k]))  # the slot owns a reference, as in the C VM
                outbuf[k] = id(previous[k])
        previous.clear()
        try:
            status = self.fn(self.params, inbuf, outbuf)  # raises if an error is set
        except BaseException:
            self._drop_outputs()
            raise
        if status != 0:
            self._drop_outputs()
            raise SystemError(f"C thunk of node {self.name!r} failed without an exception")
        if any(outbuf[k] is None for k in range(self.n_out)):
            self._drop_outputs()
            raise SystemError(
                f"C thunk of node {self.name!r} returned success but left an output NULL"
            )
        values = [_take(outbuf[k] or 0) for k in range(self.n_out)]  # none is NULL (checked)
        for k in range(self.n_out):
            outbuf[k] = None
        return values

    def _drop_outputs(self) -> None:
        for k in range(self.n_out):
            if self.outbuf[k] is not None:
                _DecRef(self.outbuf[k])
                self.outbuf[k] = None


# -- the VM -------------------------------------------------------------------------------


class PyVM:
    """Runs a Program node by node (or by demand, when the program has lazy nodes).

    Not reentrant: one VM object runs one call at a time; a concurrent call raises
    RuntimeError.  Call it with the GIL held (any Python caller does).
    """

    kind = "py"

    def __init__(self, program: Program, allow_gc: bool = True):
        self.program = program
        self.allow_gc = bool(allow_gc)
        self.failed_node: int | None = None
        nodes = program.nodes
        self._n = len(nodes)
        self._storage: list[Any] = [None] * program.n_storage
        const_slots = {s for s, _ in program.constants}
        for s, v in program.constants:
            self._storage[s] = v
        self._cells = [[[None] for _ in node.outputs] for node in nodes]
        self._cthunks = [
            None
            if node.c_thunk is None
            else _CThunk(
                node.name, node.c_thunk, node.c_params, len(node.inputs), len(node.outputs)
            )
            for node in nodes
        ]
        self._lazy = program.has_lazy
        # the memory plan (gc only): per node its (slot, buffer) outputs; per slot its buffer
        planned = self.allow_gc and not self._lazy and bool(program.buffers)
        self._buffer_of = list(program.buffers) if planned else [-1] * program.n_storage
        self._pool: list[Any] = [None] * (max(self._buffer_of, default=-1) + 1)
        # outputs a C thunk writes: the caller may give back their previous arrays
        fixed = set(program.inputs) | const_slots
        outs = [s for s in program.outputs if program.outputs.count(s) == 1 and s not in fixed]
        self._recyclable = {s for s in outs if nodes[self._producer_of(s)].c_thunk is not None}
        self._spare: dict[int, Any] = {}
        self._borrow = [
            tuple((s, self._buffer_of[s]) for s in node.outputs if self._buffer_of[s] >= 0)
            for node in nodes
        ]
        self._clear_after = gc_schedule(program) if self.allow_gc else [()] * self._n
        if self.allow_gc:
            end = set(range(program.n_storage))
        else:
            end = set(program.inputs) | set(program.outputs)
        self._clear_at_end = tuple(sorted(end - const_slots))
        self._producer = [-1] * program.n_storage
        for i, node in enumerate(nodes):
            for s in node.outputs:
                self._producer[s] = i
        self._n_readers = [0] * program.n_storage  # distinct reader nodes per slot
        for node in nodes:
            for s in set(node.inputs):
                self._n_readers[s] += 1
        self._keep_in_lazy = set(program.outputs) | const_slots | set(program.inputs)
        out_offsets = [0]
        for node in nodes:
            out_offsets.append(out_offsets[-1] + len(node.outputs))
        self._out_offsets = out_offsets
        self._lock = threading.Lock()
        self._owner: int | None = None  # the thread running this VM
        self._timing = self._memory = self._shapes = False
        self._trace_capacity = 0
        self.reset_stats()

    # -- profiling --------------------------------------------------------------------

    def set_profiling(
        self,
        timing: bool = False,
        memory: bool = False,
        shapes: bool = False,
        trace_capacity: int = 0,
    ) -> None:
        """Choose what is recorded; resets the trace buffer when its capacity changes."""
        self._timing, self._memory, self._shapes = bool(timing), bool(memory), bool(shapes)
        if int(trace_capacity) < 0:
            raise ValueError("trace_capacity must be >= 0")
        if int(trace_capacity) != self._trace_capacity:
            self._trace_capacity = int(trace_capacity)
            self._trace = np.zeros((self._trace_capacity, 4), dtype=np.int64)
            self._trace_len = 0
            self._trace_dropped = 0

    @property
    def _profiling(self) -> bool:
        return self._timing or self._memory or self._shapes or self._trace_capacity > 0

    def held_bytes(self) -> int:
        """Bytes of array storage the VM's slots, planned buffers and arrays given back
        for the next call (``recycle``: a replaced shared value) own now: arrays that own
        their data (views add nothing), constants excluded."""
        consts = {s for s, _ in self.program.constants}
        spares = sum(value_nbytes(v) for v in self._spare.values())
        return (
            self.plan_bytes()
            + spares
            + sum(
                value_nbytes(v)
                for s, v in enumerate(self._storage)
                if s not in consts and not (isinstance(v, np.ndarray) and v.base is not None)
            )
        )

    def _producer_of(self, slot: int) -> int:
        for i, node in enumerate(self.program.nodes):
            if slot in node.outputs:
                return i
        raise ValueError(f"slot {slot} is not written by a node")

    def recycle(self, k: int, value: Any) -> None:
        """Offer ``value`` (a previous value of output ``k``: the one a call just returned,
        or a shared variable's replaced value) as that output's buffer on the next call.
        The C thunk overwrites it only if nothing else holds it by then."""
        s = self.program.outputs[k]
        if s in self._recyclable and type(value) is np.ndarray and value.flags.owndata:
            self._spare[s] = value

    def plan_bytes(self) -> int:
        """Bytes of the memory plan's buffers kept between calls."""
        return sum(value_nbytes(v) for v in self._pool)

    def _poolable(self, s: int) -> bool:
        """Whether clearing slot ``s`` puts its array back in its buffer."""
        v = self._storage[s]
        return self._buffer_of[s] >= 0 and type(v) is np.ndarray and v.flags.owndata

    def _release(self, s: int) -> None:
        """Clear slot ``s``; a planned slot's array goes back to its buffer."""
        if self._poolable(s):
            self._pool[self._buffer_of[s]] = self._storage[s]
        self._storage[s] = None

    def reset_stats(self) -> None:
        """Zero every counter (the profiling choices are kept)."""
        n, n_out = self._n, self._out_offsets[-1]
        self._calls = np.zeros(n, np.int64)
        self._ns_total = np.zeros(n, np.int64)
        self._ns_min = np.full(n, _INT64_MAX, np.int64)
        self._ns_max = np.zeros(n, np.int64)
        self._ns_samples = np.full((n, RING), -1, np.int64)
        self._below = np.zeros(n, np.int64)
        self._bytes_min = np.full(n_out, _INT64_MAX, np.int64)
        self._bytes_max = np.zeros(n_out, np.int64)
        self._shape_sigs: list[list[tuple]] = [[] for _ in range(n)]
        self._shape_time: list[list[list[int]]] = [[] for _ in range(n)]
        self._calls_total = 0
        self._peak_bytes = 0
        self._trace = np.zeros((self._trace_capacity, 4), dtype=np.int64)
        self._trace_len = 0
        self._trace_dropped = 0

    def stats(self) -> dict[str, Any]:
        """A snapshot of the counters (see docs/architecture.md, "The VM")."""
        offs = self._out_offsets
        called = self._calls > 0
        bmin = np.where(self._bytes_min == _INT64_MAX, 0, self._bytes_min)
        return {
            "calls": self._calls.copy(),
            "ns_total": self._ns_total.copy(),
            "ns_min": np.where(called & (self._ns_min != _INT64_MAX), self._ns_min, 0),
            "ns_max": self._ns_max.copy(),
            "ns_samples": self._ns_samples.copy(),
            "n_below_resolution": self._below.copy(),
            "out_bytes_min": [bmin[offs[i] : offs[i + 1]].copy() for i in range(self._n)],
            "out_bytes_max": [
                self._bytes_max[offs[i] : offs[i + 1]].copy() for i in range(self._n)
            ],
            "shapes": public_signatures(self._shape_sigs),
            "shape_ns": [[(c, t) for c, t in per] for per in self._shape_time],
            "trace": self._trace[: self._trace_len].copy(),
            "trace_dropped": self._trace_dropped,
            "calls_total": self._calls_total,
            "peak_bytes": self._peak_bytes,
            "plan_buffers": len(self._pool),
            "plan_slots": sum(1 for b in self._buffer_of if b >= 0),
            "plan_bytes": self.plan_bytes(),
            "clock_resolution_ns": clock_resolution_ns(),
        }

    def _record(self, i: int, start: int, dur: int, node_values: tuple | None) -> None:
        """Record one completed run of node ``i`` (profiling only)."""
        c = int(self._calls[i])
        self._calls[i] = c + 1
        if self._timing:
            self._ns_total[i] += dur
            self._ns_min[i] = min(int(self._ns_min[i]), dur)
            self._ns_max[i] = max(int(self._ns_max[i]), dur)
            self._ns_samples[i, c % RING] = dur
            if dur == 0:
                self._below[i] += 1
        if self._trace_capacity:
            if self._trace_len < self._trace_capacity:
                self._trace[self._trace_len] = (self._calls_total, i, start, dur)
                self._trace_len += 1
            else:
                self._trace_dropped += 1
        if node_values is not None:
            ins, outs = node_values
            if self._memory:
                base = self._out_offsets[i]
                for k, v in enumerate(outs):
                    b = 0 if aliased_input(v, ins) is not None else value_nbytes(v)
                    self._bytes_min[base + k] = min(int(self._bytes_min[base + k]), b)
                    self._bytes_max[base + k] = max(int(self._bytes_max[base + k]), b)
            if self._shapes:
                sig = value_signature(ins, outs)
                record_call(self._shape_sigs[i], self._shape_time[i], sig, dur)

    # -- running ----------------------------------------------------------------------

    def __call__(self, args: Sequence[Any]) -> list:
        if not self._lock.acquire(blocking=False):
            if self._owner == threading.get_ident():
                raise RuntimeError(RECURSED)
            raise FunctionBusy()
        self._owner = threading.get_ident()
        try:
            return self._call(args)
        finally:
            self._owner = None
            self._lock.release()

    def _call(self, args: Sequence[Any]) -> list:
        program, storage = self.program, self._storage
        if len(args) != len(program.inputs):
            raise TypeError(f"expected {len(program.inputs)} arguments, got {len(args)}")
        self.failed_node = None
        for s, v in zip(program.inputs, args):
            storage[s] = v
        profiling = self._profiling
        # bytes of node-produced values held (memory profiling), planned buffers included
        self._live = self.plan_bytes()
        self._slot_bytes: dict[int, int] = {}
        self._cur = -1
        try:
            if self._lazy:
                self._run_lazy(profiling)
            elif profiling:
                self._run_profiled()
            else:
                self._run()
        except BaseException:
            self.failed_node = self._cur if self._cur >= 0 else None
            self._clear_all()
            raise
        result = [storage[s] for s in program.outputs]
        for k, value in enumerate(result):  # the next call's buffer, if let go by then
            self.recycle(k, value)
        for s in self._clear_at_end:
            storage[s] = None
        if profiling:
            self._calls_total += 1
        return result

    def _clear_all(self) -> None:
        const_slots = {s for s, _ in self.program.constants}
        for s in range(self.program.n_storage):
            if s not in const_slots:
                self._storage[s] = None

    def _run(self) -> None:
        """The plain loop: no clock, no counters."""
        clear_after, release = self._clear_after, self._release
        for i in range(self._n):
            self._cur = i
            self._run_node(i)
            for s in clear_after[i]:
                release(s)

    def _run_profiled(self) -> None:
        clear_after = self._clear_after
        timing = self._timing or self._trace_capacity > 0
        memory_or_shapes = self._memory or self._shapes
        clock = time.perf_counter_ns
        for i in range(self._n):
            self._cur = i
            start = clock() if timing else 0
            self._run_node(i)
            dur = clock() - start if timing else 0
            self._record(i, start, dur, self._node_values(i) if memory_or_shapes else None)
            if self._memory:
                self._track_live(i)
            for s in clear_after[i]:
                self._clear_slot(s)

    def _node_values(self, i: int) -> tuple:
        node, storage = self.program.nodes[i], self._storage
        return [storage[s] for s in node.inputs], [storage[s] for s in node.outputs]

    def _track_live(self, i: int) -> None:
        """Add node ``i``'s fresh outputs to the live total and update the peak; an output
        that is an input's buffer (in place) or a view of it takes over that input's count
        instead of adding bytes (unless that input's array goes back to the plan's pool,
        held, when its slot is cleared)."""
        node, storage = self.program.nodes[i], self._storage
        ins = [storage[s] for s in node.inputs]
        for s in node.outputs:
            k = aliased_input(storage[s], ins)
            self._live -= self._slot_bytes.get(s, 0)
            if k is not None and self._poolable(node.inputs[k]):
                self._slot_bytes[s] = 0
            elif k is not None:  # the count moves from the input's slot: live is unchanged
                self._slot_bytes[s] = self._slot_bytes.pop(node.inputs[k], 0)
            else:
                self._slot_bytes[s] = value_nbytes(storage[s])
                self._live += self._slot_bytes[s]
        self._peak_bytes = max(self._peak_bytes, self._live)

    def _clear_slot(self, s: int) -> None:
        b = self._buffer_of[s]
        self._release(s)
        if b < 0 or self._pool[b] is None:  # else the bytes stay held, in the buffer
            self._live -= self._slot_bytes.pop(s, 0)
        else:
            self._slot_bytes.pop(s, None)

    def _run_node(self, i: int) -> None:
        """Run a non-lazy node: inputs from the slots, outputs into the slots."""
        node, storage = self.program.nodes[i], self._storage
        for s, b in self._borrow[i]:  # the planned buffer becomes the previous value
            storage[s], self._pool[b] = self._pool[b], None
            if self._memory:
                self._slot_bytes[s] = value_nbytes(storage[s])
        inputs = [storage[s] for s in node.inputs]
        cthunk = self._cthunks[i]
        if cthunk is not None:
            if self._spare:
                for s in node.outputs:
                    if s in self._spare:
                        storage[s] = self._spare.pop(s)
            previous = [storage[s] for s in node.outputs]
            for s in node.outputs:
                storage[s] = None
            values = cthunk(inputs, previous)
            for s, v in zip(node.outputs, values):
                storage[s] = v
            return
        cells = self._cells[i]
        for cell, s in zip(cells, node.outputs):  # the cell becomes the only holder
            cell[0], storage[s] = storage[s], None
        assert node.perform is not None  # NodeImpl validation: no C thunk, not lazy
        try:
            node.perform(inputs, cells)
        except BaseException:
            for cell in cells:
                cell[0] = None
            raise
        self._move_cells(i, cells)

    def _move_cells(self, i: int, cells: list) -> None:
        node, storage = self.program.nodes[i], self._storage
        missing = [k for k, cell in enumerate(cells) if cell[0] is None]
        for cell, s in zip(cells, node.outputs):
            storage[s] = cell[0]
            cell[0] = None
        if missing:
            raise ValueError(f"node {i} ({node.name!r}) did not set output {missing[0]}")

    def _run_lazy(self, profiling: bool) -> None:
        """Demand-driven evaluation with an explicit stack.

        Outputs are demanded in order.  A regular node runs once all its inputs are
        computed; a lazy node is called with what is computed so far and returns the input
        positions it still needs, which are pushed; it is called again once they are ready.
        Under gc an intermediate is cleared as soon as every node reading it has finished
        (values read by nodes that never run are cleared at the end of the call).
        """
        program, nodes = self.program, self.program.nodes
        call = _LazyCall(self, profiling and (self._timing or self._trace_capacity > 0))
        clock = time.perf_counter_ns
        for out in program.outputs:
            if call.computed[out]:
                continue
            stack = [self._producer[out]]
            while stack:
                i = stack[-1]
                if call.done[i]:
                    stack.pop()
                    continue
                node = nodes[i]
                self._cur = i
                if node.lazy is None:
                    missing = [
                        self._producer[s] for s in reversed(node.inputs) if not call.computed[s]
                    ]
                    if missing:
                        stack.extend(missing)
                        continue
                    start = clock() if call.timing else 0
                    self._run_node(i)
                    dur = clock() - start if call.timing else 0
                else:
                    missing = self._step_lazy_node(i, call)
                    if missing:
                        stack.extend(missing)
                        continue
                    start, dur = call.first_start[i], call.pending_ns[i]
                stack.pop()
                self._finish_lazy_node(i, call, profiling, start, dur)

    def _step_lazy_node(self, i: int, call: _LazyCall) -> list[int]:
        """Call lazy node ``i`` once: the producers of the inputs it still needs, or ``[]``
        when it has finished (its outputs then moved to their slots)."""
        node, storage, clock = self.program.nodes[i], self._storage, time.perf_counter_ns
        assert node.lazy is not None
        cells = self._cells[i]
        if not call.started[i]:
            call.started[i] = True
            for cell, s in zip(cells, node.outputs):
                cell[0] = storage[s]
        flags = [call.computed[s] for s in node.inputs]
        values = [storage[s] if call.computed[s] else None for s in node.inputs]
        start = clock() if call.timing else 0
        if call.n_calls[i] == 0:
            call.first_start[i] = start
        call.n_calls[i] += 1
        try:
            need = tuple(node.lazy(flags, values, cells))
        except BaseException:
            for cell in cells:
                cell[0] = None
            raise
        del values
        if call.timing:
            call.pending_ns[i] += clock() - start
        if not need:
            self._move_cells(i, cells)
            return []
        missing = [
            self._producer[node.inputs[p]] for p in reversed(need)
            if not call.computed[node.inputs[p]]
        ]  # fmt: skip
        if not missing:
            for cell in cells:
                cell[0] = None
            raise RuntimeError(
                f"lazy node {i} ({node.name!r}) asked again for computed inputs {need}"
            )
        return missing

    def _finish_lazy_node(
        self, i: int, call: _LazyCall, profiling: bool, start: int, dur: int
    ) -> None:
        """Node ``i`` has run: mark its outputs computed, record it, clear what gc allows."""
        node = self.program.nodes[i]
        call.done[i] = True
        for s in node.outputs:
            call.computed[s] = True
        if profiling:
            mem = self._memory or self._shapes
            self._record(i, start, dur, self._node_values(i) if mem else None)
            if self._memory:
                self._track_live(i)
        if self.allow_gc:
            readers_left, keep = call.readers_left, self._keep_in_lazy
            for s in set(node.inputs):
                readers_left[s] -= 1
                if readers_left[s] == 0 and s not in keep:
                    self._clear_slot(s)
            for s in node.outputs:
                if readers_left[s] == 0 and s not in keep:
                    self._clear_slot(s)


class _LazyCall:
    """What one demand-driven call of a program with lazy nodes knows so far."""

    def __init__(self, vm: PyVM, timing: bool):
        program, n = vm.program, vm._n
        self.timing = timing
        self.computed = [False] * program.n_storage
        for s in program.inputs:
            self.computed[s] = True
        for s, _ in program.constants:
            self.computed[s] = True
        self.done = [False] * n
        self.started = [False] * n
        self.pending_ns = [0] * n  # lazy nodes: time over their invocations
        self.first_start = [0] * n
        self.n_calls = [0] * n  # invocations of each lazy thunk
        self.readers_left = list(vm._n_readers)
