# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The loop driver of a loop node (scan): one call of the step's VM per step, in C.

Semantics are those of the Python driver in ``graphc.scan_module.op`` (which runs when
this extension is missing). Per step:

- each input row is a view of its row in the sequence or state buffer. The view of the
  previous step is re-pointed at the new row (its data pointer moved) when nothing but the
  driver holds it any more, which is the case after a step that kept no reference to its
  inputs; else a new view is made with the NumPy C API;
- the step's VM is called: a CVM through the C entry point of ``graphc.vm._cvm``
  (arguments and results in C arrays, no Python call), any other VM through ``vm(list)``;
- each output is copied into its row of the output buffer (one ``memcpy`` when both are
  contiguous with the same dtype), then, for a CVM, given back to the VM (``recycle``) so
  that the next step's thunk writes its output into the same array instead of allocating
  one (a thunk only does so when nothing else holds the array).

``run_kernel`` is the fast loop of a step that is one element-wise node: per step it
computes each operand's row address and calls the node's contiguous kernel, nothing else
(``graphc.scan_module.fastloop`` decides when that gives the same result).
"""

from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memmove

cimport numpy as cnp

import time

import numpy as np

from graphc.tensor.buffers import array_for

cnp.import_array()

cdef extern from "numpy/arrayobject.h":
    object PyArray_NewFromDescr(object subtype, cnp.dtype descr, int nd, cnp.npy_intp *dims,
                                cnp.npy_intp *strides, void *data, int flags, object obj)
    int PyArray_SetBaseObject(cnp.ndarray arr, object obj) except -1
    int PyArray_CopyInto(cnp.ndarray dst, cnp.ndarray src) except -1

cdef extern from *:
    """
    /* Move view ``v`` to ``data`` (same dtype, shape, strides and base: another row of
       the same array). Only for a view nobody else holds; its flags stay right because
       only the alignment depends on the data pointer, and it is checked here. 1: done. */
    static inline int graphc_repoint(PyArrayObject *v, char *data) {
        if (!PyArray_ISALIGNED(v)
                || ((npy_uintp)data) % (npy_uintp)PyDataType_ALIGNMENT(PyArray_DESCR(v)))
            return 0;
        ((PyArrayObject_fields *)v)->data = data;
        return 1;
    }
    /* ``o`` is a base-class ndarray that nothing but its one owner holds */
    static inline int graphc_sole_ndarray(PyObject *o) {
        return Py_REFCNT(o) == 1 && PyArray_CheckExact(o);
    }
    /* The slot's view moved to ``data`` with no check of the address: the caller knows
       every row it visits is aligned (graphc_rows_aligned). 1: done. */
    static inline int graphc_repoint_aligned(PyObject *o, char *data) {
        if (Py_REFCNT(o) != 1 || !PyArray_CheckExact(o)
                || !PyArray_ISALIGNED((PyArrayObject *)o))
            return 0;
        ((PyArrayObject_fields *)o)->data = data;
        return 1;
    }
    /* Every row ``first + step*i`` of ``a`` starts at an address aligned for its dtype */
    static inline int graphc_rows_aligned(PyArrayObject *a, npy_intp step) {
        npy_uintp al = (npy_uintp)PyDataType_ALIGNMENT(PyArray_DESCR(a));
        return al > 0 && (npy_uintp)PyArray_DATA(a) % al == 0
               && (npy_uintp)(step < 0 ? -step : step) % al == 0;
    }
    /* ``dst[:nbytes] = v`` when ``v`` is a C-contiguous array with ``buf``'s descriptor
       and the shape of one row of ``buf``: one memcpy, no call into numpy. 0: not so
       (the caller takes the general path, which also reports a wrong shape). */
    static inline int graphc_row_copy(PyObject *v, PyArrayObject *buf, char *dst,
                                      npy_intp nbytes) {
        PyArrayObject *a = (PyArrayObject *)v;
        int d, nd;
        if (nbytes < 0 || !PyArray_Check(v) || PyArray_DESCR(a) != PyArray_DESCR(buf))
            return 0;
        nd = PyArray_NDIM(a);
        if (nd != PyArray_NDIM(buf) - 1 || !PyArray_ISCARRAY_RO(a))
            return 0;
        for (d = 0; d < nd; d++)
            if (PyArray_DIMS(a)[d] != PyArray_DIMS(buf)[d + 1])
                return 0;
        memmove(dst, PyArray_DATA(a), (size_t)nbytes); /* a step may return its input row */
        return 1;
    }
    /* Bytes of one row of ``buf`` when it is C-contiguous (rows are then back to back),
       else -1: the rows are copied by the general path */
    static inline npy_intp graphc_row_bytes(PyArrayObject *buf) {
        npy_intp nbytes = PyArray_ITEMSIZE(buf);
        int d;
        if (!PyArray_ISCARRAY(buf) || PyArray_NDIM(buf) < 1)
            return -1;
        for (d = 1; d < PyArray_NDIM(buf); d++)
            nbytes *= PyArray_DIMS(buf)[d];
        return nbytes;
    }
    """
    int graphc_repoint(cnp.ndarray v, char *data) noexcept
    bint graphc_sole_ndarray(PyObject *o) noexcept
    bint graphc_repoint_aligned(PyObject *o, char *data) noexcept
    bint graphc_rows_aligned(cnp.ndarray a, cnp.npy_intp step) noexcept
    bint graphc_row_copy(PyObject *v, cnp.ndarray buf, char *dst, cnp.npy_intp nbytes) noexcept
    cnp.npy_intp graphc_row_bytes(cnp.ndarray buf) noexcept

cdef struct StepAPI:  # graphc.vm._cvm's capsule "graphc.cvm_step_api"
    int (*step)(PyObject *, PyObject **, PyObject **) except -1
    int (*give_back)(PyObject *, int, PyObject *) except -1
    void (*drop_spares)(PyObject *) noexcept
    int (*recording)(PyObject *) noexcept
    int64_t (*clock)() noexcept
    void (*add_steps)(PyObject *, int64_t, int64_t) noexcept

# a "graphc.ew_kernel" capsule's function (graphc/linker/c/registry.py)
ctypedef void (*ew_kernel_fn)(cnp.npy_intp n, char **p) noexcept

cdef enum:
    MAX_OPERANDS = 64  # an element-wise node has C code for at most this many operands

cdef StepAPI *_api = NULL
cdef object _cvm_type = None
cdef object _ndarray = np.ndarray
cdef object _asarray = np.asarray
cdef object _clock = time.perf_counter_ns


cdef int _load_api() except -1:
    global _api, _cvm_type
    try:
        from graphc.vm import _cvm
    except ImportError:  # the loop then calls any VM through Python
        _cvm_type = False
        return 0
    _api = <StepAPI *>PyCapsule_GetPointer(_cvm.step_api, "graphc.cvm_step_api")
    _cvm_type = _cvm.CVM
    return 0


cdef inline object _row(cnp.ndarray a, Py_ssize_t i):
    """A view of row ``i`` of ``a`` (a 0-d array for a vector), sharing its memory."""
    cdef cnp.dtype descr = <cnp.dtype><PyObject *>cnp.PyArray_DESCR(a)
    Py_INCREF(descr)  # PyArray_NewFromDescr steals a reference
    cdef char *data = <char *>cnp.PyArray_DATA(a) + i * cnp.PyArray_STRIDES(a)[0]
    cdef int flags = cnp.PyArray_FLAGS(a) & cnp.NPY_ARRAY_WRITEABLE
    view = PyArray_NewFromDescr(_ndarray, descr, cnp.PyArray_NDIM(a) - 1,
                                cnp.PyArray_DIMS(a) + 1, cnp.PyArray_STRIDES(a) + 1,
                                data, flags, None)
    Py_INCREF(a)
    PyArray_SetBaseObject(<cnp.ndarray>view, a)
    cnp.PyArray_UpdateFlags(<cnp.ndarray>view, cnp.NPY_ARRAY_UPDATE_ALL)
    return view


cdef inline int _point(PyObject **slot, cnp.ndarray a, Py_ssize_t i) except -1:
    """Make ``slot[0]`` (an owned reference or NULL) a view of row ``i`` of ``a``: the view
    already there, re-pointed, when the slot holds the only reference to it."""
    cdef PyObject *old = slot[0]
    if old != NULL and graphc_sole_ndarray(old):
        if graphc_repoint(<cnp.ndarray>old,
                          <char *>cnp.PyArray_DATA(a) + i * cnp.PyArray_STRIDES(a)[0]):
            return 0
    view = _row(a, i)
    Py_INCREF(view)
    slot[0] = <PyObject *>view
    Py_XDECREF(old)
    return 0


cdef inline bint _same_shape(cnp.ndarray v, cnp.ndarray buf) noexcept:
    cdef int d, nd = cnp.PyArray_NDIM(v)
    if nd != cnp.PyArray_NDIM(buf) - 1:
        return False
    for d in range(nd):
        if cnp.PyArray_DIMS(v)[d] != cnp.PyArray_DIMS(buf)[d + 1]:
            return False
    return True


cdef inline bint _same_dtype(cnp.ndarray a, cnp.ndarray b) noexcept:
    """One descriptor (the common case, no call) or equivalent ones."""
    cdef PyObject *da = <PyObject *>cnp.PyArray_DESCR(a)
    cdef PyObject *db = <PyObject *>cnp.PyArray_DESCR(b)
    return da == db or cnp.PyArray_EquivTypes(<cnp.dtype>da, <cnp.dtype>db)


cdef int _store(cnp.ndarray buf, Py_ssize_t i, cnp.ndarray v) except -1:
    """``buf[i] = v`` (same shape, checked by the caller)."""
    cdef Py_ssize_t nbytes
    cdef int d
    if cnp.PyArray_ISCARRAY_RO(v) and cnp.PyArray_ISCARRAY(buf) and _same_dtype(v, buf):
        nbytes = cnp.PyArray_ITEMSIZE(v)
        for d in range(cnp.PyArray_NDIM(v)):
            nbytes *= cnp.PyArray_DIMS(v)[d]
        memmove(<char *>cnp.PyArray_DATA(buf) + i * cnp.PyArray_STRIDES(buf)[0],
                cnp.PyArray_DATA(v), nbytes)
        return 0
    PyArray_CopyInto(<cnp.ndarray>_row(buf, i), v)
    return 0


cdef inline cnp.ndarray _as_array(PyObject *value):
    if cnp.PyArray_Check(<object>value):
        return <cnp.ndarray>value
    return <cnp.ndarray>_asarray(<object>value)


def run_steps(object vm, Py_ssize_t n, list readers, list nonseqs, list states,
              list lags, list last_only, Py_ssize_t n_nit, bint as_while, str name,
              object on_step, list prev_nits=None):
    """Run ``n`` steps; return ``(steps done, stacked outputs)``.

    ``readers``: per step input, ``(array, first row, rows per step)``; ``states``: the
    state buffers, each written at row ``lag + step`` (or, kept ``last_only``, shifted up
    one row and written at its last row); stacked outputs are allocated at the first step,
    or written into ``prev_nits[j]`` where that array has their shape and dtype.
    """
    cdef Py_ssize_t n_read = len(readers), n_st = len(states)
    cdef Py_ssize_t n_outs = n_st + n_nit + (1 if as_while else 0)
    cdef bint c_vm
    cdef _Loop loop
    if _cvm_type is None:
        _load_api()
    c_vm = _api != NULL and type(vm) is _cvm_type
    loop = _Loop(n_read + len(nonseqs), n_outs, n_read, n_st)
    try:
        loop.setup(readers, nonseqs, states, lags, last_only)
        return loop.run(vm, n, states, n_nit, as_while, name, on_step, c_vm, prev_nits)
    finally:
        if c_vm:  # a loop that stopped early or failed: keep no array for the next one
            _api.drop_spares(<PyObject *>vm)


cdef class _Loop:
    """The C arrays of one run of ``run_steps``: per reader where its rows are, per state
    where its rows go, the step's arguments and results (owned references or NULL)."""

    cdef Py_ssize_t n_args, n_outs, n_read, n_st
    cdef list arrays           # per reader: its array
    cdef Py_ssize_t *first     # per reader: row of step 0 ...
    cdef Py_ssize_t *mult      # ... rows advanced per step
    cdef char **base           # ... address of row ``first`` ...
    cdef Py_ssize_t *advance   # ... bytes advanced per step ...
    cdef char *aligned         # ... every row visited is aligned (no check per step)
    cdef Py_ssize_t *lag_of    # per state: its taps' lag ...
    cdef char *keep_last       # ... kept last only ...
    cdef cnp.npy_intp *row_bytes  # ... bytes per row, -1: not C-contiguous
    cdef PyObject **args
    cdef PyObject **outs

    def __cinit__(self, Py_ssize_t n_args, Py_ssize_t n_outs, Py_ssize_t n_read,
                  Py_ssize_t n_st):
        self.n_args, self.n_outs, self.n_read, self.n_st = n_args, n_outs, n_read, n_st
        self.first = <Py_ssize_t *>calloc(n_read + 1, sizeof(Py_ssize_t))
        self.mult = <Py_ssize_t *>calloc(n_read + 1, sizeof(Py_ssize_t))
        self.base = <char **>calloc(n_read + 1, sizeof(char *))
        self.advance = <Py_ssize_t *>calloc(n_read + 1, sizeof(Py_ssize_t))
        self.aligned = <char *>calloc(n_read + 1, 1)
        self.lag_of = <Py_ssize_t *>calloc(n_st + 1, sizeof(Py_ssize_t))
        self.keep_last = <char *>calloc(n_st + 1, 1)
        self.row_bytes = <cnp.npy_intp *>calloc(n_st + 1, sizeof(cnp.npy_intp))
        self.args = <PyObject **>calloc(n_args + 1, sizeof(PyObject *))
        self.outs = <PyObject **>calloc(n_outs + 1, sizeof(PyObject *))
        if (self.first == NULL or self.mult == NULL or self.base == NULL
                or self.advance == NULL or self.aligned == NULL or self.lag_of == NULL
                or self.keep_last == NULL or self.row_bytes == NULL or self.args == NULL
                or self.outs == NULL):
            raise MemoryError()

    def __dealloc__(self):
        cdef Py_ssize_t k
        if self.args != NULL:
            for k in range(self.n_args):
                Py_XDECREF(self.args[k])
        if self.outs != NULL:
            for k in range(self.n_outs):
                Py_XDECREF(self.outs[k])
        free(self.args); free(self.outs); free(self.first); free(self.mult); free(self.base)
        free(self.advance); free(self.aligned); free(self.lag_of); free(self.keep_last)
        free(self.row_bytes)

    cdef int setup(self, list readers, list nonseqs, list states, list lags,
                   list last_only) except -1:
        cdef Py_ssize_t r, k
        cdef cnp.ndarray a
        self.arrays = [<cnp.ndarray?>rd[0] for rd in readers]
        for r in range(self.n_read):
            a = <cnp.ndarray>self.arrays[r]
            self.first[r] = readers[r][1]
            self.mult[r] = readers[r][2]
            self.base[r] = <char *>cnp.PyArray_DATA(a) + self.first[r] * cnp.PyArray_STRIDES(a)[0]
            self.advance[r] = self.mult[r] * cnp.PyArray_STRIDES(a)[0]
            self.aligned[r] = graphc_rows_aligned(a, self.advance[r]) and graphc_rows_aligned(
                a, self.first[r] * cnp.PyArray_STRIDES(a)[0])
        for k in range(self.n_st):
            self.lag_of[k] = lags[k]
            self.keep_last[k] = bool(last_only[k])
            self.row_bytes[k] = graphc_row_bytes(<cnp.ndarray?>states[k])
        for k in range(len(nonseqs)):
            value = nonseqs[k]
            Py_INCREF(value)
            self.args[self.n_read + k] = <PyObject *>value
        return 0

    cdef inline int point(self, Py_ssize_t r, Py_ssize_t i) except -1:
        """Argument ``r`` becomes a view of its row of step ``i``."""
        cdef PyObject *old = self.args[r]
        if (self.aligned[r] and old != NULL
                and graphc_repoint_aligned(old, self.base[r] + i * self.advance[r])):
            return 0
        return _point(&self.args[r], <cnp.ndarray>self.arrays[r], self.first[r] + self.mult[r] * i)

    cdef object run(self, object vm, Py_ssize_t n, list states, Py_ssize_t n_nit,
                    bint as_while, str name, object on_step, bint c_vm, list prev_nits):
        cdef Py_ssize_t i, k, j, r, lag, row
        cdef Py_ssize_t n_st = self.n_st, n_outs = self.n_outs, n_args = self.n_args
        cdef list nits = [None] * n_nit
        cdef cnp.npy_intp *nit_bytes = NULL
        cdef PyObject **outs = self.outs
        cdef cnp.ndarray buf, v, out
        cdef long long t0
        cdef bint stop, timed = on_step is not None and not c_vm  # a CVM times its own steps
        try:
            nit_bytes = <cnp.npy_intp *>calloc(n_nit + 1, sizeof(cnp.npy_intp))
            if nit_bytes == NULL:
                raise MemoryError()
            for i in range(n):
                for r in range(self.n_read):
                    self.point(r, i)
                if timed:
                    t0 = _clock()
                try:
                    if c_vm:
                        _api.step(<PyObject *>vm, self.args, outs)
                    else:
                        _call_python(vm, self.args, n_args, outs, n_outs)
                finally:
                    if timed:
                        on_step(_clock() - t0)
                for k in range(n_st):
                    buf = <cnp.ndarray>states[k]
                    lag = self.lag_of[k]
                    if self.keep_last[k]:
                        if lag > 1:
                            buf[: lag - 1] = buf[1:lag].copy()
                        row = lag - 1
                    else:
                        row = lag + i
                    if not graphc_row_copy(outs[k], buf, <char *>cnp.PyArray_DATA(buf)
                                           + row * cnp.PyArray_STRIDES(buf)[0],
                                           self.row_bytes[k]):
                        self.store_state(k, i, buf, row, name)
                for j in range(n_nit):
                    if nits[j] is None:
                        v = _as_array(outs[n_st + j])
                        nits[j] = array_for(prev_nits[j] if prev_nits else None,
                                            (n, *(<object>v).shape), (<object>v).dtype)
                        nit_bytes[j] = graphc_row_bytes(<cnp.ndarray>nits[j])
                    out = <cnp.ndarray>nits[j]
                    if not graphc_row_copy(outs[n_st + j], out, <char *>cnp.PyArray_DATA(out)
                                           + i * cnp.PyArray_STRIDES(out)[0], nit_bytes[j]):
                        self.store_output(n_st + j, i, out, name)
                v = None
                stop = as_while and bool(<object>outs[n_st + n_nit])
                for k in range(n_outs):  # copied out: the next step may write into them
                    if c_vm and k < n_st + n_nit and i + 1 < n and not stop:
                        _api.give_back(<PyObject *>vm, <int>k, outs[k])
                    Py_XDECREF(outs[k])
                    outs[k] = NULL
                if stop:
                    return i + 1, nits
            return n, nits
        finally:
            free(nit_bytes)

    cdef int store_state(self, Py_ssize_t k, Py_ssize_t i, cnp.ndarray buf, Py_ssize_t row,
                         str name) except -1:
        """The general ``buf[row] = outs[k]``: any array-like, dtype or layout."""
        cdef cnp.ndarray v = _as_array(self.outs[k])
        if not _same_shape(v, buf):
            shp, want = (<object>v).shape, (<object>buf).shape[1:]
            raise ValueError(
                f"{name}: step {i} returned state {k} of shape {shp}; the state "
                f"has shape {want} (a state must keep its shape)")
        return _store(buf, row, v)

    cdef int store_output(self, Py_ssize_t k, Py_ssize_t i, cnp.ndarray out,
                          str name) except -1:
        """The general ``out[i] = outs[k]`` of a stacked output."""
        cdef cnp.ndarray v = _as_array(self.outs[k])
        if not _same_shape(v, out):
            shp, want = (<object>v).shape, (<object>out).shape[1:]
            raise ValueError(
                f"{name}: step {i} returned output {k} of shape {shp}; "
                f"step 0 returned {want} (stacked outputs keep one shape)")
        return _store(out, i, v)


cdef int _call_python(object vm, PyObject **args, Py_ssize_t n_args, PyObject **outs,
                      Py_ssize_t n_outs) except -1:
    """``outs[:] = vm(args)`` for a VM other than a CVM (new references into ``outs``)."""
    cdef Py_ssize_t k
    cdef list call_args = [<object>args[k] for k in range(n_args)]
    result = vm(call_args)
    del call_args  # the driver's views are its own again
    if len(result) != n_outs:
        raise ValueError(f"the step returned {len(result)} values, expected {n_outs}")
    for k in range(n_outs):
        value = result[k]
        Py_INCREF(value)
        outs[k] = <PyObject *>value
    return 0


def run_kernel(object vm, object kernel, Py_ssize_t n, cnp.npy_intp n_elem, list operands,
               Py_ssize_t cond):
    """Run ``n`` steps of one element-wise kernel; return the steps done, or -1 (nothing
    run) when the step's VM records shapes, memory or trace events in this call: those
    only the VM's own steps give.

    ``operands``: the kernel's inputs then outputs, each ``(array, byte offset of step 0's
    row in it, bytes advanced per step)``; every row holds ``n_elem`` contiguous, aligned
    elements of the kernel's dtype for that operand (checked by the caller). ``cond``: the
    operand holding a bool that stops the loop after the step that set it, or -1. When
    the VM times its steps, the loop is timed once and counted as ``n`` steps of it.
    """
    cdef ew_kernel_fn fn = <ew_kernel_fn>PyCapsule_GetPointer(kernel, "graphc.ew_kernel")
    cdef Py_ssize_t nop = len(operands), k, i, done = n
    cdef char *base[MAX_OPERANDS]
    cdef Py_ssize_t adv[MAX_OPERANDS]
    cdef char *p[MAX_OPERANDS]
    cdef int rec = 0
    cdef int64_t t0 = 0
    if nop > MAX_OPERANDS or cond >= nop:
        raise ValueError(f"run_kernel: {nop} operands (at most {MAX_OPERANDS}), cond {cond}")
    if _cvm_type is None:
        _load_api()
    if _api != NULL and type(vm) is _cvm_type:
        rec = _api.recording(<PyObject *>vm)
        if rec == 2:
            return -1
    for k in range(nop):
        a, offset, step = operands[k]
        base[k] = <char *>cnp.PyArray_DATA(<cnp.ndarray?>a) + <Py_ssize_t>offset
        adv[k] = step
    if rec:
        t0 = _api.clock()
    for i in range(n):
        for k in range(nop):
            p[k] = base[k] + i * adv[k]
        fn(n_elem, p)
        if cond >= 0 and (<cnp.npy_bool *>p[cond])[0]:
            done = i + 1
            break
    if rec:
        _api.add_steps(<PyObject *>vm, done, _api.clock() - t0)
    return done
