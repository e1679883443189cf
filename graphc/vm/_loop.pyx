# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The loop driver of a loop node (scan): one call of the step's VM per step, in C.

Per step it makes a view of each input row with the NumPy C API, calls the step's VM and
copies each output into its row of the output buffer (one ``memcpy`` when both are
contiguous with the same dtype). Semantics are those of the Python driver in
``graphc.scan_module.op`` (which runs when this extension is missing).
"""

from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from libc.string cimport memcpy, memmove

cimport numpy as cnp

import time

import numpy as np

cnp.import_array()

cdef extern from "numpy/arrayobject.h":
    object PyArray_NewFromDescr(object subtype, cnp.dtype descr, int nd, cnp.npy_intp *dims,
                                cnp.npy_intp *strides, void *data, int flags, object obj)
    int PyArray_SetBaseObject(cnp.ndarray arr, object obj) except -1
    int PyArray_CopyInto(cnp.ndarray dst, cnp.ndarray src) except -1


cdef inline object _row(cnp.ndarray a, Py_ssize_t i):
    """A view of row ``i`` of ``a`` (a 0-d array for a vector), sharing its memory."""
    cdef cnp.dtype descr = <cnp.dtype><PyObject *>cnp.PyArray_DESCR(a)
    Py_INCREF(descr)  # PyArray_NewFromDescr steals a reference
    cdef char *data = <char *>cnp.PyArray_DATA(a) + i * cnp.PyArray_STRIDES(a)[0]
    cdef int flags = cnp.PyArray_FLAGS(a) & cnp.NPY_ARRAY_WRITEABLE
    view = PyArray_NewFromDescr(np.ndarray, descr, cnp.PyArray_NDIM(a) - 1,
                                cnp.PyArray_DIMS(a) + 1, cnp.PyArray_STRIDES(a) + 1,
                                data, flags, None)
    Py_INCREF(a)
    PyArray_SetBaseObject(<cnp.ndarray>view, a)
    cnp.PyArray_UpdateFlags(<cnp.ndarray>view, cnp.NPY_ARRAY_UPDATE_ALL)
    return view


cdef inline bint _same_shape(cnp.ndarray v, cnp.ndarray buf) noexcept:
    cdef int d, nd = cnp.PyArray_NDIM(v)
    if nd != cnp.PyArray_NDIM(buf) - 1:
        return False
    for d in range(nd):
        if cnp.PyArray_DIMS(v)[d] != cnp.PyArray_DIMS(buf)[d + 1]:
            return False
    return True


cdef int _store(cnp.ndarray buf, Py_ssize_t i, object value) except -1:
    """``buf[i] = value`` (same shape, checked by the caller)."""
    cdef cnp.ndarray v = <cnp.ndarray>value
    cdef Py_ssize_t nbytes
    if (cnp.PyArray_ISCARRAY_RO(v) and cnp.PyArray_ISCARRAY(buf)
            and cnp.PyArray_EquivTypes(<cnp.dtype><PyObject *>cnp.PyArray_DESCR(v),
                                       <cnp.dtype><PyObject *>cnp.PyArray_DESCR(buf))):
        nbytes = cnp.PyArray_NBYTES(v)
        memmove(<char *>cnp.PyArray_DATA(buf) + i * cnp.PyArray_STRIDES(buf)[0],
                cnp.PyArray_DATA(v), nbytes)
        return 0
    PyArray_CopyInto(<cnp.ndarray>_row(buf, i), v)
    return 0


def run_steps(object vm, Py_ssize_t n, list readers, list nonseqs, list states,
              list lags, list last_only, Py_ssize_t n_nit, bint as_while, str name,
              object on_step):
    """Run ``n`` steps; return ``(steps done, stacked outputs)``.

    ``readers``: per step input, ``(array, first row, rows per step)``; ``states``: the
    state buffers, each written at row ``lag + step`` (or, kept ``last_only``, shifted up
    one row and written at its last row); stacked outputs are allocated at the first step.
    """
    cdef Py_ssize_t i, k, j, r, n_read = len(readers), n_non = len(nonseqs)
    cdef Py_ssize_t n_st = len(states), lag
    cdef list args = [None] * (n_read + n_non)
    cdef list arrays = [rd[0] for rd in readers]
    cdef Py_ssize_t[:] first = np.array([rd[1] for rd in readers], dtype=np.intp)
    cdef Py_ssize_t[:] mult = np.array([rd[2] for rd in readers], dtype=np.intp)
    cdef list nits = [None] * n_nit
    cdef cnp.ndarray buf, v, out
    cdef long long t0
    for k in range(n_non):
        args[n_read + k] = nonseqs[k]
    clock = time.perf_counter_ns
    for i in range(n):
        for r in range(n_read):
            args[r] = _row(<cnp.ndarray>arrays[r], first[r] + mult[r] * i)
        if on_step is None:
            outs = vm(args)
        else:
            t0 = clock()
            try:
                outs = vm(args)
            finally:
                on_step(clock() - t0)
        for k in range(n_st):
            buf = <cnp.ndarray>states[k]
            value = outs[k]
            if not isinstance(value, np.ndarray):
                value = np.asarray(value)
            v = <cnp.ndarray>value
            if not _same_shape(v, buf):
                raise ValueError(
                    f"{name}: step {i} returned state {k} of shape {value.shape}; the state "
                    f"has shape {states[k].shape[1:]} (a state must keep its shape)")
            lag = lags[k]
            if last_only[k]:
                if lag > 1:
                    buf[: lag - 1] = buf[1:lag].copy()
                _store(buf, lag - 1, v)
            else:
                _store(buf, lag + i, v)
        for j in range(n_nit):
            value = outs[n_st + j]
            if not isinstance(value, np.ndarray):
                value = np.asarray(value)
            v = <cnp.ndarray>value
            if nits[j] is None:
                nits[j] = np.empty((n, *value.shape), dtype=value.dtype)
            out = <cnp.ndarray>nits[j]
            if not _same_shape(v, out):
                raise ValueError(
                    f"{name}: step {i} returned output {n_st + j} of shape {value.shape}; "
                    f"step 0 returned {nits[j].shape[1:]} (stacked outputs keep one shape)")
            _store(out, i, v)
        if as_while and outs[n_st + n_nit]:
            return i + 1, nits
    return n, nits
