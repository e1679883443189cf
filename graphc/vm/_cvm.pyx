# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The Cython stack VM: runs a Program with C thunks called through function pointers.

Semantics are those of the reference :class:`graphc.vm.pyvm.PyVM` (see
docs/architecture.md).  The storage is a C array of ``PyObject *`` owned by the VM; the
per-node data (slots read, output range, slots to clear) live in malloc'd C arrays so that
the hot loop touches no Python object for C nodes.

One VM object is not reentrant: a call while another is running (from another thread, or
from inside a node) raises RuntimeError.  Call it with the GIL held.
"""

cimport cython
from cpython.exc cimport PyErr_Occurred
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from cpython.pythread cimport PyThread_get_thread_ident
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport INT64_MAX, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, clock_getres, clock_gettime, timespec

cimport numpy as cnp

import numpy as np

from graphc.linker.program import Program, gc_schedule
from graphc.vm.pyvm import RECURSED, RING, FunctionBusy, public_signatures, record_call

cnp.import_array()

ctypedef int (*graphc_thunk_fn)(void *params, PyObject **inputs,
                                PyObject **outputs) noexcept

cdef enum:
    C_RING = 32          # length of the per-node ring of recent durations (= pyvm.RING)

assert C_RING == RING

cdef enum:
    KIND_C = 0
    KIND_PY = 1
    KIND_LAZY = 2

cdef struct CNode:
    int kind             # KIND_C, KIND_PY or KIND_LAZY
    graphc_thunk_fn fn   # C thunk (KIND_C)
    void *params         # its params pointer (may be NULL)
    int n_in             # number of inputs
    int *ins             # slots read (points into VM._ins)
    int n_out            # number of outputs
    int out_start        # first output slot (outputs are contiguous)
    int out_off          # offset of this node's outputs in per-output stat arrays
    int n_clear          # number of slots to clear after the node (gc)
    int *clear           # slots to clear (points into VM._clears)
    int recyclable       # some output may take a value given back through recycle()

cdef struct NodeStat:     # one node's timing counters, together in one cache line
    int64_t calls
    int64_t ns_total
    int64_t ns_min
    int64_t ns_max
    int64_t below        # durations of 0 (below the clock resolution)

cdef str _REENTERED = "function is already running in another thread"
_generic = np.generic


cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__i386__)
    #include <x86intrin.h>
    static inline long long graphc_ticks(void) { return (long long)__rdtsc(); }
    #define GRAPHC_HAVE_TSC 1
    #else
    static inline long long graphc_ticks(void) { return 0; }
    #define GRAPHC_HAVE_TSC 0
    #endif
    """
    long long graphc_ticks() noexcept nogil
    int GRAPHC_HAVE_TSC


cdef inline int64_t _monotonic_ns() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


def _invariant_tsc() -> bool:
    """The time-stamp counter ticks at a constant rate, also in idle states (x86 Linux)."""
    if not GRAPHC_HAVE_TSC:
        return False
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = line.split()
                    return "constant_tsc" in flags and "nonstop_tsc" in flags
    except OSError:
        pass
    return False


# Node times are read from the invariant TSC where there is one (7 ns a read here, against
# 16 ns for clock_gettime) and converted to nanoseconds only in stats(), calibrated
# against CLOCK_MONOTONIC from this anchor.
cdef bint _use_tsc = _invariant_tsc()
cdef int64_t _tsc0 = graphc_ticks() if _use_tsc else 0
cdef int64_t _ns0 = _monotonic_ns()


cdef inline int64_t _now() noexcept:
    """The profiling clock: TSC ticks, or CLOCK_MONOTONIC nanoseconds without a TSC."""
    if _use_tsc:
        return graphc_ticks()
    return _monotonic_ns()


cdef double _ns_per_tick():
    """Nanoseconds per ``_now()`` unit, measured over at least 2 ms since the anchor."""
    cdef int64_t t, n
    if not _use_tsc:
        return 1.0
    n = _monotonic_ns()
    while n - _ns0 < 2000000:
        n = _monotonic_ns()
    t = graphc_ticks()
    return <double>(n - _ns0) / <double>(t - _tsc0)


cdef inline void _clear(PyObject **slots, int s) noexcept:
    cdef PyObject *tmp = slots[s]
    slots[s] = NULL
    Py_XDECREF(tmp)


cdef object _signature(PyObject *o):
    """``(dtype, shape, strides)`` of a value (the C twin of pyvm._one_signature)."""
    if o == NULL:
        return None
    v = <object>o
    if cnp.PyArray_Check(v):
        return ((<cnp.ndarray>v).dtype, v.shape, v.strides)
    if isinstance(v, _generic):
        return (v.dtype, (), ())
    return None


cdef inline int64_t _nbytes(PyObject *o):
    """Bytes of a value for the memory profiler: arrays, numpy scalars, else 0."""
    cdef int64_t nb
    cdef int d
    cdef cnp.npy_intp *dims
    if o == NULL:
        return 0
    if cnp.PyArray_CheckExact(<object>o):  # itemsize x dims here, not through numpy's API
        nb = cnp.PyArray_ITEMSIZE(<cnp.ndarray>o)
        dims = cnp.PyArray_DIMS(<cnp.ndarray>o)
        for d in range(cnp.PyArray_NDIM(<cnp.ndarray>o)):
            nb *= dims[d]
        return nb
    if cnp.PyArray_Check(<object>o):
        return cnp.PyArray_NBYTES(<cnp.ndarray>o)
    if isinstance(<object>o, _generic):
        return (<object>o).itemsize
    return 0


@cython.final
cdef class CVM:
    """Cython VM over a :class:`~graphc.linker.program.Program` (same API as PyVM)."""

    cdef readonly object program
    cdef readonly bint allow_gc
    cdef public object failed_node
    cdef int _n                  # number of nodes
    cdef int _n_storage
    cdef PyObject **_slots       # the storage; owned references or NULL
    cdef PyObject **_inbuf       # gathered input pointers for one C call
    cdef CNode *_nodes
    cdef int *_ins               # all nodes' input slots, back to back
    cdef int *_clears            # all nodes' gc slots, back to back
    cdef int _n_inputs
    cdef int *_input_slots
    cdef int _n_outputs
    cdef int *_output_slots
    cdef int _n_end
    cdef int *_end_clear         # slots cleared after a call
    cdef char *_is_const         # per slot
    cdef char *_keep_lazy        # per slot: never cleared early in lazy mode
    cdef int *_producer          # per slot: node index or -1
    cdef int *_n_readers         # per slot: distinct reader nodes
    cdef bint _lazy
    cdef bint _running
    cdef unsigned long _owner     # the thread running this VM (while _running)
    cdef int _cur                # node being run (for failed_node)
    cdef list _cells             # per node: list of 1-element output cells
    cdef list _performs          # per node: perform / lazy callable or None
    cdef list _names
    cdef object _capsules        # keeps thunk/params capsules alive
    # profiling
    cdef bint _timing, _memory, _shapes   # what this call records (see arm)
    cdef bint _want_timing, _want_memory, _want_shapes  # what set_profiling chose
    cdef bint _armed             # whether the calls record what was chosen (arm)
    cdef bint _ragged            # the nodes' call counts may differ (see _fold_stamps)
    cdef Py_ssize_t _trace_cap, _trace_len
    cdef Py_ssize_t _trace_use   # _trace_cap while armed, else 0
    cdef int64_t _trace_dropped
    cdef int64_t *_trace         # trace_cap x (call_index, node, start_ns, dur_ns)
    cdef int _n_out_total
    cdef NodeStat *_st           # per node
    cdef int64_t *_stamps        # n + 1 clock reads of one call (_run_stamped)
    cdef int64_t *_ns_ring       # RING x n (a call's nodes write side by side), -1 unused
    cdef int64_t *_bytes_min     # per output of every node
    cdef int64_t *_bytes_max
    cdef int64_t *_slot_bytes    # per slot, bytes counted live in the current call
    cdef int64_t _live, _peak
    cdef int64_t _calls_total
    cdef int64_t _step_calls     # calls through the loop driver's entry point (_step) ...
    cdef int64_t _step_ticks     # ... and their time, both counted while timing is on
    cdef list _shape_sigs
    cdef list _shape_time        # per node, per signature: [calls, ticks] of the calls seen
    cdef int *_buf_of            # per slot: memory-plan buffer or -1
    cdef int _n_buf
    cdef PyObject **_pool        # per buffer: its array between uses (owned) or NULL
    cdef PyObject **_lent        # per slot: the buffer lent to it in this call (not owned)
    cdef char *_recyclable       # per slot: an output a C thunk writes (see recycle)
    cdef PyObject **_spare       # per slot: an array given back for the next call (owned)
    cdef int _n_spare            # non-NULL entries of _spare
    cdef PyObject **_argbuf      # one call's arguments (borrowed) ...
    cdef PyObject **_outbuf      # ... and results (owned until handed over)

    def __cinit__(self):
        self._slots = NULL
        self._nodes = NULL
        self._pool = NULL
        self._buf_of = NULL
        self._lent = NULL
        self._recyclable = NULL
        self._spare = NULL
        self._argbuf = NULL
        self._outbuf = NULL

    def __init__(self, program: Program, allow_gc: bool = True):
        cdef int i, k, n_ins_total = 0, n_clear_total = 0, max_in = 1, s
        cdef CNode *nd
        if not isinstance(program, Program):
            raise TypeError("CVM needs a graphc.linker.program.Program")
        self.program = program
        self.allow_gc = bool(allow_gc)
        self.failed_node = None
        nodes = program.nodes
        self._n = len(nodes)
        self._n_storage = program.n_storage
        plan = gc_schedule(program) if self.allow_gc else [()] * self._n
        for i in range(self._n):
            n_ins_total += len(nodes[i].inputs)
            n_clear_total += len(plan[i])
            max_in = max(max_in, len(nodes[i].inputs))
        S = max(self._n_storage, 1)
        self._slots = <PyObject **>calloc(S, sizeof(PyObject *))
        self._inbuf = <PyObject **>calloc(max_in, sizeof(PyObject *))
        self._nodes = <CNode *>calloc(max(self._n, 1), sizeof(CNode))
        self._ins = <int *>calloc(max(n_ins_total, 1), sizeof(int))
        self._clears = <int *>calloc(max(n_clear_total, 1), sizeof(int))
        self._is_const = <char *>calloc(S, 1)
        self._keep_lazy = <char *>calloc(S, 1)
        self._producer = <int *>malloc(S * sizeof(int))
        self._n_readers = <int *>calloc(S, sizeof(int))
        self._slot_bytes = <int64_t *>calloc(S, sizeof(int64_t))
        self._n_inputs = len(program.inputs)
        self._n_outputs = len(program.outputs)
        self._input_slots = <int *>calloc(max(self._n_inputs, 1), sizeof(int))
        self._output_slots = <int *>calloc(max(self._n_outputs, 1), sizeof(int))
        self._end_clear = <int *>calloc(S, sizeof(int))
        # the memory plan (gc only; lazy programs have none)
        planned = self.allow_gc and bool(program.buffers) and not program.has_lazy
        self._n_buf = max(program.buffers) + 1 if planned else 0
        self._buf_of = <int *>malloc(S * sizeof(int))
        self._pool = <PyObject **>calloc(max(self._n_buf, 1), sizeof(PyObject *))
        self._lent = <PyObject **>calloc(S, sizeof(PyObject *))
        if self._buf_of == NULL or self._pool == NULL or self._lent == NULL:
            raise MemoryError()
        for s in range(S):
            self._buf_of[s] = program.buffers[s] if planned and s < self._n_storage else -1
        if (self._slots == NULL or self._inbuf == NULL or self._nodes == NULL
                or self._ins == NULL or self._clears == NULL or self._is_const == NULL
                or self._keep_lazy == NULL or self._producer == NULL
                or self._n_readers == NULL or self._slot_bytes == NULL
                or self._input_slots == NULL or self._output_slots == NULL
                or self._end_clear == NULL):
            raise MemoryError()
        for s in range(S):
            self._producer[s] = -1
        for k, s in enumerate(program.inputs):
            self._input_slots[k] = s
            self._keep_lazy[s] = 1
        for k, s in enumerate(program.outputs):
            self._output_slots[k] = s
            self._keep_lazy[s] = 1
        for s, value in program.constants:
            self._is_const[s] = 1
            self._keep_lazy[s] = 1
            Py_INCREF(value)
            self._slots[s] = <PyObject *>value
        if self.allow_gc:
            end = [s for s in range(self._n_storage) if not self._is_const[s]]
        else:
            end = sorted((set(program.inputs) | set(program.outputs))
                         - {s for s, _ in program.constants})
        self._n_end = len(end)
        for k, s in enumerate(end):
            self._end_clear[k] = s

        self._cells = []
        self._performs = []
        self._names = []
        capsules = []
        cdef int *ins = self._ins
        cdef int *clears = self._clears
        cdef int out_off = 0
        self._lazy = False
        for i in range(self._n):
            node = nodes[i]
            nd = &self._nodes[i]
            nd.n_in = len(node.inputs)
            nd.ins = ins
            for k in range(nd.n_in):
                ins[k] = node.inputs[k]
            ins += nd.n_in
            for s in set(node.inputs):
                self._n_readers[s] += 1
            nd.n_out = len(node.outputs)
            nd.out_start = node.outputs[0] if nd.n_out else 0
            nd.out_off = out_off
            out_off += nd.n_out
            for s in node.outputs:
                self._producer[s] = i
            nd.n_clear = len(plan[i])
            nd.clear = clears
            for k in range(nd.n_clear):
                clears[k] = plan[i][k]
            clears += nd.n_clear
            self._names.append(node.name)
            self._cells.append([[None] for _ in range(nd.n_out)])
            if node.c_thunk is not None:
                nd.kind = KIND_C
                nd.fn = <graphc_thunk_fn>PyCapsule_GetPointer(node.c_thunk, "graphc.thunk")
                nd.params = NULL
                if node.c_params is not None:
                    nd.params = PyCapsule_GetPointer(node.c_params, "graphc.params")
                capsules.append((node.c_thunk, node.c_params))
                self._performs.append(None)
            elif node.lazy is not None:
                nd.kind = KIND_LAZY
                self._lazy = True
                self._performs.append(node.lazy)
            else:
                nd.kind = KIND_PY
                self._performs.append(node.perform)
        self._capsules = capsules
        fixed = set(program.inputs) | {s for s, _ in program.constants}
        self._recyclable = <char *>calloc(S, 1)
        self._spare = <PyObject **>calloc(S, sizeof(PyObject *))
        self._argbuf = <PyObject **>calloc(max(self._n_inputs, 1), sizeof(PyObject *))
        self._outbuf = <PyObject **>calloc(max(self._n_outputs, 1), sizeof(PyObject *))
        if (self._recyclable == NULL or self._spare == NULL or self._argbuf == NULL
                or self._outbuf == NULL):
            raise MemoryError()
        self._n_spare = 0
        for s in program.outputs:
            if (program.outputs.count(s) == 1 and s not in fixed
                    and self._nodes[self._producer[s]].kind == KIND_C):
                self._recyclable[s] = 1
                self._nodes[self._producer[s]].recyclable = 1
        self._n_out_total = out_off
        self._running = False
        self._trace = NULL
        self._trace_cap = 0
        self._trace_use = 0
        self._armed = True
        self._alloc_stats()
        self.reset_stats()

    cdef _alloc_stats(self):
        cdef int n = max(self._n, 1), no = max(self._n_out_total, 1)
        self._st = <NodeStat *>malloc(n * sizeof(NodeStat))
        self._stamps = <int64_t *>malloc((n + 1) * sizeof(int64_t))
        self._ns_ring = <int64_t *>malloc(n * C_RING * sizeof(int64_t))
        self._bytes_min = <int64_t *>malloc(no * sizeof(int64_t))
        self._bytes_max = <int64_t *>malloc(no * sizeof(int64_t))
        if (self._st == NULL or self._stamps == NULL or self._ns_ring == NULL
                or self._bytes_min == NULL or self._bytes_max == NULL):
            raise MemoryError()

    def __dealloc__(self):
        cdef int s
        if self._slots != NULL:
            for s in range(self._n_storage):
                _clear(self._slots, s)
        free(self._slots); free(self._inbuf); free(self._nodes); free(self._ins)
        free(self._clears); free(self._is_const); free(self._keep_lazy)
        free(self._producer); free(self._n_readers); free(self._slot_bytes)
        free(self._input_slots); free(self._output_slots); free(self._end_clear)
        free(self._st); free(self._stamps); free(self._ns_ring); free(self._bytes_min)
        free(self._bytes_max); free(self._trace)
        if self._pool != NULL:
            for s in range(self._n_buf):
                Py_XDECREF(self._pool[s])
        free(self._pool); free(self._buf_of); free(self._lent)
        if self._spare != NULL:
            for s in range(self._n_storage):
                Py_XDECREF(self._spare[s])
        free(self._spare); free(self._recyclable); free(self._argbuf); free(self._outbuf)

    property kind:
        def __get__(self):
            return "cvm"

    # -- profiling ------------------------------------------------------------------

    def set_profiling(self, timing=False, memory=False, shapes=False, trace_capacity=0):
        """Choose what is recorded; resets the trace buffer when its capacity changes.

        While another thread's call runs the VM, only the trace buffer cannot change: the
        running call keeps the loop it chose, so at most its own records are partial."""
        cap = int(trace_capacity)
        if cap < 0:
            raise ValueError("trace_capacity must be >= 0")
        if self._running and cap != self._trace_cap:
            raise RuntimeError(_REENTERED)
        self._want_timing = bool(timing)
        self._want_memory = bool(memory)
        self._want_shapes = bool(shapes)
        if cap != self._trace_cap:
            free(self._trace)
            self._trace = NULL
            if cap:
                self._trace = <int64_t *>calloc(cap * 4, sizeof(int64_t))
                if self._trace == NULL:
                    self._trace_cap = 0
                    raise MemoryError()
            self._trace_cap = cap
            self._trace_len = 0
            self._trace_dropped = 0
        self._arm(self._armed)

    def arm(self, bint on):
        """Record the next calls as set_profiling chose (``on``), or run them unrecorded
        with the choices and the counters kept (a sampled profile's untimed calls): a flag
        flip, no allocation, the trace buffer kept."""
        self._arm(on)

    cdef inline void _arm(self, bint on) noexcept:
        self._armed = on
        self._timing = on and self._want_timing
        self._memory = on and self._want_memory
        self._shapes = on and self._want_shapes
        self._trace_use = self._trace_cap if on else 0

    def recycle(self, k, value):
        """Offer ``value`` (a previous value of output ``k``: the one a call just returned,
        or a shared variable's replaced value) as that output's buffer on the next call
        (see PyVM.recycle)."""
        self._recycle(self.program.outputs[k], <PyObject *>value)

    cdef inline void _recycle(self, int s, PyObject *value) noexcept:
        """recycle() by slot: keep ``value`` (a new reference is taken) for slot ``s``."""
        cdef PyObject *old
        if (self._recyclable[s] and cnp.PyArray_CheckExact(<object>value)
                and cnp.PyArray_CHKFLAGS(<cnp.ndarray>value, cnp.NPY_ARRAY_OWNDATA)):
            Py_INCREF(<object>value)
            old = self._spare[s]
            self._spare[s] = value
            if old == NULL:
                self._n_spare += 1
            Py_XDECREF(old)

    def plan_bytes(self):
        """Bytes of the memory plan's buffers kept between calls."""
        return self._plan_bytes()

    cdef int64_t _plan_bytes(self) noexcept:
        cdef int64_t total = 0
        cdef int b
        for b in range(self._n_buf):
            total += _nbytes(self._pool[b])
        return total

    def held_bytes(self):
        """Bytes of array storage the VM's slots, planned buffers and arrays given back
        for the next call (``recycle``: a replaced shared value) own now: arrays that own
        their data (views add nothing), constants excluded."""
        cdef int64_t total = self._plan_bytes()
        cdef int s
        cdef object v
        for s in range(self._n_storage):
            if self._spare[s] != NULL:
                total += _nbytes(self._spare[s])
        for s in range(self._n_storage):
            if self._slots[s] != NULL and not self._is_const[s]:
                v = <object>self._slots[s]
                if not (cnp.PyArray_Check(v) and cnp.PyArray_BASE(<cnp.ndarray>v) != NULL):
                    total += _nbytes(self._slots[s])
        return total

    def step_counts(self):
        """``(steps, ns)``: the calls made through the loop driver's C entry point while
        timing was on, and their total time (each step timed around the whole VM call)."""
        return self._step_calls, <int64_t>(self._step_ticks * _ns_per_tick())

    def reset_stats(self):
        """Zero every counter (the profiling choices are kept)."""
        cdef int i
        for i in range(self._n):
            self._st[i].calls = 0
            self._st[i].ns_total = 0
            self._st[i].ns_min = INT64_MAX
            self._st[i].ns_max = 0
            self._st[i].below = 0
        for i in range(self._n * C_RING):
            self._ns_ring[i] = -1
        for i in range(self._n_out_total):
            self._bytes_min[i] = INT64_MAX
            self._bytes_max[i] = 0
        self._shape_sigs = [[] for _ in range(self._n)]
        self._shape_time = [[] for _ in range(self._n)]
        self._calls_total = 0
        self._ragged = False
        self._step_calls = 0
        self._step_ticks = 0
        self._peak = 0
        self._trace_len = 0
        self._trace_dropped = 0

    def stats(self):
        """A snapshot of the counters (see docs/architecture.md, "The VM")."""
        cdef int i, k, n = self._n
        cdef NodeStat *st
        cdef timespec res
        calls = np.zeros(n, np.int64)
        ns_total = np.zeros(n, np.int64)
        ns_min = np.zeros(n, np.int64)
        ns_max = np.zeros(n, np.int64)
        below = np.zeros(n, np.int64)
        ring = np.full((n, RING), -1, np.int64)
        cdef int64_t[::1] c_v = calls, t_v = ns_total, mn_v = ns_min, mx_v = ns_max
        cdef int64_t[::1] b_v = below
        cdef int64_t[:, ::1] r_v = ring
        cdef double f = _ns_per_tick()
        for i in range(n):
            st = &self._st[i]
            c_v[i] = st.calls
            t_v[i] = <int64_t>(st.ns_total * f)
            mn_v[i] = 0 if st.ns_min == INT64_MAX else <int64_t>(st.ns_min * f)
            mx_v[i] = <int64_t>(st.ns_max * f)
            b_v[i] = st.below
            for k in range(C_RING):
                v = self._ns_ring[k * n + i]
                r_v[i, k] = v if v < 0 else <int64_t>(v * f)
        bmin, bmax = [], []
        for i in range(n):
            nd = &self._nodes[i]
            lo = np.zeros(nd.n_out, np.int64)
            hi = np.zeros(nd.n_out, np.int64)
            for k in range(nd.n_out):
                v = self._bytes_min[nd.out_off + k]
                lo[k] = 0 if v == INT64_MAX else v
                hi[k] = self._bytes_max[nd.out_off + k]
            bmin.append(lo)
            bmax.append(hi)
        trace = np.zeros((self._trace_len, 4), np.int64)
        for i in range(self._trace_len):
            trace[i, 0] = self._trace[4 * i]
            trace[i, 1] = self._trace[4 * i + 1]
            start = self._trace[4 * i + 2]  # to CLOCK_MONOTONIC ns
            trace[i, 2] = start if not _use_tsc else _ns0 + <int64_t>((start - _tsc0) * f)
            trace[i, 3] = <int64_t>(self._trace[4 * i + 3] * f)
        clock_getres(CLOCK_MONOTONIC, &res)
        return {
            "calls": calls,
            "ns_total": ns_total,
            "ns_min": ns_min,
            "ns_max": ns_max,
            "ns_samples": ring,
            "n_below_resolution": below,
            "out_bytes_min": bmin,
            "out_bytes_max": bmax,
            "shapes": public_signatures(self._shape_sigs),
            "shape_ns": [[(c, <int64_t>(t * f)) for c, t in per] for per in self._shape_time],
            "trace": trace,
            "trace_dropped": self._trace_dropped,
            "calls_total": self._calls_total,
            "step_calls": self._step_calls,
            "step_ns": <int64_t>(self._step_ticks * f),
            "peak_bytes": self._peak,
            "plan_buffers": self._n_buf,
            "plan_slots": sum(1 for k in range(self._n_storage) if self._buf_of[k] >= 0),
            "plan_bytes": self.plan_bytes(),
            "clock_resolution_ns": (
                1 if _use_tsc else max(1, res.tv_sec * 1000000000 + res.tv_nsec)
            ),
        }

    cdef inline void _record_time(self, int i, int64_t start, int64_t dur) noexcept:
        cdef NodeStat *st = &self._st[i]
        st.ns_total += dur
        if dur < st.ns_min:
            st.ns_min = dur
        if dur > st.ns_max:
            st.ns_max = dur
        self._ns_ring[(st.calls % C_RING) * self._n + i] = dur
        if dur == 0:
            st.below += 1
        if self._trace_use:
            if self._trace_len < self._trace_cap:
                self._trace[4 * self._trace_len] = self._calls_total
                self._trace[4 * self._trace_len + 1] = i
                self._trace[4 * self._trace_len + 2] = start
                self._trace[4 * self._trace_len + 3] = dur
                self._trace_len += 1
            else:
                self._trace_dropped += 1

    cdef int _record_values(self, int i, int64_t dur) except -1:
        """Memory and shape statistics of node ``i``'s just-produced outputs."""
        if self._memory:
            self._record_memory(&self._nodes[i])
        if self._shapes:
            self._record_shapes(i, dur)
        return 0

    cdef inline void _record_memory(self, CNode *nd) noexcept:
        """Bytes node ``nd`` allocated for its outputs; the live total and its peak."""
        cdef int k, s
        cdef int64_t b
        cdef int src
        cdef PyObject *p
        for k in range(nd.n_out):
            s = nd.out_start + k
            p = self._slots[s]
            if p != NULL and p == self._lent[s]:
                # the thunk wrote into the planned buffer lent to it (_borrow counted it):
                # not a view or in place of an input, nothing new allocated
                b = self._slot_bytes[s]
            else:
                src = self._aliased_input(nd, p)
                if src >= 0:
                    # in place or a view of an input: no new bytes; the buffer's count
                    # moves with it, so freeing the input slot does not forget it (unless
                    # that slot's array goes back to the plan's pool, held, when freed)
                    b = 0
                    self._live -= self._slot_bytes[s]
                    if self._poolable(src):
                        self._slot_bytes[s] = 0
                    else:
                        self._slot_bytes[s] = self._slot_bytes[src]
                        self._slot_bytes[src] = 0
                else:
                    b = _nbytes(p)
                    self._live += b - self._slot_bytes[s]
                    self._slot_bytes[s] = b
            self._lent[s] = NULL
            if b < self._bytes_min[nd.out_off + k]:
                self._bytes_min[nd.out_off + k] = b
            if b > self._bytes_max[nd.out_off + k]:
                self._bytes_max[nd.out_off + k] = b
        if self._live > self._peak:
            self._peak = self._live

    cdef int _record_shapes(self, int i, int64_t dur) except -1:
        """The run-time (dtype, shape, strides) of node ``i``'s inputs and outputs, and
        the call's duration ``dur`` (ticks) added to that signature's calls."""
        cdef CNode *nd = &self._nodes[i]
        cdef int k
        sigs = <list>self._shape_sigs[i]
        ins = PyTuple_New(nd.n_in)
        for k in range(nd.n_in):
            item = _signature(self._slots[nd.ins[k]])
            Py_INCREF(item)
            PyTuple_SET_ITEM(ins, k, item)
        outs = PyTuple_New(nd.n_out)
        for k in range(nd.n_out):
            item = _signature(self._slots[nd.out_start + k])
            Py_INCREF(item)
            PyTuple_SET_ITEM(outs, k, item)
        sig = (ins, outs)
        record_call(sigs, <list>self._shape_time[i], sig, dur)
        return 0

    cdef int _aliased_input(self, CNode *nd, PyObject *out) noexcept:
        """The input slot whose buffer ``out`` is (in place) or views, else -1."""
        cdef int j
        cdef PyObject *inp
        cdef PyObject *base = NULL
        if out == NULL:
            return -1
        if cnp.PyArray_Check(<object>out):
            base = <PyObject *>cnp.PyArray_BASE(<cnp.ndarray>out)
        for j in range(nd.n_in):
            inp = self._slots[nd.ins[j]]
            if inp == NULL:
                continue
            if inp == out or (base != NULL and base == inp):
                return nd.ins[j]
            if base != NULL and cnp.PyArray_Check(<object>inp) and \
                    base == <PyObject *>cnp.PyArray_BASE(<cnp.ndarray>inp):
                return nd.ins[j]
        return -1

    cdef inline object _value(self, int s):
        cdef PyObject *p = self._slots[s]
        return None if p == NULL else <object>p

    cdef inline void _clear_counted(self, int s) noexcept:
        if not self._release(s):  # a pooled array's bytes stay held, in its buffer
            self._live -= self._slot_bytes[s]
        self._slot_bytes[s] = 0

    cdef inline bint _poolable(self, int s) noexcept:
        """Whether clearing slot ``s`` puts its array back in its buffer."""
        cdef PyObject *tmp = self._slots[s]
        return (self._buf_of[s] >= 0 and tmp != NULL and cnp.PyArray_CheckExact(<object>tmp)
                and cnp.PyArray_CHKFLAGS(<cnp.ndarray>tmp, cnp.NPY_ARRAY_OWNDATA))

    cdef inline bint _release(self, int s) noexcept:
        """Clear slot ``s``; a planned slot's array goes back to its buffer (returns 1)."""
        cdef PyObject *tmp = self._slots[s]
        cdef int b = self._buf_of[s]
        if self._poolable(s):
            self._slots[s] = NULL
            Py_XDECREF(self._pool[b])
            self._pool[b] = tmp
            return 1
        self._slots[s] = NULL
        Py_XDECREF(tmp)
        return 0

    cdef int _take_spare(self, CNode *nd) except -1:
        """Put arrays given back through recycle() into node ``nd``'s output slots."""
        cdef int k, s
        cdef PyObject *old
        cdef PyObject *value
        for k in range(nd.n_out):
            s = nd.out_start + k
            value = self._spare[s]
            if value != NULL:  # the spare's reference moves to the slot
                self._spare[s] = NULL
                self._n_spare -= 1
                old = self._slots[s]
                self._slots[s] = value
                Py_XDECREF(old)
        return 0

    cdef inline void _borrow(self, CNode *nd) noexcept:
        """Hand node ``nd`` its planned buffers as the output slots' previous values."""
        cdef int k, s, b
        cdef PyObject *old
        cdef PyObject *p
        for k in range(nd.n_out):
            s = nd.out_start + k
            b = self._buf_of[s]
            if b < 0:
                continue
            p = self._pool[b]
            if self._memory:
                self._lent[s] = p  # NULL: nothing lent this time
            if p != NULL:
                old = self._slots[s]
                self._slots[s] = p
                self._pool[b] = NULL
                Py_XDECREF(old)
                if self._memory:
                    self._slot_bytes[s] = _nbytes(p)

    # -- running --------------------------------------------------------------------

    def __call__(self, args):
        cdef int k
        cdef list items
        self._enter()
        try:
            items = args if type(args) is list else list(args)
            if len(items) != self._n_inputs:
                raise TypeError(f"expected {self._n_inputs} arguments, got {len(items)}")
            for k in range(self._n_inputs):
                self._argbuf[k] = <PyObject *>PyList_GET_ITEM(items, k)
            self._execute(self._argbuf, self._outbuf)
            result = PyList_New(self._n_outputs)
            for k in range(self._n_outputs):  # the list takes over the references
                # kept as the output's buffer for the next call, which writes into it only
                # if the caller has let go of it by then (see recycle)
                self._recycle(self._output_slots[k], self._outbuf[k])
                PyList_SET_ITEM(result, k, <object>self._outbuf[k])
                self._outbuf[k] = NULL
            return result
        finally:
            self._running = False

    cdef inline int _enter(self) except -1:
        """Mark the VM running in this thread, or raise: FunctionBusy when another thread
        runs it, RuntimeError when this thread does (a node called it again)."""
        if self._running:  # check and set with no Python code in between (GIL held)
            if self._owner == PyThread_get_thread_ident():
                raise RuntimeError(RECURSED)
            raise FunctionBusy()
        self._running = True
        self._owner = PyThread_get_thread_ident()
        return 0

    cdef int _execute(self, PyObject **args, PyObject **outs) except -1:
        """One call (``_running`` set by the caller): the ``_n_inputs`` arguments are
        borrowed; ``outs`` receives a new reference to each output (None for an empty
        slot). On failure every non-constant slot is cleared and ``outs`` is untouched."""
        cdef int k, s
        cdef bint profiling
        cdef PyObject *p
        self.failed_node = None
        for k in range(self._n_inputs):
            s = self._input_slots[k]
            Py_INCREF(<object>args[k])
            p = self._slots[s]
            self._slots[s] = args[k]
            Py_XDECREF(p)
        profiling = self._timing or self._memory or self._shapes or self._trace_use > 0
        self._cur = -1
        try:
            if self._lazy:
                self._ragged = True
                self._run_lazy(profiling)
            elif profiling:
                self._run_profiled()
            else:
                self._run_plain()
        except BaseException:
            if self._cur >= 0:
                self.failed_node = self._cur
            if profiling:
                self._ragged = True
            self._clear_nonconst()
            raise
        for k in range(self._n_outputs):
            value = self._value(self._output_slots[k])
            Py_INCREF(value)
            outs[k] = <PyObject *>value
        for k in range(self._n_end):
            _clear(self._slots, self._end_clear[k])
        if profiling:
            self._calls_total += 1
        return 0

    cdef void _clear_nonconst(self) noexcept:
        cdef int s
        for s in range(self._n_storage):
            if not self._is_const[s]:
                _clear(self._slots, s)

    cdef int _c_failed(self, int i, int status) except -1:
        """Turn a C thunk failure into a Python exception (always returns -1)."""
        cdef CNode *nd = &self._nodes[i]
        cdef int k
        if status != 0:
            if PyErr_Occurred() == NULL:
                raise SystemError(
                    f"C thunk of node {i} ({self._names[i]!r}) returned {status} "
                    "without setting an exception")
            return -1
        for k in range(nd.n_out):
            if self._slots[nd.out_start + k] == NULL:
                raise SystemError(
                    f"C thunk of node {i} ({self._names[i]!r}) returned success but "
                    f"left output {k} NULL")
        return -1

    cdef inline int _run_c(self, int i, CNode *nd) except -1:
        """Run a C node: gather borrowed inputs, call the thunk, check the outputs."""
        cdef int k, status
        cdef PyObject **slots = self._slots
        cdef PyObject **inbuf = self._inbuf
        for k in range(nd.n_in):
            inbuf[k] = slots[nd.ins[k]]
        status = nd.fn(nd.params, inbuf, slots + nd.out_start)
        if status != 0:
            return self._c_failed(i, status)
        for k in range(nd.n_out):
            if slots[nd.out_start + k] == NULL:
                return self._c_failed(i, 0)
        return 0

    cdef int _run_py(self, int i, CNode *nd) except -1:
        """Run a Python perform node through its persistent output cells. Each slot's
        previous value (a planned buffer lent to it, or the last call's value) moves into
        its cell: while ``perform`` runs the cell is its only holder in the VM."""
        cdef int k, s
        cdef list cells = <list>self._cells[i]
        cdef list inputs = [<object>self._slots[nd.ins[k]] for k in range(nd.n_in)]
        for k in range(nd.n_out):
            s = nd.out_start + k
            (<list>cells[k])[0] = self._value(s)
            _clear(self._slots, s)
        try:
            self._performs[i](inputs, cells)
        except BaseException:
            for k in range(nd.n_out):
                (<list>cells[k])[0] = None
            raise
        return self._move_cells(i, nd, cells)

    cdef int _move_cells(self, int i, CNode *nd, list cells) except -1:
        cdef int k, missing = -1
        cdef PyObject *old
        for k in range(nd.n_out):
            cell = <list>cells[k]
            value = cell[0]
            cell[0] = None
            if value is None:
                if missing < 0:
                    missing = k
                _clear(self._slots, nd.out_start + k)
                continue
            Py_INCREF(value)
            old = self._slots[nd.out_start + k]
            self._slots[nd.out_start + k] = <PyObject *>value
            Py_XDECREF(old)
        if missing >= 0:
            raise ValueError(f"node {i} ({self._names[i]!r}) did not set output {missing}")
        return 0

    cdef inline int _run_node(self, int i, CNode *nd) except -1:
        """Run node ``i``: a C thunk into its planned or recycled buffer, or a Python one."""
        self._cur = i
        if self._n_buf:  # (the plan lends buffers to C thunks and to performs that reuse them)
            self._borrow(nd)
        if nd.kind == KIND_C:
            if nd.recyclable and self._n_spare:
                self._take_spare(nd)
            return self._run_c(i, nd)
        return self._run_py(i, nd)

    cdef int _run_plain(self) except -1:
        """The plain loop: no clock, no counters, no Python objects for C nodes."""
        cdef int i, k, n = self._n
        cdef CNode *nodes = self._nodes
        cdef CNode *nd
        cdef PyObject **slots = self._slots
        for i in range(n):
            nd = &nodes[i]
            self._run_node(i, nd)
            for k in range(nd.n_clear):
                self._release(nd.clear[k])
        return 0

    cdef int _run_profiled(self) except -1:
        """Like _run_plain, recording what set_profiling asked for.

        One clock read per node: a node's duration runs from the previous node's end (or
        the start of the loop) to its own end, so it includes the VM's per-node work
        (gathering inputs, gc, a few ns of memory bookkeeping) but not shape recording.
        """
        cdef int i, k, n = self._n
        cdef CNode *nd
        cdef bint timing = self._timing or self._trace_use > 0
        cdef bint memory = self._memory, shapes = self._shapes
        cdef int64_t t0 = 0, t1 = 0
        self._live = 0
        if memory:  # (only the memory records read the per-slot bytes)
            self._live = self._plan_bytes()
            memset(self._slot_bytes, 0, max(self._n_storage, 1) * sizeof(int64_t))
        if self._timing and not shapes and not self._trace_use:
            return self._run_stamped(memory)
        if timing:
            t0 = _now()
        for i in range(n):
            nd = &self._nodes[i]
            self._run_node(i, nd)
            if timing:
                t1 = _now()
                self._record_time(i, t0, t1 - t0)
            self._st[i].calls += 1
            if memory:
                self._record_memory(nd)
            if shapes:
                self._record_shapes(i, t1 - t0 if timing else 0)
            if memory:
                for k in range(nd.n_clear):
                    self._clear_counted(nd.clear[k])
            else:
                for k in range(nd.n_clear):
                    self._release(nd.clear[k])
            if timing:  # shape recording is Python work: keep it out of the next node's time
                t0 = _now() if shapes else t1
        return 0

    cdef int _run_stamped(self, bint memory) except -1:
        """The steady-state profiled loop (timing, maybe memory; no shapes, no trace): the
        loop only stores one clock read per node, the counters are updated after it
        (also for the nodes that ran when one raises: ``_cur`` is the one that raised).
        Same durations as _run_profiled. One loop per function, so that the C compiler
        inlines the node's run into it as into _run_plain's."""
        cdef int i, k, n = self._n
        cdef CNode *nd
        cdef CNode *nodes = self._nodes
        cdef int64_t *stamps = self._stamps
        if memory:
            return self._run_stamped_memory()
        stamps[0] = _now()
        try:
            for i in range(n):
                nd = &nodes[i]
                self._run_node(i, nd)
                stamps[i + 1] = _now()
                for k in range(nd.n_clear):
                    self._release(nd.clear[k])
        except BaseException:
            self._fold_stamps(self._cur)  # the nodes before the one that raised
            raise
        self._fold_stamps(n)
        return 0

    cdef int _run_stamped_memory(self) except -1:
        """_run_stamped with the memory records."""
        cdef int i, k, n = self._n
        cdef CNode *nd
        cdef int64_t *stamps = self._stamps
        stamps[0] = _now()
        try:
            for i in range(n):
                nd = &self._nodes[i]
                self._run_node(i, nd)
                stamps[i + 1] = _now()
                self._record_memory(nd)
                for k in range(nd.n_clear):
                    self._clear_counted(nd.clear[k])
        except BaseException:
            self._fold_stamps(self._cur)
            raise
        self._fold_stamps(n)
        return 0

    cdef void _fold_stamps(self, int done) noexcept:
        """Record the durations of the first ``done`` nodes from ``_stamps``. Until a
        profiled call fails or runs lazily, every node has run as many times (a call runs
        them all), so one ring row takes them all."""
        cdef int i, n = self._n
        cdef int64_t dur
        cdef int64_t *stamps = self._stamps
        cdef int64_t *row
        cdef NodeStat *st = self._st
        if done <= 0:
            return
        if self._ragged:  # the nodes' call counts differ: each its own ring slot
            for i in range(done):
                self._record_time(i, 0, stamps[i + 1] - stamps[i])
                st[i].calls += 1
            return
        row = self._ns_ring + (st[0].calls & (C_RING - 1)) * n
        for i in range(done):
            dur = stamps[i + 1] - stamps[i]
            st[i].calls += 1
            st[i].ns_total += dur
            st[i].ns_min = dur if dur < st[i].ns_min else st[i].ns_min
            st[i].ns_max = dur if dur > st[i].ns_max else st[i].ns_max
            st[i].below += dur == 0
            row[i] = dur

    cdef int _run_lazy(self, bint profiling) except -1:
        """Demand-driven evaluation with an explicit stack (see PyVM._run_lazy).

        Under gc an intermediate is cleared as soon as every node reading it has finished;
        values read by nodes that never run are cleared at the end of the call.
        """
        cdef int i, k, s, p, n = self._n
        cdef CNode *nd
        cdef bint timing = profiling and (self._timing or self._trace_use > 0)
        cdef bint values = profiling and (self._memory or self._shapes)
        cdef int64_t start = 0, dur = 0
        cdef bytearray computed = bytearray(max(self._n_storage, 1))
        cdef bytearray done = bytearray(max(n, 1))
        cdef list readers_left = [self._n_readers[s] for s in range(self._n_storage)]
        cdef list started = [False] * n
        cdef list pending = [0] * n
        cdef list first = [0] * n
        cdef list stack
        self._live = 0
        memset(self._slot_bytes, 0, max(self._n_storage, 1) * sizeof(int64_t))
        for k in range(self._n_inputs):
            computed[self._input_slots[k]] = 1
        for s in range(self._n_storage):
            if self._is_const[s]:
                computed[s] = 1
        for k in range(self._n_outputs):
            s = self._output_slots[k]
            if computed[s]:
                continue
            stack = [self._producer[s]]
            while stack:
                i = stack[len(stack) - 1]
                if done[i]:
                    stack.pop()
                    continue
                nd = &self._nodes[i]
                self._cur = i
                if nd.kind != KIND_LAZY:
                    missing = [self._producer[nd.ins[p]] for p in range(nd.n_in - 1, -1, -1)
                               if not computed[nd.ins[p]]]
                    if missing:
                        stack.extend(missing)
                        continue
                    if timing:
                        start = _now()
                    if nd.kind == KIND_C:
                        self._run_c(i, nd)
                    else:
                        self._run_py(i, nd)
                    if timing:
                        dur = _now() - start
                else:
                    cells = <list>self._cells[i]
                    if not started[i]:
                        started[i] = True
                        for p in range(nd.n_out):
                            (<list>cells[p])[0] = self._value(nd.out_start + p)
                    flags = [bool(computed[nd.ins[p]]) for p in range(nd.n_in)]
                    vals = [self._value(nd.ins[p]) if computed[nd.ins[p]] else None
                            for p in range(nd.n_in)]
                    if timing:
                        start = _now()
                        if pending[i] == 0 and first[i] == 0:
                            first[i] = start
                    try:
                        need = tuple(self._performs[i](flags, vals, cells))
                    except BaseException:
                        for p in range(nd.n_out):
                            (<list>cells[p])[0] = None
                        raise
                    vals = None
                    if timing:
                        pending[i] += _now() - start
                    if need:
                        missing = [self._producer[nd.ins[p]] for p in reversed(need)
                                   if not computed[nd.ins[p]]]
                        if not missing:
                            for p in range(nd.n_out):
                                (<list>cells[p])[0] = None
                            raise RuntimeError(
                                f"lazy node {i} ({self._names[i]!r}) asked again for "
                                f"computed inputs {need}")
                        stack.extend(missing)
                        continue
                    self._move_cells(i, nd, cells)
                    start = first[i]
                    dur = pending[i]
                stack.pop()
                done[i] = 1
                for p in range(nd.n_out):
                    computed[nd.out_start + p] = 1
                if profiling:
                    if timing:
                        self._record_time(i, start, dur)
                    self._st[i].calls += 1
                    if values:
                        self._record_values(i, dur if timing else 0)
                if self.allow_gc:
                    for s in set([nd.ins[p] for p in range(nd.n_in)]):
                        readers_left[s] -= 1
                        if readers_left[s] == 0 and not self._keep_lazy[s]:
                            self._clear_counted(s)
                    for p in range(nd.n_out):
                        s = nd.out_start + p
                        if readers_left[s] == 0 and not self._keep_lazy[s]:
                            self._clear_counted(s)
        return 0


# -- the entry point of the loop driver (graphc.vm._loop) -----------------------------

cdef int _step(PyObject *vm, PyObject **args, PyObject **outs) except -1:
    """Call CVM ``vm`` on the C array ``args`` (borrowed, ``n_inputs`` of them); put new
    references to its outputs in ``outs``. Same checks and semantics as ``CVM.__call__``,
    except for profiling: with timing on, the call is counted and timed in ``step_counts``
    and shape recording, if on, stops after it."""
    cdef CVM self = <CVM>vm
    cdef int64_t t0
    self._enter()
    try:
        if not self._timing:
            self._execute(args, outs)
            return 0
        t0 = _now()  # the step's time, counted here: no Python call per step
        try:
            self._execute(args, outs)
        finally:
            self._step_ticks += _now() - t0
            self._step_calls += 1
            # shapes are sampled on one step per request: the steps of a loop share them,
            # and recording them holds the step's values (the driver could not reuse them)
            self._shapes = False
    finally:
        self._running = False
    return 0


cdef int _give_back(PyObject *vm, int k, PyObject *value) except -1:
    """``vm.recycle(k, value)`` without the Python call (``value`` is borrowed)."""
    cdef CVM self = <CVM>vm
    self._recycle(self._output_slots[k], value)
    return 0


cdef void _drop_spares(PyObject *vm) noexcept:
    """Release every array given back and not used (at the end of a loop)."""
    cdef CVM self = <CVM>vm
    cdef int s
    if self._n_spare:
        for s in range(self._n_storage):
            _clear(self._spare, s)
        self._n_spare = 0


cdef int _recording(PyObject *vm) noexcept:
    """What a call of ``vm`` records now: 0 nothing, 1 times only, 2 also shapes, memory or
    trace events (which only a step run by the VM itself can give)."""
    cdef CVM self = <CVM>vm
    if self._shapes or self._memory or self._trace_use:
        return 2
    return 1 if self._timing else 0


cdef int64_t _clock_ticks() noexcept:
    """The VM's clock (ticks: see ``_ns_per_tick``)."""
    return _now()


cdef void _add_steps(PyObject *vm, int64_t steps, int64_t ticks) noexcept:
    """Count ``steps`` steps run by the loop driver without the VM (its element-wise fast
    loop, for a program of one node), timed together in ``ticks``: in ``step_counts`` and
    in that node's counters, each step at their mean time."""
    cdef CVM self = <CVM>vm
    cdef NodeStat *st
    cdef int64_t mean, k
    if steps <= 0 or self._n != 1:
        return
    st = &self._st[0]
    mean = ticks // steps
    for k in range(min(steps, <int64_t>C_RING)):
        self._ns_ring[(st.calls + k) % C_RING] = mean
    st.calls += steps
    st.ns_total += ticks
    st.ns_min = mean if mean < st.ns_min else st.ns_min
    st.ns_max = mean if mean > st.ns_max else st.ns_max
    if mean == 0:
        st.below += steps
    self._step_calls += steps
    self._step_ticks += ticks
    self._calls_total += steps


cdef struct StepAPI:
    int (*step)(PyObject *, PyObject **, PyObject **) except -1
    int (*give_back)(PyObject *, int, PyObject *) except -1
    void (*drop_spares)(PyObject *) noexcept
    int (*recording)(PyObject *) noexcept
    int64_t (*clock)() noexcept
    void (*add_steps)(PyObject *, int64_t, int64_t) noexcept


cdef StepAPI _STEP_API
_STEP_API.step = _step
_STEP_API.give_back = _give_back
_STEP_API.drop_spares = _drop_spares
_STEP_API.recording = _recording
_STEP_API.clock = _clock_ticks
_STEP_API.add_steps = _add_steps
#: for graphc.vm._loop: a capsule of the C functions that call a CVM step by step
step_api = PyCapsule_New(<void *>&_STEP_API, "graphc.cvm_step_api", NULL)


# -- the per-call counters of a profiled Function (graphc.compile.callable) -----------

@cython.final
cdef class CallClock:
    """Times the calls of a profiled Function in C: the call (``time_call`` around its
    whole body) and its VM run (``time_vm``), counted here and converted to nanoseconds
    only when read (``counts``). With sampling (``every`` > 1), ``tick`` says which calls
    are timed and arms the VM (a C flag) for them only.

    ``on_event(n, call_ns, vm_ns)`` runs when the timed calls reach ``next_event`` (the
    profiler's rare work: the first call, shape sampling); ``hook(call_ns, vm_ns)``, when
    set, after every timed call (tests read the per-call times through it)."""

    cdef public int64_t calls        # timed calls (counted even when they raise)
    cdef public int64_t call_ticks   # their time in Function.__call__ ...
    cdef public int64_t vm_ticks     # ... and in the VM
    cdef public double vm_sq_ticks   # the sum of the squares of each timed call's VM time
    cdef public int64_t untimed      # calls not timed (sampling)
    cdef public int64_t every        # 1 in ``every`` calls is timed
    cdef public int64_t countdown    # calls until the next timed one (1: the next)
    cdef public int64_t next_event
    cdef public object on_event
    cdef public object hook
    cdef public object arm           # None, or a callable(on) arming the VM(s) from Python
    cdef public double budget        # > 0: adapt ``every`` to keep the cost under this share
    cdef public double cost_ticks    # the profiler's own cost in one timed call (budget)
    cdef public int64_t ref_calls    # budget: untimed calls timed whole (time_reference) ...
    cdef public int64_t ref_ticks    # ... and their time: a timed call's cost is measured
    cdef bint _ref_due               # the next untimed call is a reference
    cdef public double timed_mean    # budget: moving means (1/8 per call) of the timed ...
    cdef public double ref_mean      # ... and the reference calls' ticks (recent calls
                                     # only: the first calls, recording shapes, cost more)
    cdef CVM _cvm                    # the VM armed in C (None: through ``arm``)
    cdef int64_t _last_call, _last_vm
    cdef bint _vm_started            # the call being timed reached its VM

    def __init__(self, vm, int every=1, on_event=None):
        self.every = every
        self.countdown = 1
        self.next_event = 1
        self.on_event = on_event
        self.hook = None
        self.arm = None
        self._cvm = vm if isinstance(vm, CVM) else None

    def tick(self):
        """One call of a sampled function: 1 when it is to be timed (every ``every``-th
        call, the first included), after arming the VM for it; else counted as untimed:
        0, or with a budget 2 for the call after a timed one (a reference: to be timed
        whole by ``time_reference``, its VM unarmed)."""
        cdef int64_t n = self.countdown - 1
        if n > 0:
            self.countdown = n
            self.untimed += 1
            if self._ref_due:
                self._ref_due = False
                return 2
            return 0
        self.countdown = self.every
        self._set_armed(True)
        return 1

    def time_reference(self, body, args, kwargs):
        """An untimed call, ``body(args, kwargs)``, timed whole: what a call costs when
        the profiler does not time it (its returns only; a budget's measured cost)."""
        cdef int64_t t0 = _now()
        cdef int64_t ticks
        result = body(args, kwargs)
        ticks = _now() - t0
        self.ref_ticks += ticks
        self.ref_calls += 1
        self.ref_mean = _moved(self.ref_mean, ticks)
        return result

    def disarm(self):
        """The timed call of a sampled function is over (returned or raised)."""
        self._set_armed(False)

    cdef int _set_armed(self, bint on) except -1:
        if self._cvm is not None:
            self._cvm._arm(on)
        if self.arm is not None:
            self.arm(on)
        return 0

    def time_call(self, body, args, kwargs):
        """``body(args, kwargs)`` timed and counted as one call (one that raises in its
        VM too; not one refused before its VM ran, nor with FunctionBusy: the VM was run
        from outside the Function)."""
        cdef int64_t t0 = _now()
        self._last_vm = 0
        self._vm_started = False
        try:
            result = body(args, kwargs)
        except FunctionBusy:
            raise
        except BaseException:
            if self._vm_started:
                self._count(_now() - t0)
            raise
        self._count(_now() - t0)
        return result

    def time_vm(self, vm, values):
        """``vm(values)``, its time kept for the call being timed."""
        cdef int64_t t0 = _now()
        self._vm_started = True
        try:
            return vm(values)
        finally:
            self._last_vm = _now() - t0

    cdef int _count(self, int64_t ticks) except -1:
        cdef int64_t vm = self._last_vm
        self.calls += 1
        self.call_ticks += ticks
        self.vm_ticks += vm
        self.vm_sq_ticks += <double>vm * <double>vm
        self._last_call = ticks
        if self.budget > 0.0:
            self._ref_due = True
            self.timed_mean = _moved(self.timed_mean, ticks)
            self.adapt()
        if self.calls >= self.next_event and self.on_event is not None:
            f = _ns_per_tick()
            self.on_event(self.calls, <int64_t>(ticks * f), <int64_t>(vm * f))
        if self.hook is not None:
            f = _ns_per_tick()
            self.hook(<int64_t>(ticks * f), <int64_t>(vm * f))
        return 0

    def adapt(self):
        """Set ``every`` from the moving means: a timed call's cost is the timed mean
        less the reference mean once there are references, at least the estimate
        ``cost_ticks``."""
        cdef double cost = self.cost_ticks
        if self.ref_mean > 0.0 and self.timed_mean - self.ref_mean > cost:
            cost = self.timed_mean - self.ref_mean
        self.every = budget_every(self.timed_mean, cost, self.budget)
        if self.countdown > self.every:  # (set at this call's tick, from the old N)
            self.countdown = self.every

    def uncount_last(self):
        """Take the last timed call back out of the counters (a first call left out)."""
        self.calls -= 1
        self.call_ticks -= self._last_call
        self.vm_ticks -= self._last_vm
        self.vm_sq_ticks -= <double>self._last_vm * <double>self._last_vm

    def last_ns(self):
        """``(call_ns, vm_ns)`` of the last timed call."""
        cdef double f = _ns_per_tick()
        return <int64_t>(self._last_call * f), <int64_t>(self._last_vm * f)

    def counts(self):
        """``(calls, call_ns, vm_ns, vm_ns_sq, untimed)`` so far."""
        cdef double f = _ns_per_tick()
        return (self.calls, <int64_t>(self.call_ticks * f), <int64_t>(self.vm_ticks * f),
                self.vm_sq_ticks * f * f, self.untimed)

    def reset(self):
        """Forget every call so far (the sampling phase is kept)."""
        self.calls = self.call_ticks = self.vm_ticks = self.untimed = 0
        self.ref_calls = self.ref_ticks = 0
        self.timed_mean = self.ref_mean = 0.0
        self.vm_sq_ticks = 0.0
        self._last_call = self._last_vm = 0


cdef inline double _moved(double mean, int64_t ticks) noexcept:
    """A moving mean (weight 1/8) with ``ticks`` added; the first value as is."""
    if mean <= 0.0:
        return <double>ticks
    return mean + (<double>ticks - mean) * 0.125


cpdef int64_t budget_every(double call, double cost, double budget):
    """1 call in how many to time so that timing costs at most ``budget`` of the run time:
    a timed call of mean duration ``call`` costs ``cost`` more than an untimed one (both
    in one unit), so ``every`` untimed calls take ``every * (call - cost)``."""
    cdef double base = call - cost
    cdef double n
    if budget <= 0.0 or cost <= 0.0:
        return 1
    if base <= 0.0:
        base = cost  # (a call cheaper than its estimated cost: the cost is the call)
    n = cost / (budget * base)
    if n <= 1.0:
        return 1
    if n >= 1e6:
        return 1000000
    return <int64_t>n + (1 if n > <int64_t>n else 0)


def clock_read_ns():
    """Nanoseconds one read of the profiling clock costs (a timed node pays one, and its
    fold about as much), measured over 4096 reads."""
    cdef int k
    cdef int64_t t0, t1, acc = 0
    t0 = _now()
    for k in range(4096):
        acc += _now()
    t1 = _now()
    if acc == 0:  # (keeps the reads from being optimised away)
        t1 += 0
    return (t1 - t0) * _ns_per_tick() / 4096.0


def ticks_per_ns():
    """Profiling-clock units per nanosecond (``CallClock``'s ticks)."""
    return 1.0 / _ns_per_tick()


cdef object _ndarray_type = np.ndarray


def first_unfit(list values, tuple checks, Py_ssize_t start=0):
    """``graphc.vm.pyvm.first_unfit`` in C: the position (from ``start``) of the first of
    ``checks`` -- per input ``(k, dtype, ndim, static shape or None)`` -- that
    ``values[k]`` fails, else -1."""
    cdef Py_ssize_t j, d, ndim
    cdef tuple check, static
    cdef object v, size
    cdef cnp.ndarray a
    cdef cnp.npy_intp *dims
    for j in range(start, len(checks)):
        check = <tuple>checks[j]
        v = values[<Py_ssize_t>check[0]]
        if type(v) is not _ndarray_type:
            return j
        a = <cnp.ndarray>v
        ndim = cnp.PyArray_NDIM(a)
        if ndim != <Py_ssize_t>check[2]:
            return j
        if <object>cnp.PyArray_DESCR(a) is not check[1] and a.dtype != check[1]:
            return j
        if check[3] is not None:
            static = <tuple>check[3]
            dims = cnp.PyArray_DIMS(a)
            for d in range(min(ndim, len(static))):
                size = static[d]
                if size is not None and dims[d] != <cnp.npy_intp>size:
                    return j
    return -1
