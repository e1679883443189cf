"""What every C generator shares: dtype names in C, numpy type numbers, dtype limits,
operand checks, and the C helpers (``COMMON``) several Op families call.

The dtype -> C type table itself is ``graphc.scalar.basic.C_TYPES`` (the scalar Ops' C
expressions, below the linker, need it too); generators take it from here.
"""

from __future__ import annotations

import re
from pathlib import Path

from graphc.scalar.basic import C_TYPES, DTYPES, FLOAT_DTYPES, INT_DTYPES, ctype

__all__ = [
    "COMMON", "C_LIMITS", "C_TYPES", "DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "TYPE_NUMBERS",
    "c_source", "c_string", "check_operand", "ctype", "typenum",
]  # fmt: skip

TYPE_NUMBERS = {dt: f"NPY_{dt.upper()}" for dt in DTYPES}
"""dtype -> the numpy C type number macro (``NPY_FLOAT32``)."""

C_LIMITS = {
    "bool": ("0", "1"),
    "int8": ("NPY_MIN_INT8", "NPY_MAX_INT8"),
    "int16": ("NPY_MIN_INT16", "NPY_MAX_INT16"),
    "int32": ("NPY_MIN_INT32", "NPY_MAX_INT32"),
    "int64": ("NPY_MIN_INT64", "NPY_MAX_INT64"),
    "uint8": ("0", "NPY_MAX_UINT8"),
    "uint16": ("0", "NPY_MAX_UINT16"),
    "uint32": ("0", "NPY_MAX_UINT32"),
    "uint64": ("0", "NPY_MAX_UINT64"),
    "float32": ("-INFINITY", "INFINITY"),
    "float64": ("-INFINITY", "INFINITY"),
}
"""dtype -> (lowest, highest) value as C expressions (the identities of max and min)."""


def typenum(dtype: str) -> str:
    """The numpy C type number macro of ``dtype``."""
    return TYPE_NUMBERS[dtype]


def c_string(s: str, limit: int = 200) -> str:
    """``s`` as a C string literal (printable ASCII, other characters as ``?``, shortened;
    ``?`` escaped so that no trigraph forms)."""
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    out = []
    for ch in s:
        if ch in '"\\?':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("\\?")
    return '"' + "".join(out) + '"'


def check_operand(var: str, dtype: str, ndim: int, opname: str) -> str:
    """C statements raising ``opname``'s TypeError unless ``var`` has this dtype and ndim."""
    return f"""
    if (PyArray_TYPE({var}) != {typenum(dtype)} || PyArray_NDIM({var}) != {ndim}) {{
        PyErr_SetString(PyExc_TypeError, "{opname}: operand of an unexpected dtype or ndim");
        FAIL;
    }}"""


def typed_template(template: str, dtype: str, **names: str) -> str:
    """A C template for one float dtype: ``REAL`` is its C type, ``TYPENUM`` its type number,
    and each other name in ``names`` is replaced by its value."""
    text = template.replace("REAL", ctype(dtype)).replace("TYPENUM", typenum(dtype))
    for name, value in names.items():
        text = text.replace(name, value)
    return text


def store_out_epilogue(refs: tuple[str, ...], buffers: tuple[str, ...] = ()) -> str:
    """The end of a C helper that built ``out`` for ``*slot``: on success ``out`` moves into
    the slot and ``rc`` becomes 0; at ``done:`` (the error exit too) the references ``refs``
    and ``out`` are released and the ``buffers`` freed, then ``rc`` is returned."""
    lines = ["    Py_XSETREF(*slot, (PyObject *)out);", "    out = NULL;", "    rc = 0;", "done:"]
    lines += [f"    Py_XDECREF({ref});" for ref in (*refs, "out")]
    lines += [f"    free({buf});" for buf in buffers]
    return "\n".join([*lines, "    return rc;", "}", ""])


# Support code shared by the shape, BLAS, nnet, conv, pool and random generators (identical
# text, so emitted once per module).
COMMON = r"""
#include <math.h>
#include <limits.h>
#include <string.h>
/* An output array of this shape and type: the slot's previous value when it is ours alone
   (refcount 1, owns its C-contiguous aligned writable data), else a new empty array. */
static PyArrayObject *graphc_out_array(PyObject **slot, int nd, const npy_intp *dims,
                                       int typenum) {
    PyObject *old = *slot;
    if (old != NULL && Py_REFCNT(old) == 1 && PyArray_CheckExact(old)) {
        PyArrayObject *a = (PyArrayObject *)old;
        if (PyArray_NDIM(a) == nd && PyArray_TYPE(a) == typenum &&
            PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_OWNDATA |
                                    NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED)) {
            int same = 1;
            for (int k = 0; k < nd; k++) same &= PyArray_DIM(a, k) == dims[k];
            if (same) {
                Py_INCREF(old);
                return a;
            }
        }
    }
    return (PyArrayObject *)PyArray_EMPTY(nd, (npy_intp *)dims, typenum, 0);
}

/* The shape of an array as a tuple (for error messages). */
static PyObject *graphc_shape_tuple(PyArrayObject *a) {
    int nd = PyArray_NDIM(a);
    PyObject *t = PyTuple_New(nd);
    if (t == NULL) return NULL;
    for (int k = 0; k < nd; k++) {
        PyObject *v = PyLong_FromSsize_t(PyArray_DIM(a, k));
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

/* Raise `exc` with "<prefix>" followed by the shapes of n arrays. */
static void graphc_shape_error(PyObject *exc, const char *prefix, int n, PyArrayObject **arrs) {
    PyObject *parts = PyList_New(0);
    if (parts == NULL) return;
    for (int k = 0; k < n; k++) {
        PyObject *t = graphc_shape_tuple(arrs[k]);
        PyObject *s = t ? PyObject_Repr(t) : NULL;
        Py_XDECREF(t);
        if (s == NULL || PyList_Append(parts, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(parts);
            return;
        }
        Py_DECREF(s);
    }
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    if (joined == NULL) return;
    PyErr_Format(exc, "%s%U", prefix, joined);
    Py_DECREF(joined);
}

/* The value of a one-element bool, integer or float32/64 array, read by kind and size (so
   equivalent type numbers such as long/longlong both work): sets *i for 'b' (bool) and
   'i' (signed), *u for 'u' (unsigned), *d for 'f' (float) and returns that kind, or 0
   for any other dtype. */
static char graphc_scalar_value(PyArrayObject *a, npy_int64 *i, npy_uint64 *u, double *d) {
    const char *p = PyArray_DATA(a);
    const char kind = PyArray_DESCR(a)->kind;
    const npy_intp size = PyArray_ITEMSIZE(a);
    if (kind == 'b' && size == 1) {
        *i = *(const npy_bool *)p != 0;
    } else if (kind == 'i' && size == 8) {
        *i = *(const npy_int64 *)p;
    } else if (kind == 'i' && size == 4) {
        *i = *(const npy_int32 *)p;
    } else if (kind == 'i' && size == 2) {
        *i = *(const npy_int16 *)p;
    } else if (kind == 'i' && size == 1) {
        *i = *(const npy_int8 *)p;
    } else if (kind == 'u' && size == 8) {
        *u = *(const npy_uint64 *)p;
    } else if (kind == 'u' && size == 4) {
        *u = *(const npy_uint32 *)p;
    } else if (kind == 'u' && size == 2) {
        *u = *(const npy_uint16 *)p;
    } else if (kind == 'u' && size == 1) {
        *u = *(const npy_uint8 *)p;
    } else if (kind == 'f' && size == 8) {
        *d = *(const npy_float64 *)p;
    } else if (kind == 'f' && size == 4) {
        *d = *(const npy_float32 *)p;
    } else {
        return 0;
    }
    return kind;
}

/* graphc_scalar_value of a one-element array; for any other size, sets ValueError
   `size_error` and returns -1. */
static int graphc_single_value(PyArrayObject *a, const char *size_error, npy_int64 *i,
                               npy_uint64 *u, double *d) {
    if (PyArray_SIZE(a) != 1) {
        PyErr_SetString(PyExc_ValueError, size_error);
        return -1;
    }
    return graphc_scalar_value(a, i, u, d);
}

/* A 0-d numeric array's value as a double (alpha/beta coefficients). */
static int graphc_as_double(PyArrayObject *a, double *out) {
    npy_int64 i = 0; npy_uint64 u = 0; double d = 0;
    switch (graphc_single_value(a, "expected a scalar coefficient", &i, &u, &d)) {
    case -1: return -1;
    case 'b': case 'i': *out = (double)i; return 0;
    case 'u': *out = (double)u; return 0;
    case 'f': *out = d; return 0;
    }
    PyErr_SetString(PyExc_TypeError, "unsupported coefficient dtype");
    return -1;
}

/* The value of a 0-d integer array as npy_intp. An unsigned value above NPY_MAX_INTP
   saturates to NPY_MAX_INTP: out of bounds as an index, "to the end" as a slice bound,
   as in numpy, never wrapped to a negative position. */
static int graphc_as_intp(PyArrayObject *a, npy_intp *out) {
    npy_int64 i = 0; npy_uint64 u = 0; double d = 0;
    switch (graphc_single_value(a, "expected an integer scalar", &i, &u, &d)) {
    case -1: return -1;
    case 'i': *out = (npy_intp)i; return 0;
    case 'u': *out = u > (npy_uint64)NPY_MAX_INTP ? NPY_MAX_INTP : (npy_intp)u; return 0;
    }
    PyErr_SetString(PyExc_TypeError, "expected an integer array");
    return -1;
}
"""


_LOCAL_INCLUDE = re.compile(r'^#include "([\w.]+)"$', re.MULTILINE)


def c_source(name: str) -> str:
    """The C file ``name`` kept beside this module (package data), each of its
    ``#include "file.h"`` lines replaced by that file's text: a kernel is compiled from one
    text, which the compile cache hashes, so an edit of a shared header rebuilds every
    module that takes it in."""
    here = Path(__file__).parent
    text = (here / name).read_text(encoding="utf-8")
    return _LOCAL_INCLUDE.sub(lambda m: c_source(m.group(1)).rstrip("\n"), text)
