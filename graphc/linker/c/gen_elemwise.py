"""C thunks for Elemwise, DimShuffle, CAReduce and Argmax.

Elemwise: numpy broadcasting checked at run time, any strides (negative, zero), in-place
outputs, output buffers reused when the slot's previous array is free. Each node gets two
kernels over one run of elements: a contiguous one (``#pragma omp simd``: exp, log, tanh,
sigmoid, ... are graphc's inline vector math, ``vecmath.py``; other functions call
libmvec's SIMD variants) and a strided one. A shared driver collapses dimensions
and picks the kernel per run; zero-stride (broadcast) operands of an otherwise contiguous
run are expanded into a small block buffer so the contiguous kernel still applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from graphc.graph.basic import Apply
from graphc.linker.c.common import C_LIMITS, INT_DTYPES, c_string, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.linker.c.vecmath import VECMATH
from graphc.scalar.basic import Composite, ScalarOp
from graphc.scalar.c_code import c_expr, composite_c_body
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import Argmax, CAReduce, ElemwiseSum

_UNARY_MVEC = (
    "acos asin atan cbrt cos cosh erf erfc exp exp10 exp2 expm1 log log10 log1p log2 "
    "sin sinh tan tanh acosh asinh atanh"
).split()
_BINARY_MVEC = ("pow", "atan2", "hypot")


def _mvec_decls() -> str:
    lines = ["#ifdef GRAPHC_HAVE_MVEC"]
    for f in _UNARY_MVEC:
        lines.append(f'__attribute__((simd("notinbranch"))) double {f}(double);')
        lines.append(f'__attribute__((simd("notinbranch"))) float {f}f(float);')
    for f in _BINARY_MVEC:
        lines.append(f'__attribute__((simd("notinbranch"))) double {f}(double, double);')
        lines.append(f'__attribute__((simd("notinbranch"))) float {f}f(float, float);')
    lines.append("#endif")
    return "\n".join(lines)


_INT_CTYPES = tuple(ctype(dt) for dt in (*INT_DTYPES, "bool"))

# Helpers called by the scalar Ops' C expressions (graphc/scalar/c_code.py).
_SCALAR_HELPERS = (
    r"""
/* Python-semantics floor division and modulo; x // 0 == x % 0 == 0 as numpy. */
#define GC_DEF_INT(T)                                                              \
static inline T gc_floordiv_##T(T a, T b) {                                        \
    if (b == 0) return 0;                                                          \
    if ((T)-1 < 0 && b == (T)-1) return (T)(0 - (npy_uint64)a);                    \
    T q = a / b;                                                                   \
    if ((a % b) != 0 && ((a < 0) != (b < 0))) q--;                                 \
    return q;                                                                      \
}                                                                                  \
static inline T gc_mod_##T(T a, T b) {                                             \
    if (b == 0) return 0;                                                          \
    if ((T)-1 < 0 && b == (T)-1) return 0;                                         \
    T r = a % b;                                                                   \
    if (r != 0 && ((r < 0) != (b < 0))) r += b;                                    \
    return r;                                                                      \
}                                                                                  \
static inline T gc_abs_##T(T a) { return a < 0 ? (T)(0 - (npy_uint64)a) : a; }
"""
    + "\n".join(f"GC_DEF_INT({t})" for t in _INT_CTYPES)
    + r"""
#define GC_DEF_FLT(T, F)                                                           \
static inline T gc_floordiv_##T(T a, T b) {                                        \
    if (b == 0) return a / b;                                                      \
    T mod = fmod##F(a, b);                                                         \
    T div = (a - mod) / b;                                                         \
    if (mod != 0) { if ((b < 0) != (mod < 0)) div -= 1; }                          \
    if (div != 0) {                                                                \
        T fl = floor##F(div);                                                      \
        if (div - fl > (T)0.5) fl += 1;                                            \
        return fl;                                                                 \
    }                                                                              \
    return copysign##F((T)0, a / b);                                               \
}                                                                                  \
static inline T gc_mod_##T(T a, T b) {                                             \
    if (b == 0) return fmod##F(a, b);                                              \
    T mod = fmod##F(a, b);                                                         \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                          \
    else mod = copysign##F((T)0, b);                                               \
    return mod;                                                                    \
}                                                                                  \
static inline T gc_sigmoid_##T(T x) {                                              \
    T e = exp##F(-fabs##F(x));                                                     \
    return x >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);                           \
}                                                                                  \
static inline T gc_softplus_##T(T x) {                                             \
    return (x > 0 ? x : (T)0) + log1p##F(exp##F(-fabs##F(x)));                     \
}                                                                                  \
static inline T gc_max_##T(T a, T b) { return (a >= b || a != a) ? a : b; }        \
static inline T gc_min_##T(T a, T b) { return (a <= b || a != a) ? a : b; }
GC_DEF_FLT(npy_float64, )
GC_DEF_FLT(npy_float32, f)
"""
)

_DRIVER = r"""
#define GC_MAXD 64
#define GC_MAXOP 64
#define GC_BLK 512
#define GC_MAXBC 8
#ifdef _OPENMP
#include <omp.h>
#endif
#ifndef GC_PAR_MIN
#define GC_PAR_MIN 200000 /* elements before a run is split across threads */
#endif
typedef void (*gc_contig_fn)(npy_intp n, char **p);
typedef void (*gc_strided_fn)(npy_intp n, char **p, const npy_intp *s);

/* Input k as an owned reference to an ndarray of ``typenum`` and ``nd`` dimensions
   (numpy scalars become 0-d arrays); NULL with TypeError otherwise. */
static PyArrayObject *gc_input(PyObject *o, int k, int nd, int typenum, const char *name) {
    PyArrayObject *a;
    if (PyArray_Check(o)) {
        Py_INCREF(o);
        a = (PyArrayObject *)o;
    } else if (PyArray_IsScalar(o, Generic)) {
        a = (PyArrayObject *)PyArray_FromScalar(o, NULL);
        if (a == NULL) return NULL;
    } else {
        PyErr_Format(PyExc_TypeError, "%s: input %d is not an ndarray (got %.100s)",
                     name, k, Py_TYPE(o)->tp_name);
        return NULL;
    }
    if (PyArray_NDIM(a) != nd || !PyArray_EquivTypenums(PyArray_TYPE(a), typenum)
        || !PyArray_ISNOTSWAPPED(a)) {
        PyArray_Descr *want = PyArray_DescrFromType(typenum);
        PyErr_Format(PyExc_TypeError,
                     "%s: input %d is a %d-d array of dtype %S, expected %d-d of dtype %S",
                     name, k, PyArray_NDIM(a), (PyObject *)PyArray_DESCR(a), nd,
                     want ? (PyObject *)want : Py_None);
        Py_XDECREF(want);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

static void gc_shape_str(char *buf, size_t cap, PyArrayObject *a) {
    size_t len = 0;
    int nd = PyArray_NDIM(a);
    len += snprintf(buf + len, cap - len, "(");
    for (int d = 0; d < nd && len < cap; d++)
        len += snprintf(buf + len, cap - len, d + 1 < nd || nd > 1 ? "%ld, " : "%ld,",
                        (long)PyArray_DIM(a, d));
    if (nd > 1 && len >= 2 && len < cap) len -= 2;
    if (len < cap) snprintf(buf + len, cap - len, ")");
}

static int gc_broadcast(PyArrayObject **in, int nin, int nd, npy_intp *shape,
                        const char *name) {
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
        for (int i = 0; i < nin; i++) {
            npy_intp s = PyArray_DIM(in[i], d);
            if (s == 1) continue;
            if (shape[d] == 1) shape[d] = s;
            else if (shape[d] != s) {
                char msg[1024], one[160];
                size_t len = 0;
                for (int j = 0; j < nin && len < sizeof(msg); j++) {
                    gc_shape_str(one, sizeof(one), in[j]);
                    len += snprintf(msg + len, sizeof(msg) - len, "%s%s", j ? " " : "", one);
                }
                PyErr_Format(PyExc_ValueError,
                             "%s: input shapes %s do not broadcast (axis %d: %ld vs %ld)",
                             name, msg, d, (long)shape[d], (long)s);
                return -1;
            }
        }
    }
    return 0;
}

/* The previous array in the slot when it can be overwritten, else a new C-order array. */
static PyArrayObject *gc_prepare_output(PyObject **slot, int nd, const npy_intp *shape,
                                        int typenum) {
    PyObject *o = *slot;
    if (o != NULL && PyArray_CheckExact(o) && Py_REFCNT(o) == 1) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_NDIM(a) == nd && PyArray_TYPE(a) == typenum
            && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a)
            && PyArray_CHKFLAGS(a, NPY_ARRAY_OWNDATA)) {
            int same = 1;
            for (int d = 0; d < nd; d++)
                if (PyArray_DIM(a, d) != shape[d]) same = 0;
            if (same) return a;
        }
    }
    PyObject *n = PyArray_EMPTY(nd, (npy_intp *)shape, typenum, 0);
    if (n == NULL) return NULL;
    Py_XSETREF(*slot, n);
    return (PyArrayObject *)n;
}

static void gc_extent(PyArrayObject *a, char **lo, char **hi) {
    char *l = PyArray_BYTES(a), *h = l;
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
        if (n == 0) { *lo = *hi = l; return; }
        if (s > 0) h += s * (n - 1); else l += s * (n - 1);
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

static int gc_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *al, *ah, *bl, *bh;
    gc_extent(a, &al, &ah);
    gc_extent(b, &bl, &bh);
    return al < bh && bl < ah;
}

static int gc_same_layout(PyArrayObject *a, PyArrayObject *b) {
    if (PyArray_BYTES(a) != PyArray_BYTES(b) || PyArray_NDIM(a) != PyArray_NDIM(b)) return 0;
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_DIM(a, d) != PyArray_DIM(b, d)
            || (PyArray_DIM(a, d) > 1 && PyArray_STRIDE(a, d) != PyArray_STRIDE(b, d)))
            return 0;
    return 1;
}

/* Byte strides of ``a`` broadcast to ``shape`` (0 on size-1 axes). */
static void gc_strides(PyArrayObject *a, int nd, npy_intp *st) {
    for (int d = 0; d < nd; d++)
        st[d] = PyArray_DIM(a, d) == 1 ? 0 : PyArray_STRIDE(a, d);
}

static void gc_fill(char *buf, const char *v, int es, npy_intp n) {
    switch (es) {
    case 1: memset(buf, *v, (size_t)n); break;
#define GC_FILL(U) { U x; memcpy(&x, v, sizeof(U)); \
        for (npy_intp j = 0; j < n; j++) ((U *)buf)[j] = x; }
    case 2: GC_FILL(npy_uint16) break;
    case 4: GC_FILL(npy_uint32) break;
    default: GC_FILL(npy_uint64) break;
    }
}

/* Run an element loop over ``nop`` operands (inputs first) of broadcast shape ``shape``;
   ``st[op * nd + d]`` are byte strides (0 where broadcast). */
static void gc_ew_loop(int nop, int nin, int nd, const npy_intp *shape, char **data,
                       const npy_intp *st, const int *es, gc_contig_fn fc, gc_strided_fn fs) {
    npy_intp sh[GC_MAXD + 1], s[(GC_MAXD + 1) * GC_MAXOP], idx[GC_MAXD + 1];
    char *ptr[GC_MAXOP], *q[GC_MAXOP];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0) return;
        if (shape[d] == 1) continue;
        if (m > 0) {
            int ok = 1;
            for (int op = 0; op < nop; op++)
                if (s[(m - 1) * nop + op] != st[op * nd + d] * shape[d]) { ok = 0; break; }
            if (ok) {
                sh[m - 1] *= shape[d];
                for (int op = 0; op < nop; op++) s[(m - 1) * nop + op] = st[op * nd + d];
                continue;
            }
        }
        sh[m] = shape[d];
        for (int op = 0; op < nop; op++) s[m * nop + op] = st[op * nd + d];
        m++;
    }
    if (m == 0) {
        sh[0] = 1;
        for (int op = 0; op < nop; op++) s[op] = 0;
        m = 1;
    }
    npy_intp n = sh[m - 1];
    const npy_intp *is = &s[(m - 1) * nop];
    int contig = 1, nbc = 0, bc[GC_MAXOP];
    for (int op = 0; op < nop; op++) {
        bc[op] = 0;
        if (is[op] == es[op]) continue;
        if (is[op] == 0 && op < nin && n > 1) { bc[op] = 1; nbc++; continue; }
        if (n == 1) continue;
        contig = 0;
    }
    if (nbc > GC_MAXBC) contig = 0;
#ifdef _OPENMP
    /* one long contiguous run: split it across threads (config.openmp) */
    if (m == 1 && contig && nbc == 0 && n >= GC_PAR_MIN) {
#pragma omp parallel
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            npy_intp lo = (n * t / nt) & ~(npy_intp)63, hi = (n * (t + 1) / nt) & ~(npy_intp)63;
            if (t == nt - 1) hi = n;
            char *qt[GC_MAXOP];
            for (int op = 0; op < nop; op++) qt[op] = data[op] + lo * es[op];
            if (hi > lo) fc(hi - lo, qt);
        }
        return;
    }
#endif
    npy_uint64 bufmem[GC_MAXBC][GC_BLK];
    for (int op = 0; op < nop; op++) ptr[op] = data[op];
    for (int d = 0; d < m; d++) idx[d] = 0;
    for (;;) {
        if (!contig) {
            fs(n, ptr, is);
        } else if (nbc == 0 || n == 1) {
            fc(n, ptr);
        } else {
            npy_intp blk = n < GC_BLK ? n : GC_BLK;
            int b = 0;
            for (int op = 0; op < nop; op++)
                if (bc[op]) {
                    gc_fill((char *)bufmem[b], ptr[op], es[op], blk);
                    q[op] = (char *)bufmem[b++];
                }
            for (npy_intp done = 0; done < n; done += blk) {
                npy_intp c = n - done < blk ? n - done : blk;
                for (int op = 0; op < nop; op++)
                    if (!bc[op]) q[op] = ptr[op] + done * es[op];
                fc(c, q);
            }
        }
        int d = m - 2;
        for (; d >= 0; d--) {
            idx[d]++;
            for (int op = 0; op < nop; op++) ptr[op] += s[d * nop + op];
            if (idx[d] < sh[d]) break;
            for (int op = 0; op < nop; op++) ptr[op] -= s[d * nop + op] * sh[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}

/* Reductions: for each output element (kept axes, C order) init, step over runs of the
   reduced axes (innermost run: n elements, byte stride s), fin. */
typedef void (*gc_rinit_fn)(void *acc);
typedef void (*gc_rstep_fn)(npy_intp n, const char *p, npy_intp s, void *acc);
typedef void (*gc_rfin_fn)(const void *acc, char *out);

static void gc_reduce(int nk, const npy_intp *kd, const npy_intp *ks, int nr,
                      const npy_intp *rd0, const npy_intp *rs0, int reorder, const char *data,
                      char *out, npy_intp oes, gc_rinit_fn init, gc_rstep_fn step,
                      gc_rfin_fn fin) {
    npy_intp rd[GC_MAXD + 1], rs[GC_MAXD + 1], ri[GC_MAXD + 1], ki[GC_MAXD + 1];
    npy_intp nout = 1;
    for (int d = 0; d < nk; d++) nout *= kd[d];
    if (nout == 0) return;
    int m = 0, empty = 0;
    for (int d = 0; d < nr; d++) {
        if (rd0[d] == 0) empty = 1;
        if (rd0[d] <= 1) continue;
        rd[m] = rd0[d]; rs[m] = rs0[d]; m++;
    }
    if (reorder) { /* largest |stride| outermost */
        for (int a = 1; a < m; a++)
            for (int b = a; b > 0; b--) {
                npy_intp x = rs[b - 1] < 0 ? -rs[b - 1] : rs[b - 1];
                npy_intp y = rs[b] < 0 ? -rs[b] : rs[b];
                if (x >= y) break;
                npy_intp t = rs[b]; rs[b] = rs[b - 1]; rs[b - 1] = t;
                t = rd[b]; rd[b] = rd[b - 1]; rd[b - 1] = t;
            }
    }
    int c = 0;
    for (int d = 0; d < m; d++) {
        if (c > 0 && rs[c - 1] == rs[d] * rd[d]) {
            rd[c - 1] *= rd[d];
            rs[c - 1] = rs[d];
            continue;
        }
        rd[c] = rd[d]; rs[c] = rs[d]; c++;
    }
    m = c;
    if (m == 0) { rd[0] = 1; rs[0] = 0; m = 1; }
    double accmem[8];
    const char *base = data;
    for (int d = 0; d < nk; d++) ki[d] = 0;
    for (npy_intp o = 0; o < nout; o++) {
        init(accmem);
        if (!empty) {
            const char *p = base;
            for (int d = 0; d < m; d++) ri[d] = 0;
            for (;;) {
                step(rd[m - 1], p, rs[m - 1], accmem);
                int d = m - 2;
                for (; d >= 0; d--) {
                    ri[d]++;
                    p += rs[d];
                    if (ri[d] < rd[d]) break;
                    p -= rs[d] * rd[d];
                    ri[d] = 0;
                }
                if (d < 0) break;
            }
        }
        fin(accmem, out);
        out += oes;
        for (int d = nk - 1; d >= 0; d--) {
            ki[d]++;
            base += ks[d];
            if (ki[d] < kd[d]) break;
            base -= ks[d] * kd[d];
            ki[d] = 0;
        }
    }
}
/* Reductions with the accumulator in the output: out = op(out, x) over the input in
   memory order (largest stride outermost), when the input's innermost axis is kept.
   Returns 0 (nothing done) otherwise. */
static int gc_reduce_acc(PyArrayObject *x, const int *is_red, PyArrayObject *out,
                         gc_rinit_fn init, gc_rfin_fn fin, gc_contig_fn fc, gc_strided_fn fs) {
    int nd = PyArray_NDIM(x), k = 0;
    npy_intp shape[GC_MAXD], sx[GC_MAXD], so[GC_MAXD], st[3 * GC_MAXD];
    for (int d = 0; d < nd; d++) {
        shape[d] = PyArray_DIM(x, d);
        sx[d] = shape[d] == 1 ? 0 : PyArray_STRIDE(x, d);
        so[d] = is_red[d] ? 0 : (shape[d] == 1 ? 0 : PyArray_STRIDE(out, k));
        if (!is_red[d]) k++;
    }
    for (int a = 1; a < nd; a++) /* stable: largest |stride| first */
        for (int b = a; b > 0; b--) {
            npy_intp u = sx[b - 1] < 0 ? -sx[b - 1] : sx[b - 1];
            npy_intp v = sx[b] < 0 ? -sx[b] : sx[b];
            if (u >= v) break;
            npy_intp t = sx[b]; sx[b] = sx[b - 1]; sx[b - 1] = t;
            t = so[b]; so[b] = so[b - 1]; so[b - 1] = t;
            t = shape[b]; shape[b] = shape[b - 1]; shape[b - 1] = t;
        }
    int last = -1;
    for (int d = 0; d < nd; d++)
        if (shape[d] > 1) last = d;
    if (last < 0 || so[last] == 0) return 0;
    double accmem[8];
    npy_intp nout = PyArray_SIZE(out), oes = PyArray_ITEMSIZE(out);
    char *o = PyArray_BYTES(out);
    init(accmem);
    for (npy_intp j = 0; j < nout; j++) fin(accmem, o + j * oes);
    char *data[3] = {PyArray_BYTES(x), o, o};
    int es[3] = {(int)PyArray_ITEMSIZE(x), (int)oes, (int)oes};
    for (int d = 0; d < nd; d++) {
        st[d] = sx[d];
        st[nd + d] = so[d];
        st[2 * nd + d] = so[d];
    }
    gc_ew_loop(3, 2, nd, shape, data, st, es, fc, fs);
    return 1;
}

"""

SUPPORT = (_mvec_decls(), _SCALAR_HELPERS, VECMATH, _DRIVER)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _store(expr: str, dtype: str) -> str:
    if dtype == "bool":
        return f"(npy_bool)(({expr}) != 0)"
    return f"({ctype(dtype)})({expr})"


# ------------------------------------------------------------------ Elemwise


def elemwise_exprs(
    op: ScalarOp, names: Sequence[str], in_dtypes: Sequence[str], out_dtypes: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Statements and output expressions of a scalar Op over element names, or None."""
    if isinstance(op, Composite):
        return composite_c_body(op, names)
    if len(out_dtypes) != 1:
        return None
    e = c_expr(op, list(names), list(in_dtypes), out_dtypes[0])
    return None if e is None else ([], [e])


@register_c(Elemwise)
def gen_elemwise(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt = [i.type.dtype for i in node.inputs]
    out_dt = [o.type.dtype for o in node.outputs]
    nin, nout, nd = len(in_dt), len(out_dt), node.outputs[0].type.ndim
    if nin + nout > 64 or nd > 32:
        return None
    names = [f"x{k}" for k in range(nin)]
    try:
        got = elemwise_exprs(op.scalar_op, names, in_dt, out_dt)
    except (NotImplementedError, ValueError, TypeError):
        return None
    if got is None:
        return None
    lines, outs = got
    # Base pointers are loaded once, before the loop: read inside it (where a store through
    # an output could, for the compiler, change p[] itself) they become gathers/scatters.
    bases_c = [f"const {ctype(d)} *q{k} = (const {ctype(d)} *)p[{k}];" for k, d in enumerate(in_dt)]
    bases_c += [
        f"{ctype(d)} *q{nin + k} = ({ctype(d)} *)p[{nin + k}];" for k, d in enumerate(out_dt)
    ]
    reads_c = [f"const {ctype(d)} x{k} = q{k}[i];" for k, d in enumerate(in_dt)]
    reads_s = [
        f"const {ctype(d)} x{k} = *(const {ctype(d)} *)(p[{k}] + i * s[{k}]);"
        for k, d in enumerate(in_dt)
    ]
    writes_c = [f"q{nin + k}[i] = {_store(e, d)};" for k, (e, d) in enumerate(zip(outs, out_dt))]
    writes_s = [
        f"*({ctype(d)} *)(p[{nin + k}] + i * s[{nin + k}]) = {_store(e, d)};"
        for k, (e, d) in enumerate(zip(outs, out_dt))
    ]
    # Outputs are written after all inputs of the element are read (in-place safe).
    inner_c = "\n        ".join([*reads_c, *lines, *writes_c])
    inner_s = "\n        ".join([*reads_s, *lines, *writes_s])
    kern = (
        "static void NAME_c(npy_intp n, char **p) {\n"
        + "".join(f"    {b}\n" for b in bases_c)
        + "#pragma omp simd\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner_c}\n"
        "    }\n"
        "}\n"
        "static void NAME_s(npy_intp n, char **p, const npy_intp *s) {\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner_s}\n"
        "    }\n"
        "}\n"
    )
    name = "gc_ew_" + _hash(kern)
    kern = kern.replace("NAME", name)
    label = c_string(str(op))
    inplace = dict(op.inplace_pattern)
    ndx = max(nd, 1)
    nop = nin + nout
    b = [
        f"    const char *name = {label};",
        f"    PyArrayObject *in[{nin}], *tmp[{nin}], *own[{nin}];",
        f"    npy_intp shape[{ndx}], st[{nop * ndx}];",
        f"    char *data[{nop}];",
        f"    int es[{nop}];",
        "    int rc = -1;",
    ]
    b.append(f"    for (int k = 0; k < {nin}; k++) tmp[k] = own[k] = NULL;")
    for k, d in enumerate(in_dt):
        b.append(
            f"    if (!(own[{k}] = in[{k}] = gc_input(inputs[{k}], {k}, {nd}, {typenum(d)}, name)))"
            " goto done;"
        )
    for j in set(inplace.values()):
        b.append(
            f"    if ((PyObject *)in[{j}] != inputs[{j}]) {{ PyErr_Format(PyExc_TypeError, "
            '"%s: the in-place input is not an ndarray", name); goto done; }'
        )
    b.append(f"    if (gc_broadcast(in, {nin}, {nd}, shape, name) < 0) goto done;")
    for k in range(nin):
        if k in inplace.values():
            b.append(
                f"    if (!PyArray_ISALIGNED(in[{k}])) {{ PyErr_Format(PyExc_ValueError, "
                '"%s: the in-place input is not aligned", name); goto done; }'
            )
            continue
        b.append(
            f"    if (!PyArray_ISALIGNED(in[{k}])) {{\n"
            f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
            " goto done;\n"
            f"        in[{k}] = tmp[{k}];\n"
            "    }"
        )
    # An in-place input the broadcast grows (an axis of unknown size that is 1 at run time)
    # cannot hold the output: then the output is a new array, as without the pattern.
    for j in set(inplace.values()):
        b.append(f"    int fit{j} = 1;")
        b.append(
            f"    for (int d = 0; d < {nd}; d++) fit{j} &= PyArray_DIM(in[{j}], d) == shape[d];"
        )
        b.append(
            f'    if (fit{j} && PyArray_FailUnlessWriteable(in[{j}], "an in-place input") < 0)'
            " goto done;"
        )
        for k in range(nin):
            if k == j:
                continue
            b.append(
                f"    if (fit{j} && !tmp[{k}] && in[{k}] != in[{j}] && gc_overlap(in[{k}], in[{j}])"
                f" && !gc_same_layout(in[{k}], in[{j}])) {{\n"
                f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
                " goto done;\n"
                f"        in[{k}] = tmp[{k}];\n"
                "    }"
            )
    for k, d in enumerate(in_dt):
        b.append(f"    data[{k}] = PyArray_BYTES(in[{k}]); es[{k}] = {np.dtype(d).itemsize};")
        b.append(f"    gc_strides(in[{k}], {nd}, &st[{k * ndx}]);")
    for o, d in enumerate(out_dt):
        slot = nin + o
        if o in inplace:
            j = inplace[o]
            b.append(
                f"    {{ PyArrayObject *a = in[{j}];\n"
                f"      if (fit{j}) {{\n"
                f"        Py_INCREF((PyObject *)inputs[{j}]);\n"
                f"        Py_XSETREF(*o{o}, (PyObject *)inputs[{j}]);\n"
                f"      }} else if (!(a = gc_prepare_output(o{o}, {nd}, shape, {typenum(d)}))) {{\n"
                "        goto done;\n"
                "      }"
            )
        else:
            b.append(
                f"    {{ PyArrayObject *a = gc_prepare_output(o{o}, {nd}, shape, {typenum(d)});"
                "\n      if (a == NULL) goto done;"
            )
        b.append(
            f"      data[{slot}] = PyArray_BYTES(a); es[{slot}] = {np.dtype(d).itemsize};"
            f" gc_strides(a, {nd}, &st[{slot * ndx}]); }}"
        )
    b.append(f"    gc_ew_loop({nop}, {nin}, {nd}, shape, data, st, es, {name}_c, {name}_s);")
    b.append("    rc = 0;")
    b.append("done:")
    for k in range(nin):
        b.append(f"    Py_XDECREF(tmp[{k}]); Py_XDECREF(own[{k}]);")
    b.append("    if (rc < 0) FAIL;")
    return CThunkCode(body="\n".join(b), support=(*SUPPORT, kern))


# ------------------------------------------------------------------ DimShuffle


@register_c(DimShuffle)
def gen_dimshuffle(node: Apply) -> CThunkCode | None:
    op = node.op
    dt = node.inputs[0].type.dtype
    nd_in, order = op.input_ndim, op.new_order
    nd_out = len(order)
    b = [
        f"    const char *name = {c_string(str(op))};",
        f"    PyArrayObject *x = gc_input(inputs[0], 0, {nd_in}, {typenum(dt)}, name);",
        "    if (x == NULL) FAIL;",
    ]
    for d in op.drop:
        b.append(
            f"    if (PyArray_DIM(x, {d}) != 1) {{ PyErr_Format(PyExc_ValueError, "
            f'"%s: cannot drop axis {d} of size %ld", name, (long)PyArray_DIM(x, {d}));'
            " Py_DECREF(x); FAIL; }"
        )
    b.append(f"    npy_intp dims[{max(nd_out, 1)}], strides[{max(nd_out, 1)}];")
    for k, o in enumerate(order):
        if o == "x":
            b.append(f"    dims[{k}] = 1; strides[{k}] = 0;")
        else:
            b.append(f"    dims[{k}] = PyArray_DIM(x, {o}); strides[{k}] = PyArray_STRIDE(x, {o});")
    b.append(
        "    PyArray_Descr *descr = PyArray_DESCR(x);\n"
        "    Py_INCREF(descr);\n"
        f"    PyObject *r = PyArray_NewFromDescr(&PyArray_Type, descr, {nd_out}, dims, strides,\n"
        "        PyArray_DATA(x), PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);\n"
        "    if (r == NULL) { Py_DECREF(x); FAIL; }\n"
        "    if (PyArray_SetBaseObject((PyArrayObject *)r, (PyObject *)x) < 0) {\n"
        "        Py_DECREF(r);\n"
        "        FAIL;\n"
        "    }\n"
        "    Py_XSETREF(*o0, r);"
    )
    return CThunkCode(body="\n".join(b), support=SUPPORT)


# ------------------------------------------------------------------ reductions


def _reduce_kernels(kind: str, in_dt: str, out_dt: str) -> str | None:
    """C of NAME_init/step/fin (one output element) and NAME_c/NAME_s (out = op(out, x)
    over runs, when the accumulator is the output type) for one reduction."""
    t = ctype(in_dt)
    is_f = in_dt in ("float32", "float64")
    if kind in ("add", "mul") and out_dt == "bool":
        kind = "or" if kind == "add" else "and"
    if kind == "add":
        acc, ident = ctype(out_dt), "0"  # as numpy: float32 sums overflow like float32
        # four contiguous streams, each vectorized: independent partial sums
        step = (
            "    if (s == (npy_intp)sizeof($T) && n >= 64) {\n"
            "        const $T *q = (const $T *)p;\n"
            "        npy_intp m = n / 4;\n"
            "        $A s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
            "#pragma omp simd reduction(+:s0, s1, s2, s3)\n"
            "        for (npy_intp i = 0; i < m; i++) {\n"
            "            s0 += ($A)q[i]; s1 += ($A)q[i + m];\n"
            "            s2 += ($A)q[i + 2 * m]; s3 += ($A)q[i + 3 * m];\n"
            "        }\n"
            "        for (npy_intp i = 4 * m; i < n; i++) s0 += ($A)q[i];\n"
            "        a += (s0 + s1) + (s2 + s3);\n"
            "    } else {\n"
            "        for (npy_intp i = 0; i < n; i++) a += ($A)*(const $T *)(p + i * s);\n"
            "    }\n"
        )
        comb = "(($A)x1 + ($A)x0)"
    elif kind == "mul":
        acc, ident = ctype(out_dt), "1"
        # products in numpy's (sequential) order: under/overflow depend on it
        step = "    for (npy_intp i = 0; i < n; i++) a *= ($A)*(const $T *)(p + i * s);\n"
        comb = "(($A)x1 * ($A)x0)"
    elif kind in ("maximum", "minimum"):
        acc = t
        lo, hi = C_LIMITS[in_dt]
        ident = lo if kind == "maximum" else hi
        cmp = ">" if kind == "maximum" else "<"
        red = "max" if kind == "maximum" else "min"
        nan_decl = "    int nan = 0;\n" if is_f else ""
        nan_red = " reduction(|:nan)" if is_f else ""
        nan_upd = " nan |= (v != v);" if is_f else ""
        nan_fin = "    if (nan && a == a) a = NAN;\n" if is_f else ""
        step = (
            f"    $A m = a;\n{nan_decl}"
            "    if (s == (npy_intp)sizeof($T)) {\n"
            "        const $T *q = (const $T *)p;\n"
            f"#pragma omp simd reduction({red}:m){nan_red}\n"
            "        for (npy_intp i = 0; i < n; i++) {\n"
            f"            $T v = q[i]; m = v {cmp} m ? v : m;{nan_upd}\n"
            "        }\n"
            "    } else {\n"
            "        for (npy_intp i = 0; i < n; i++) {\n"
            f"            $T v = *(const $T *)(p + i * s); m = v {cmp} m ? v : m;{nan_upd}\n"
            "        }\n"
            "    }\n"
            "    if (a == a) a = m;\n"
            f"{nan_fin}"
        )
        gc = "gc_max" if kind == "maximum" else "gc_min"
        if is_f:
            comb = f"{gc}_{t}(($A)x1, ($A)x0)"
        else:
            comb = f"((($A)x1 {cmp}= ($A)x0) ? ($A)x1 : ($A)x0)"
    elif kind in ("and", "or"):
        acc = "npy_bool"
        ident = "1" if kind == "and" else "0"
        op = "&" if kind == "and" else "|"
        step = (
            "    for (npy_intp i = 0; i < n; i++)\n"
            f"        a {op}= (npy_bool)(*(const $T *)(p + i * s) != 0);\n"
        )
        comb = f"(x1 {op} (npy_bool)(x0 != 0))"
    else:
        return None
    fin = _store("*(const $A *)acc", out_dt)
    code = (
        f"static void NAME_init(void *acc) {{ *($A *)acc = ($A)({ident}); }}\n"
        "static void NAME_step(npy_intp n, const char *p, npy_intp s, void *acc) {\n"
        "    $A a = *($A *)acc;\n"
        f"{step}"
        "    *($A *)acc = a;\n"
        "}\n"
        f"static void NAME_fin(const void *acc, char *out) {{ *($O *)out = {fin}; }}\n"
    )
    if acc == ctype(out_dt):
        code += (
            "static void NAME_c(npy_intp n, char **p) {\n"
            "    const $T *q = (const $T *)p[0]; const $O *r = (const $O *)p[1];\n"
            "    $O *o = ($O *)p[2];\n"
            "#pragma omp simd\n"
            "    for (npy_intp i = 0; i < n; i++) {\n"
            f"        const $T x0 = q[i]; const $O x1 = r[i]; o[i] = {_store(comb, out_dt)};\n"
            "    }\n"
            "}\n"
            "static void NAME_s(npy_intp n, char **p, const npy_intp *s) {\n"
            "    for (npy_intp i = 0; i < n; i++) {\n"
            "        const $T x0 = *(const $T *)(p[0] + i * s[0]);\n"
            "        const $O x1 = *(const $O *)(p[1] + i * s[1]);\n"
            f"        *($O *)(p[2] + i * s[2]) = {_store(comb, out_dt)};\n"
            "    }\n"
            "}\n"
        )
    return code.replace("$T", t).replace("$A", acc).replace("$O", ctype(out_dt))


def _argmax_kernels(kind: str, in_dt: str) -> str:
    t = ctype(in_dt)
    is_f = in_dt in ("float32", "float64")
    cmp = ">" if kind == "max" else "<"
    nan_else = " else if (v != v) { best = v; bi = i; break; }" if is_f else ""
    nan_first = "        if (v != v) st->nan = 1;\n" if is_f else ""
    nan_last = "        if (best != best) st->nan = 1;\n" if is_f else ""
    red = "max" if kind == "max" else "min"
    nan_decl = " int nan = 0;" if is_f else ""
    nan_red = " reduction(|:nan)" if is_f else ""
    nan_upd = " nan |= (v != v);" if is_f else ""
    nan_search = (
        "        if (nan) {\n"
        "            for (npy_intp i = 0; i < n; i++) if (q[i] != q[i]) { bi = i; break; }\n"
        "            best = q[bi];\n"
        "        }\n"
        if is_f
        else ""
    )
    return (
        f"typedef struct {{ {t} best; npy_int64 idx, k; int have, nan; }} NAME_acc;\n"
        "static void NAME_init(void *acc) { memset(acc, 0, sizeof(NAME_acc)); }\n"
        "static void NAME_step(npy_intp n, const char *p, npy_intp s, void *acc) {\n"
        "    NAME_acc *st = (NAME_acc *)acc;\n"
        "    if (n <= 0) return;\n"
        "    if (!st->have) {\n"
        f"        {t} v = *(const {t} *)p;\n"
        "        st->best = v; st->idx = st->k; st->have = 1;\n"
        f"{nan_first}"
        "        p += s; n--; st->k++;\n"
        "    }\n"
        "    if (st->nan) { st->k += n; return; }\n"
        f"    {t} best = st->best;\n"
        "    npy_intp bi = -1, len = n;\n"
        # contiguous runs: a vectorized extreme (and NaN check), then the first index of it
        f"    if (s == (npy_intp)sizeof({t}) && n >= 16) {{\n"
        f"        const {t} *q = (const {t} *)p;\n"
        f"        {t} m = q[0];{nan_decl}\n"
        f"#pragma omp simd reduction({red}:m){nan_red}\n"
        "        for (npy_intp i = 0; i < n; i++) {\n"
        f"            {t} v = q[i]; m = v {cmp} m ? v : m;{nan_upd}\n"
        "        }\n"
        f"{nan_search}"
        f"        if (bi < 0 && m {cmp} best) {{\n"
        "            for (npy_intp i = 0; i < n; i++) if (q[i] == m) { bi = i; break; }\n"
        "            best = m;\n"
        "        }\n"
        "        n = 0;\n"
        "    }\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {t} v = *(const {t} *)(p + i * s);\n"
        f"        if (v {cmp} best) {{ best = v; bi = i; }}{nan_else}\n"
        "    }\n"
        "    if (bi >= 0) {\n"
        "        st->best = best; st->idx = st->k + bi;\n"
        f"{nan_last}"
        "    }\n"
        "    st->k += len;\n"
        "}\n"
        "static void NAME_fin(const void *acc, char *out) {\n"
        "    *(npy_int64 *)out = ((const NAME_acc *)acc)->idx;\n"
        "}\n"
    )


def _reduce_body(
    node: Apply,
    axes: tuple[int, ...],
    kern_name: str,
    reorder: int,
    empty_error: str | None,
    label: str,
    accumulate: bool,
) -> str:
    x = node.inputs[0]
    in_dt, out_dt = x.type.dtype, node.outputs[0].type.dtype
    nd = x.type.ndim
    keep = [d for d in range(nd) if d not in axes]
    nk, nr = len(keep), len(axes)
    b = [
        f"    const char *name = {label};",
        f"    PyArrayObject *own = gc_input(inputs[0], 0, {nd}, {typenum(in_dt)}, name);",
        "    if (own == NULL) FAIL;",
        "    PyArrayObject *x = own, *tmp = NULL;",
        f"    npy_intp kd[{max(nk, 1)}], ks[{max(nk, 1)}], rd[{max(nr, 1)}], rs[{max(nr, 1)}];",
    ]
    for k, d in enumerate(keep):
        b.append(f"    kd[{k}] = PyArray_DIM(x, {d});")
    for k, d in enumerate(axes):
        b.append(f"    rd[{k}] = PyArray_DIM(x, {d});")
        if empty_error:
            b.append(
                f"    if (rd[{k}] == 0) {{ PyErr_Format(PyExc_ValueError, {empty_error}, name);"
                " Py_DECREF(own); FAIL; }"
            )
    b.append(
        "    if (!PyArray_ISALIGNED(x)) {\n"
        "        tmp = (PyArrayObject *)PyArray_NewCopy(x, NPY_CORDER);\n"
        "        if (tmp == NULL) { Py_DECREF(own); FAIL; }\n"
        "        x = tmp;\n"
        "    }"
    )
    for k, d in enumerate(keep):
        b.append(f"    ks[{k}] = PyArray_STRIDE(x, {d});")
    for k, d in enumerate(axes):
        b.append(f"    rs[{k}] = PyArray_STRIDE(x, {d});")
    red = ", ".join("1" if d in axes else "0" for d in range(nd)) or "0"
    use_acc = ""
    if accumulate:
        kn = kern_name
        use_acc = (
            f"!gc_reduce_acc(x, is_red, out, {kn}_init, {kn}_fin, {kn}_c, {kn}_s) &&\n        "
        )
    b.append(
        f"    PyArrayObject *out = gc_prepare_output(o0, {nk}, kd, {typenum(out_dt)});\n"
        "    if (out == NULL) { Py_XDECREF(tmp); Py_DECREF(own); FAIL; }\n"
        f"    static const int is_red[{max(nd, 1)}] = {{{red}}}; (void)is_red;\n"
        f"    if ({use_acc}1) gc_reduce({nk}, kd, ks, {nr}, rd, rs, {reorder}, PyArray_BYTES(x),"
        f" PyArray_BYTES(out), {np.dtype(out_dt).itemsize},\n"
        f"              {kern_name}_init, {kern_name}_step, {kern_name}_fin);\n"
        "    Py_XDECREF(tmp);\n"
        "    Py_DECREF(own);"
    )
    return "\n".join(b)


@register_c(CAReduce)
def gen_careduce(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt, out_dt = node.inputs[0].type.dtype, node.outputs[0].type.dtype
    got = _reduce_kernels(op.scalar_op.name, in_dt, out_dt)
    if got is None or node.inputs[0].type.ndim > 32:
        return None
    code = got
    name = "gc_red_" + _hash(code)
    code = code.replace("NAME", name)
    empty = None
    if op.scalar_op.name in ("maximum", "minimum"):
        fn = op.scalar_op.name
        empty = c_string(f"%s: zero-size array to reduction operation {fn} which has no identity")
    accumulate = f"{name}_c(" in code
    body = _reduce_body(node, tuple(op.axis), name, 1, empty, c_string(str(op)), accumulate)
    return CThunkCode(body=body, support=(*SUPPORT, code))


@register_c(Argmax)
def gen_argmax(node: Apply) -> CThunkCode | None:
    op = node.op
    in_dt = node.inputs[0].type.dtype
    if node.inputs[0].type.ndim > 32 or op.kind not in ("max", "min"):
        return None
    code = _argmax_kernels(op.kind, in_dt)
    name = "gc_arg_" + _hash(code)
    code = code.replace("NAME", name)
    empty = c_string(f"%s: attempt to get the arg{op.kind} of an empty axis")
    body = _reduce_body(node, tuple(op.axis), name, 0, empty, c_string(str(op)), False)
    return CThunkCode(body=body, support=(*SUPPORT, code))


@register_c(ElemwiseSum)
def gen_elemwise_sum(node: Apply) -> CThunkCode | None:
    """One pass over C-contiguous copies-if-needed of the inputs, four independent partial
    sums per vector lane (the element function vectorizes through libmvec as in the fused
    Elemwise loops)."""
    in_dt = [i.type.dtype for i in node.inputs]
    dt = node.outputs[0].type.dtype
    nin, nd = len(in_dt), node.inputs[0].type.ndim
    if nin > 64 or nd > 32:
        return None
    names = [f"x{k}" for k in range(nin)]
    try:
        got = elemwise_exprs(node.op.inner, names, in_dt, [dt])
    except (NotImplementedError, ValueError, TypeError):
        return None
    if got is None:
        return None
    lines, (expr,) = got
    t = ctype(dt)
    # the base pointers are hoisted: loaded inside the simd loop they become gathers
    bases = [f"const {ctype(d)} *q{k} = (const {ctype(d)} *)p[{k}];" for k, d in enumerate(in_dt)]
    reads = [f"const {ctype(d)} x{k} = q{k}[i];" for k, d in enumerate(in_dt)]
    inner = "\n        ".join([*reads, *lines, f"acc += {_store(expr, dt)};"])
    kern = (
        f"static {t} NAME_sum(npy_intp n, char **p) {{\n"
        + "".join(f"    {b}\n" for b in bases)
        + f"    {t} acc = 0;\n"
        "#pragma omp simd reduction(+:acc)\n"
        "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner}\n"
        "    }\n"
        "    return acc;\n"
        "}\n"
    )
    name = "gc_ewsum_" + _hash(kern)
    kern = kern.replace("NAME", name)
    b = [
        f"    const char *name = {c_string(str(node.op))};",
        f"    PyArrayObject *in[{nin}];",
        f"    char *data[{nin}];",
        "    int rc = -1;",
        f"    for (int k = 0; k < {nin}; k++) in[k] = NULL;",
    ]
    for k, d in enumerate(in_dt):
        b.append(
            f"    {{ PyArrayObject *a = gc_input(inputs[{k}], {k}, {nd}, {typenum(d)}, name);\n"
            "      if (a == NULL) goto done;\n"
            f"      in[{k}] = (PyArrayObject *)PyArray_FromAny((PyObject *)a, NULL, 0, 0,"
            " NPY_ARRAY_CARRAY_RO, NULL);\n"
            "      Py_DECREF(a);\n"
            f"      if (in[{k}] == NULL) goto done; }}"
        )
        if k:
            b.append(
                f"    if (!PyArray_SAMESHAPE(in[{k}], in[0])) {{ PyErr_Format(PyExc_ValueError,"
                ' "%s: inputs of different shapes", name); goto done; }'
            )
        b.append(f"    data[{k}] = PyArray_BYTES(in[{k}]);")
    b += [
        f"    {{ PyArrayObject *out = gc_prepare_output(o0, 0, NULL, {typenum(dt)});",
        "      if (out == NULL) goto done;",
        f"      *({t} *)PyArray_DATA(out) = {name}_sum(PyArray_SIZE(in[0]), data); }}",
        "    rc = 0;",
        "done:",
        f"    for (int k = 0; k < {nin}; k++) Py_XDECREF(in[k]);",
        "    if (rc < 0) FAIL;",
    ]
    return CThunkCode(body="\n".join(b), support=(*SUPPORT, kern))
