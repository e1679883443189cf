#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#define FAIL return -1

/* Every thunk runs behind graphc_checked: each array input must be an ndarray of the
   node's declared ndim and dtype (numpy scalars are converted), else TypeError. Generated
   bodies may then read their inputs without further checks, whatever a caller with
   trust_input=True hands them. */
typedef struct { int nd; int typenum; } graphc_in_spec; /* nd < 0: not an array input */
typedef int (*graphc_run_fn)(void *, PyObject *const *, PyObject **);

static int graphc_checked_slow(graphc_run_fn run, const graphc_in_spec *spec, int n,
                               const char *name, void *params, PyObject *const *inputs,
                               PyObject **outputs) {
    PyObject **tmp = PyMem_Calloc(n > 0 ? n : 1, sizeof(PyObject *));
    int rc = -1, j;
    if (tmp == NULL) { PyErr_NoMemory(); return -1; }
    for (j = 0; j < n; j++) {
        PyObject *o = inputs[j];
        if (spec[j].nd >= 0 && !PyArray_Check(o) && PyArray_IsScalar(o, Generic))
            o = PyArray_FromScalar(o, NULL);
        else
            Py_INCREF(o);
        if (o == NULL) goto done;
        tmp[j] = o;
        if (spec[j].nd < 0) continue;
        if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != spec[j].nd
            || !PyArray_EquivTypenums(PyArray_TYPE((PyArrayObject *)o), spec[j].typenum)) {
            PyArray_Descr *want = PyArray_DescrFromType(spec[j].typenum);
            if (PyArray_Check(o))
                PyErr_Format(PyExc_TypeError,
                             "%s: input %d must be a %d-d array of dtype %S, got a %d-d array "
                             "of dtype %S", name, j, spec[j].nd, (PyObject *)want,
                             PyArray_NDIM((PyArrayObject *)o),
                             (PyObject *)PyArray_DESCR((PyArrayObject *)o));
            else
                PyErr_Format(PyExc_TypeError,
                             "%s: input %d must be a %d-d array of dtype %S, got %.100s", name,
                             j, spec[j].nd, (PyObject *)want, Py_TYPE(inputs[j])->tp_name);
            Py_XDECREF(want);
            goto done;
        }
    }
    rc = run(params, tmp, outputs);
done:
    for (j = 0; j < n; j++) Py_XDECREF(tmp[j]);
    PyMem_Free(tmp);
    return rc;
}

static inline int graphc_checked(graphc_run_fn run, const graphc_in_spec *spec, int n,
                                 const char *name, void *params, PyObject *const *inputs,
                                 PyObject **outputs) {
    for (int j = 0; j < n; j++) {
        PyObject *o = inputs[j];
        if (spec[j].nd < 0) continue;
        if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != spec[j].nd
            || PyArray_TYPE((PyArrayObject *)o) != spec[j].typenum)
            return graphc_checked_slow(run, spec, n, name, params, inputs, outputs);
    }
    return run(params, inputs, outputs);
}

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

typedef void (*graphc_sgemm_t)(char *, char *, int *, int *, int *, float *, float *, int *,
                               float *, int *, float *, float *, int *);
typedef void (*graphc_dgemm_t)(char *, char *, int *, int *, int *, double *, double *, int *,
                               double *, int *, double *, double *, int *);
typedef void (*graphc_sgemv_t)(char *, int *, int *, float *, float *, int *, float *, int *,
                               float *, float *, int *);
typedef void (*graphc_dgemv_t)(char *, int *, int *, double *, double *, int *, double *, int *,
                               double *, double *, int *);
typedef float (*graphc_sdot_t)(int *, float *, int *, float *, int *);
typedef double (*graphc_ddot_t)(int *, double *, int *, double *, int *);
static graphc_sgemm_t graphc_sgemm;
static graphc_dgemm_t graphc_dgemm;
static graphc_sgemv_t graphc_sgemv;
static graphc_dgemv_t graphc_dgemv;
static graphc_sdot_t graphc_sdot;
static graphc_ddot_t graphc_ddot;

static void *graphc_blas_fn(PyObject *capi, const char *name) {
    PyObject *cap = PyDict_GetItemString(capi, name); /* borrowed */
    if (cap == NULL) {
        PyErr_Format(PyExc_ImportError, "scipy.linalg.cython_blas does not export %s", name);
        return NULL;
    }
    const char *cname = PyCapsule_GetName(cap);
    if (cname == NULL && PyErr_Occurred()) return NULL;
    return PyCapsule_GetPointer(cap, cname);
}

/* Fill the function pointers from scipy's cython_blas (once; later calls return 0). */
static int graphc_blas_load(void) {
    if (graphc_ddot != NULL) return 0;
    PyObject *mod = PyImport_ImportModule("scipy.linalg.cython_blas");
    if (mod == NULL) return -1;
    PyObject *capi = PyObject_GetAttrString(mod, "__pyx_capi__");
    Py_DECREF(mod);
    if (capi == NULL) return -1;
    if (!PyDict_Check(capi)) {
        Py_DECREF(capi);
        PyErr_SetString(PyExc_ImportError, "scipy.linalg.cython_blas.__pyx_capi__ is not a dict");
        return -1;
    }
    static const char *names[6] = {"sgemm", "dgemm", "sgemv", "dgemv", "sdot", "ddot"};
    void *fns[6];
    for (int k = 0; k < 6; k++) {
        fns[k] = graphc_blas_fn(capi, names[k]);
        if (fns[k] == NULL) {
            Py_DECREF(capi);
            return -1;
        }
    }
    Py_DECREF(capi);
    graphc_sgemm = (graphc_sgemm_t)fns[0];
    graphc_dgemm = (graphc_dgemm_t)fns[1];
    graphc_sgemv = (graphc_sgemv_t)fns[2];
    graphc_dgemv = (graphc_dgemv_t)fns[3];
    graphc_sdot = (graphc_sdot_t)fns[4];
    graphc_ddot = (graphc_ddot_t)fns[5];
    return 0;
}

/* A matrix in Fortran terms: trans 'N' = data is column-major with leading dimension ld;
   'T' = data is row-major (its column-major reading is the transpose). */
typedef struct {
    char *data;
    char trans;
    int ld;
} graphc_fmat;

/* Describe a 2-d non-empty array for BLAS without copying; -1 when it cannot be. */
static int graphc_fmat_of(PyArrayObject *a, graphc_fmat *f) {
    const npy_intp es = PyArray_ITEMSIZE(a);
    const npy_intp m = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    const npy_intp s0 = PyArray_STRIDE(a, 0), s1 = PyArray_STRIDE(a, 1);
    npy_intp ld;
    if (!PyArray_ISALIGNED(a) || m > INT_MAX || n > INT_MAX) return -1;
    if ((s1 == es || n == 1) && (m == 1 || (s0 > 0 && s0 % es == 0 && s0 / es >= n))) {
        ld = m == 1 ? (n > 1 ? n : 1) : s0 / es;
        f->trans = 'T';
    } else if ((s0 == es || m == 1) && (n == 1 || (s1 > 0 && s1 % es == 0 && s1 / es >= m))) {
        ld = n == 1 ? (m > 1 ? m : 1) : s1 / es;
        f->trans = 'N';
    } else {
        return -1;
    }
    if (ld > INT_MAX) return -1;
    f->ld = (int)ld;
    f->data = PyArray_DATA(a);
    return 0;
}

/* The element stride of a vector usable as a BLAS increment (> 0), or 0 if it is not. */
static int graphc_inc_of(PyArrayObject *v) {
    const npy_intp es = PyArray_ITEMSIZE(v), s = PyArray_STRIDE(v, 0);
    if (!PyArray_ISALIGNED(v) || PyArray_DIM(v, 0) > INT_MAX) return 0;
    if (PyArray_DIM(v, 0) <= 1) return 1;
    if (s <= 0 || s % es || s / es > INT_MAX) return 0;
    return (int)(s / es);
}

/* Whether the memory spans of two arrays intersect (conservative). */
static int graphc_overlap(PyArrayObject *a, PyArrayObject *b) {
    if (PyArray_SIZE(a) == 0 || PyArray_SIZE(b) == 0) return 0;
    char *lo[2], *hi[2];
    PyArrayObject *ab[2] = {a, b};
    for (int j = 0; j < 2; j++) {
        lo[j] = hi[j] = PyArray_DATA(ab[j]);
        for (int k = 0; k < PyArray_NDIM(ab[j]); k++) {
            npy_intp ext = (PyArray_DIM(ab[j], k) - 1) * PyArray_STRIDE(ab[j], k);
            if (ext < 0) lo[j] += ext;
            else hi[j] += ext;
        }
        hi[j] += PyArray_ITEMSIZE(ab[j]);
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

/* A C-contiguous copy of `a` when `need`, else a new reference to `a`. */
static PyArrayObject *graphc_maybe_copy(PyArrayObject *a, int need) {
    if (need) return (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
    Py_INCREF(a);
    return a;
}

/* z <- beta * z for a 1-d or 2-d array (beta == 0 writes zeros without reading z). */
static void graphc_dscale(PyArrayObject *z, npy_float64 beta) {
    const int nd = PyArray_NDIM(z);
    const npy_intp m = nd > 1 ? PyArray_DIM(z, 0) : 1, n = PyArray_DIM(z, nd - 1);
    const npy_intp s0 = nd > 1 ? PyArray_STRIDE(z, 0) : 0, s1 = PyArray_STRIDE(z, nd - 1);
    for (npy_intp i = 0; i < m; i++) {
        char *row = (char *)PyArray_DATA(z) + i * s0;
        for (npy_intp j = 0; j < n; j++) {
            npy_float64 *p = (npy_float64 *)(row + j * s1);
            *p = beta == 0 ? (npy_float64)0 : beta * *p;
        }
    }
}

/* Z <- beta Z + alpha X Y in place (Z M x N, X M x K, Y K x N; shapes checked by the
   caller). Z is not read when beta == 0. */
static int graphc_dgemm_into(PyArrayObject *Z, npy_float64 alpha, PyArrayObject *X, PyArrayObject *Y,
                             npy_float64 beta) {
    const npy_intp M = PyArray_DIM(Z, 0), N = PyArray_DIM(Z, 1), K = PyArray_DIM(X, 1);
    if (M == 0 || N == 0) return 0;
    if (K == 0) {
        graphc_dscale(Z, beta);
        return 0;
    }
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gemm: dimension too large for BLAS");
        return -1;
    }
    graphc_fmat fx, fy, fz;
    int rc = -1;
    PyArrayObject *Xc, *Yc, *Zc = NULL;
    Xc = graphc_maybe_copy(X, graphc_fmat_of(X, &fx) < 0 || graphc_overlap(X, Z));
    Yc = graphc_maybe_copy(Y, graphc_fmat_of(Y, &fy) < 0 || graphc_overlap(Y, Z));
    if (Xc == NULL || Yc == NULL) goto done;
    graphc_fmat_of(Xc, &fx);
    graphc_fmat_of(Yc, &fy);
    if (graphc_fmat_of(Z, &fz) < 0) {
        /* strided output: compute in a C-ordered buffer, copy back below */
        Zc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(2, PyArray_DIMS(Z), NPY_FLOAT64, 0)
                       : (PyArrayObject *)PyArray_NewCopy(Z, NPY_CORDER);
        if (Zc == NULL) goto done;
        graphc_fmat_of(Zc, &fz);
    }
    {
        int m = (int)M, n = (int)N, k = (int)K;
        /* let other threads run during big products (only C data is touched below) */
        PyThreadState *ts = (double)M * N * K > 1e6 ? PyEval_SaveThread() : NULL;
        if (fz.trans == 'N') { /* Z column-major: Z = op(X) op(Y) */
            graphc_dgemm(&fx.trans, &fy.trans, &m, &n, &k, &alpha, (npy_float64 *)fx.data, &fx.ld,
                         (npy_float64 *)fy.data, &fy.ld, &beta, (npy_float64 *)fz.data, &fz.ld);
        } else { /* Z row-major, i.e. Z^T column-major: Z^T = Y^T X^T */
            char ta = fy.trans == 'N' ? 'T' : 'N', tb = fx.trans == 'N' ? 'T' : 'N';
            graphc_dgemm(&ta, &tb, &n, &m, &k, &alpha, (npy_float64 *)fy.data, &fy.ld, (npy_float64 *)fx.data,
                         &fx.ld, &beta, (npy_float64 *)fz.data, &fz.ld);
        }
        if (ts != NULL) PyEval_RestoreThread(ts);
    }
    if (Zc != NULL && PyArray_CopyInto(Z, Zc) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(Xc);
    Py_XDECREF(Yc);
    Py_XDECREF(Zc);
    return rc;
}

/* y <- beta y + alpha A x in place (y M, A M x N, x N). y is not read when beta == 0. */
static int graphc_dgemv_into(PyArrayObject *y, npy_float64 alpha, PyArrayObject *A, PyArrayObject *x,
                             npy_float64 beta) {
    const npy_intp M = PyArray_DIM(A, 0), N = PyArray_DIM(A, 1);
    if (M == 0) return 0;
    if (N == 0) {
        graphc_dscale(y, beta);
        return 0;
    }
    if (M > INT_MAX || N > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gemv: dimension too large for BLAS");
        return -1;
    }
    graphc_fmat fa;
    int rc = -1, incx, incy;
    PyArrayObject *Ac, *xc, *yc = NULL;
    Ac = graphc_maybe_copy(A, graphc_fmat_of(A, &fa) < 0 || graphc_overlap(A, y));
    xc = graphc_maybe_copy(x, graphc_inc_of(x) == 0 || graphc_overlap(x, y));
    if (Ac == NULL || xc == NULL) goto done;
    graphc_fmat_of(Ac, &fa);
    incx = graphc_inc_of(xc);
    incy = graphc_inc_of(y);
    if (incy == 0) {
        yc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(1, PyArray_DIMS(y), NPY_FLOAT64, 0)
                       : (PyArrayObject *)PyArray_NewCopy(y, NPY_CORDER);
        if (yc == NULL) goto done;
        incy = 1;
    }
    {
        npy_float64 *yd = (npy_float64 *)PyArray_DATA(yc != NULL ? yc : y), *xd = (npy_float64 *)PyArray_DATA(xc);
        int m = (int)M, n = (int)N;
        if (fa.trans == 'N') {
            char t = 'N';
            graphc_dgemv(&t, &m, &n, &alpha, (npy_float64 *)fa.data, &fa.ld, xd, &incx,
                         &beta, yd, &incy);
        } else { /* row-major A is column-major A^T (N x M) */
            char t = 'T';
            graphc_dgemv(&t, &n, &m, &alpha, (npy_float64 *)fa.data, &fa.ld, xd, &incx,
                         &beta, yd, &incy);
        }
    }
    if (yc != NULL && PyArray_CopyInto(y, yc) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(Ac);
    Py_XDECREF(xc);
    Py_XDECREF(yc);
    return rc;
}

/* a . b for vectors of equal length. */
static int graphc_ddot_vv(PyArrayObject *a, PyArrayObject *b, npy_float64 *out) {
    const npy_intp n = PyArray_DIM(a, 0);
    if (n == 0) {
        *out = 0;
        return 0;
    }
    if (n > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "dot: dimension too large for BLAS");
        return -1;
    }
    PyArrayObject *ac = graphc_maybe_copy(a, graphc_inc_of(a) == 0);
    PyArrayObject *bc = graphc_maybe_copy(b, graphc_inc_of(b) == 0);
    if (ac == NULL || bc == NULL) {
        Py_XDECREF(ac);
        Py_XDECREF(bc);
        return -1;
    }
    int nn = (int)n, ia = graphc_inc_of(ac), ib = graphc_inc_of(bc);
    *out = graphc_ddot(&nn, (npy_float64 *)PyArray_DATA(ac), &ia, (npy_float64 *)PyArray_DATA(bc), &ib);
    Py_DECREF(ac);
    Py_DECREF(bc);
    return 0;
}

#ifdef GRAPHC_HAVE_MVEC
/* libmvec's SIMD variants (exp with config.c_vecmath off), so the `omp simd` loops
   below vectorize */
__attribute__((simd("notinbranch"))) double exp(double);
__attribute__((simd("notinbranch"))) float expf(float);
#endif
/* A new reference to `a` as a C-contiguous aligned array (a copy only when needed). */
static PyArrayObject *graphc_carray(PyArrayObject *a) {
    return (PyArrayObject *)PyArray_FROM_OF((PyObject *)a,
                                            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
}

/* ---- graphc vector math, double (graphc/linker/c/vecmath.py) ---- */
static inline npy_int64 gcvm_bits_f64(double x) { npy_int64 i; memcpy(&i, &x, 8); return i; }
static inline double gcvm_double(npy_int64 i) { double x; memcpy(&x, &i, 8); return x; }
#define GCVM_SHIFT64 0x1.8p52
#define GCVM_LN2HI64 0x1.62e42fefa3800p-1 /* n * LN2HI is exact for |n| < 2^11 */
#define GCVM_LN2LO64 0x1.ef35793c76730p-45

/* Q(r) = (exp(r) - 1 - r) / r^2 for |r| <= ln2/2, in Estrin's scheme: a short chain of
   dependent operations (the loops are latency-bound with Horner's) */
static inline double gcvm_q_f64(double r) {
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double p01 = fma(0x1.5555555555556p-3, r, 0x1.0000000000001p-1);
    const double p23 = fma(0x1.11111111109b5p-7, r, 0x1.5555555553d68p-5);
    const double p45 = fma(0x1.a01a01a7c2f2cp-13, r, 0x1.6c16c17889f3cp-10);
    const double p67 = fma(0x1.71de0db2eb873p-19, r, 0x1.a019b914881bap-16);
    const double p89 = fma(0x1.af389eea54156p-26, r, 0x1.28917c9f3a495p-22);
    return fma(p89, r8, fma(fma(p67, r2, p45), r4, fma(p23, r2, p01)));
}

/* x = k*ln2 + r + rc (rc: the rounding error of r), k = rint(x/ln2) = n */
static inline double gcvm_reduce_f64(double x, npy_int64 *n, double *rc) {
    double k = fma(x, 0x1.71547652b82fep+0, GCVM_SHIFT64);
    *n = gcvm_bits_f64(k) - gcvm_bits_f64(GCVM_SHIFT64);
    k -= GCVM_SHIFT64;
    const double rh = fma(-k, GCVM_LN2HI64, x); /* exact */
    const double r = fma(-k, GCVM_LN2LO64, rh);
    *rc = fma(-k, GCVM_LN2LO64, rh - r);
    return r;
}

static inline double gc_vm_exp_npy_float64(double x) {
    double rc;
    npy_int64 n;
    const double r = gcvm_reduce_f64(x, &n, &rc);
    const double p = 1.0 + (r + fma(r * r, gcvm_q_f64(r), rc));
    /* 2^n as 2^h * 2^(n-h), h = n/2: both normal for n in [-1076, 1024], and the second
       product rounds once into the subnormals (or overflows to inf) */
    const npy_int64 h = n >> 1;
    const double y = (p * gcvm_double((h + 1023) << 52)) * gcvm_double((n - h + 1023) << 52);
    /* past these the result is +inf or +0 (and what was computed is meaningless); a NaN
       fails both compares and has made y a NaN */
    const double z = x > 710.0 ? INFINITY : y;
    return x < -746.0 ? 0.0 : z;
}

/* expm1 for x in [-60, 709.8] (no special values); garbage outside. */
static inline double gcvm_expm1_core_f64(double x) {
    double rc;
    npy_int64 n;
    const double r = gcvm_reduce_f64(x, &n, &rc);
    const double tail = fma(r * r, gcvm_q_f64(r), rc);
    const npy_int64 m = n > 1023 ? 1023 : n;
    const double s = gcvm_double((m + 1023) << 52);
    const double y = fma(s, tail, fma(s, r, s - 1.0));
    return n > 1023 ? y * 2.0 : y;
}

static inline double gc_vm_expm1_npy_float64(double x) {
    const double y = gcvm_expm1_core_f64(x);
    const double z = x > 710.0 ? INFINITY : (x < -60.0 ? -1.0 : y);
    return fabs(x) < 0x1p-54 ? x : z; /* keeps -0.0 and the subnormals exact */
}

/* log(1+f) - f + f*f/2 ... : the log's polynomial part, P(z) for z = s*s (Horner) */
static inline double gcvm_p_f64(double z) {
    double p = fma(0x1.2b5900de53b32p-3, z, 0x1.39fe51a7c18f9p-3);
    p = fma(p, z, 0x1.7462b51cb66b1p-3);
    p = fma(p, z, 0x1.c71c62e3f11e6p-3);
    p = fma(p, z, 0x1.2492492df281ap-2);
    p = fma(p, z, 0x1.99999999952d7p-2);
    return fma(p, z, 0x1.5555555555558p-1);
}

/* k*ln2 + log(1+f) + c, f in [sqrt(2)/2 - 1, sqrt(2) - 1] (fdlibm's summation order) */
static inline double gcvm_log_sum_f64(double dk, double f, double c) {
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double hfsq = 0.5 * f * f;
    const double w = fma(s, fma(z, gcvm_p_f64(z), hfsq), fma(dk, GCVM_LN2LO64, c));
    return fma(dk, GCVM_LN2HI64, -((hfsq - w) - f));
}

/* x = 2^k * m, m in [sqrt(2)/2, sqrt(2)), for positive normal x */
static inline double gcvm_split_f64(double x, npy_int64 *k) {
    const npy_int64 t = gcvm_bits_f64(x) - 0x3fe6a09e667f3bcdLL;
    *k = t >> 52;
    return gcvm_double((t & 0x000fffffffffffffLL) + 0x3fe6a09e667f3bcdLL);
}

static inline double gc_vm_log_npy_float64(double x) {
    /* Only constants and variables are selected: gcc does not if-convert a
       floating-point operation (it may trap) that one arm of a ?: would evaluate. */
    const int sub = x < 0x1p-1022;
    npy_int64 k;
    const double m = gcvm_split_f64(x * (sub ? 0x1p54 : 1.0), &k);
    double y = gcvm_log_sum_f64((double)(k - (sub ? 54 : 0)), m - 1.0, 0.0);
    y = x == INFINITY ? x : y;
    y = x == 0.0 ? -INFINITY : y;
    y = x < 0.0 ? NAN : y;
    return x != x ? x : y;
}

/* log1p for finite x > -1 (no special values) */
static inline double gcvm_log1p_core_f64(double x) {
    const double u = 1.0 + x;
    npy_int64 k;
    const double m = gcvm_split_f64(u, &k);
    /* the part of x that 1 + x rounded away: x - (u - 1) for x < 1, 1 - (u - x) else
       (both exact), relative to u */
    const double c = ((x < 1.0 ? x : 1.0) - (u - (x < 1.0 ? 1.0 : x))) / u;
    /* x in (sqrt(2)/2 - 1, sqrt(2) - 1): log(1+f) with f = x itself, k = 0, c = 0 (one
       compare: gcc vectorizes selects on one mask more reliably than on a & of two) */
    const int small = fabs(x - 0x1.f0ed99bed9b2ep-5) < 0x1.6a09e667f3bcdp-2;
    return gcvm_log_sum_f64(small ? 0.0 : (double)k, small ? x : m - 1.0, small ? 0.0 : c);
}

static inline double gc_vm_log1p_npy_float64(double x) {
    const double y = gcvm_log1p_core_f64(x);
    double r = x == INFINITY ? x : y;
    r = x == -1.0 ? -INFINITY : r;
    r = x < -1.0 ? NAN : r;
    r = x != x ? x : r;
    return fabs(x) < 0x1p-54 ? x : r;
}

static inline double gc_vm_tanh_npy_float64(double x) {
    const double ax = fabs(x);
    const double a = 2.0 * (ax > 22.0 ? 22.0 : ax); /* tanh rounds to 1 past 22; NaN passes */
    double rc;
    npy_int64 n;
    const double r = gcvm_reduce_f64(a, &n, &rc); /* n in [0, 64] */
    const double s = gcvm_double((n + 1023) << 52);
    /* e = expm1(a) = (s - 1) + s*r + s*(r*r*Q(r) + rc), the rounding error of the first
       sum (tl) carried into the second: e is rounded once */
    const double t = fma(s, r, s - 1.0);
    const double tl = fma(s, r, (s - 1.0) - t);
    const double u = fma(s, fma(r * r, gcvm_q_f64(r), rc), tl);
    const double e = t + u, el = u - (e - t); /* e + el: expm1(a), e without its rounding */
    /* tanh = (e + el) / (e + el + 2): the sum as d + dl, the quotient q = e * (1/d)
       corrected by its residual (e + el) - q*(d + dl): rounding errors of the sum, the
       reciprocal and the product do not add up */
    const double d = e + 2.0;
    const double dl = (e - (d - 2.0)) + el; /* exact for e <= 2; past that (tanh > 0.76)
                                               an error small enough for a correction */
    const double w = 1.0 / d;
    const double q = e * w;
    const double res = fma(-q, dl, fma(-q, d, e) + el);
    return copysign(fma(res, w, q), x);
}

static inline double gc_vm_sigmoid_npy_float64(double x) {
    const double e = gc_vm_exp_npy_float64(-fabs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}

static inline double gc_vm_softplus_npy_float64(double x) {
    return (x > 0.0 ? x : 0.0) + gcvm_log1p_core_f64(gc_vm_exp_npy_float64(-fabs(x)));
}

/* ---- graphc vector math, float (graphc/linker/c/vecmath.py) ---- */
static inline npy_int32 gcvm_bits_f32(float x) { npy_int32 i; memcpy(&i, &x, 4); return i; }
static inline float gcvm_float(npy_int32 i) { float x; memcpy(&x, &i, 4); return x; }
#define GCVM_SHIFT32 0x1.8p23f
#define GCVM_LN2HI32 0x1.62e4p-1f /* n * LN2HI is exact for |n| < 2^10 */
#define GCVM_LN2LO32 0x1.7f7d1cp-20f

static inline float gcvm_q_f32(float r) {
    const float r2 = r * r;
    const float p01 = fmaf(0x1.5554dep-3f, r, 0x1p-1f);
    const float p23 = fmaf(0x1.120b62p-7f, r, 0x1.55551ap-5f);
    return fmaf(fmaf(0x1.6d10fcp-10f, r2, p23), r2, p01);
}

static inline float gcvm_reduce_f32(float x, npy_int32 *n, float *rc) {
    float k = fmaf(x, 0x1.715476p+0f, GCVM_SHIFT32);
    *n = gcvm_bits_f32(k) - gcvm_bits_f32(GCVM_SHIFT32);
    k -= GCVM_SHIFT32;
    const float rh = fmaf(-k, GCVM_LN2HI32, x);
    const float r = fmaf(-k, GCVM_LN2LO32, rh);
    *rc = fmaf(-k, GCVM_LN2LO32, rh - r);
    return r;
}

static inline float gc_vm_exp_npy_float32(float x) {
    float rc;
    npy_int32 n;
    const float r = gcvm_reduce_f32(x, &n, &rc);
    const float p = 1.0f + (r + fmaf(r * r, gcvm_q_f32(r), rc));
    const npy_int32 h = n >> 1;
    const float y = (p * gcvm_float((h + 127) << 23)) * gcvm_float((n - h + 127) << 23);
    const float z = x > 89.0f ? INFINITY : y;
    return x < -104.0f ? 0.0f : z;
}

static inline float gcvm_expm1_core_f32(float x) {
    float rc;
    npy_int32 n;
    const float r = gcvm_reduce_f32(x, &n, &rc);
    const float tail = fmaf(r * r, gcvm_q_f32(r), rc);
    const npy_int32 m = n > 127 ? 127 : n;
    const float s = gcvm_float((m + 127) << 23);
    const float y = fmaf(s, tail, fmaf(s, r, s - 1.0f));
    return n > 127 ? y * 2.0f : y;
}

static inline float gc_vm_expm1_npy_float32(float x) {
    const float y = gcvm_expm1_core_f32(x);
    const float z = x > 89.0f ? INFINITY : (x < -30.0f ? -1.0f : y);
    return fabsf(x) < 0x1p-25f ? x : z;
}

static inline float gcvm_log_sum_f32(float dk, float f, float c) {
    const float s = f / (2.0f + f);
    const float z = s * s;
    const float hfsq = 0.5f * f * f;
    const float p = fmaf(fmaf(0x1.2ee656p-2f, z, 0x1.997c2ep-2f), z, 0x1.55555cp-1f);
    const float w = fmaf(s, fmaf(z, p, hfsq), fmaf(dk, GCVM_LN2LO32, c));
    return fmaf(dk, GCVM_LN2HI32, -((hfsq - w) - f));
}

static inline float gcvm_split_f32(float x, npy_int32 *k) {
    const npy_int32 t = gcvm_bits_f32(x) - 0x3f3504f3;
    *k = t >> 23;
    return gcvm_float((t & 0x007fffff) + 0x3f3504f3);
}

static inline float gc_vm_log_npy_float32(float x) {
    const int sub = x < 0x1p-126f;
    npy_int32 k;
    const float m = gcvm_split_f32(x * (sub ? 0x1p25f : 1.0f), &k);
    float y = gcvm_log_sum_f32((float)(k - (sub ? 25 : 0)), m - 1.0f, 0.0f);
    y = x == INFINITY ? x : y;
    y = x == 0.0f ? -INFINITY : y;
    y = x < 0.0f ? NAN : y;
    return x != x ? x : y;
}

static inline float gcvm_log1p_core_f32(float x) {
    const float u = 1.0f + x;
    npy_int32 k;
    const float m = gcvm_split_f32(u, &k);
    const float c = ((x < 1.0f ? x : 1.0f) - (u - (x < 1.0f ? 1.0f : x))) / u;
    const int small = fabsf(x - 0x1.f0ed9ap-5f) < 0x1.6a09e6p-2f;
    return gcvm_log_sum_f32(small ? 0.0f : (float)k, small ? x : m - 1.0f, small ? 0.0f : c);
}

static inline float gc_vm_log1p_npy_float32(float x) {
    const float y = gcvm_log1p_core_f32(x);
    float r = x == INFINITY ? x : y;
    r = x == -1.0f ? -INFINITY : r;
    r = x < -1.0f ? NAN : r;
    r = x != x ? x : r;
    return fabsf(x) < 0x1p-25f ? x : r;
}

static inline float gc_vm_tanh_npy_float32(float x) {
    const float ax = fabsf(x);
    const float a = 2.0f * (ax > 10.0f ? 10.0f : ax);
    float rc;
    npy_int32 n;
    const float r = gcvm_reduce_f32(a, &n, &rc); /* n in [0, 29] */
    const float s = gcvm_float((n + 127) << 23);
    const float t = fmaf(s, r, s - 1.0f);
    const float tl = fmaf(s, r, (s - 1.0f) - t);
    const float e = t + fmaf(s, fmaf(r * r, gcvm_q_f32(r), rc), tl);
    /* one division, without double's correction of the quotient: here it would cost as
       much per vector as in double for twice the lanes (tanh 1.6x slower) */
    return copysignf(e / (e + 2.0f), x);
}

static inline float gc_vm_sigmoid_npy_float32(float x) {
    const float e = gc_vm_exp_npy_float32(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

static inline float gc_vm_softplus_npy_float32(float x) {
    return (x > 0.0f ? x : 0.0f) + gcvm_log1p_core_f32(gc_vm_exp_npy_float32(-fabsf(x)));
}

/* softmax (take_log 0) or log-softmax (take_log 1) of the contiguous row x[0..n) into y. */
static void graphc_softmax_row_f64(const npy_float64 *x, npy_float64 *y, npy_intp n, int take_log) {
    npy_float64 m = x[0];
#pragma omp simd reduction(max : m)
    for (npy_intp j = 1; j < n; j++) m = x[j] > m ? x[j] : m;
    if (take_log) {
        if (!isfinite(m)) m = 0;
        npy_float64 s = 0;
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) s += gc_vm_exp_npy_float64(x[j] - m);
        const npy_float64 ls = log(s);
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = (x[j] - m) - ls;
    } else {
        npy_float64 s = 0;
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) {
            y[j] = gc_vm_exp_npy_float64(x[j] - m);
            s += y[j];
        }
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = y[j] / s;
    }
}

/* The same over the middle axis of a C-ordered (outer, n, inner) block, inner > 1:
   the loops run along `inner` (contiguous). `buf` holds 2 * inner scratch values. */
static void graphc_softmax_block_f64(const npy_float64 *x, npy_float64 *y, npy_intp n, npy_intp inner,
                                     int take_log, npy_float64 *buf) {
    npy_float64 *m = buf, *s = buf + inner;
    for (npy_intp k = 0; k < inner; k++) {
        m[k] = x[k];
        s[k] = 0;
    }
    for (npy_intp j = 1; j < n; j++)
        for (npy_intp k = 0; k < inner; k++) {
            const npy_float64 v = x[j * inner + k];
            m[k] = v > m[k] ? v : m[k];
        }
    if (take_log)
        for (npy_intp k = 0; k < inner; k++) m[k] = isfinite(m[k]) ? m[k] : 0;
    for (npy_intp j = 0; j < n; j++)
#pragma omp simd
        for (npy_intp k = 0; k < inner; k++) {
            npy_float64 e = gc_vm_exp_npy_float64(x[j * inner + k] - m[k]);
            s[k] += e;
            if (!take_log) y[j * inner + k] = e;
        }
    if (take_log) {
        for (npy_intp k = 0; k < inner; k++) s[k] = log(s[k]);
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++)
                y[j * inner + k] = (x[j * inner + k] - m[k]) - s[k];
    } else {
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++) y[j * inner + k] = y[j * inner + k] / s[k];
    }
}

/* (log-)softmax of `a` along `axis` into a new (or reused) output slot. */
static int graphc_softmax_f64(PyArrayObject *a, int axis, int take_log, PyObject **slot) {
    const int nd = PyArray_NDIM(a);
    PyArrayObject *x = graphc_carray(a);
    if (x == NULL) return -1;
    PyArrayObject *out = graphc_out_array(slot, nd, PyArray_DIMS(a), NPY_FLOAT64);
    if (out == NULL) {
        Py_DECREF(x);
        return -1;
    }
    npy_intp outer = 1, inner = 1, n = PyArray_DIM(a, axis);
    for (int k = 0; k < axis; k++) outer *= PyArray_DIM(a, k);
    for (int k = axis + 1; k < nd; k++) inner *= PyArray_DIM(a, k);
    const npy_float64 *xd = (const npy_float64 *)PyArray_DATA(x);
    npy_float64 *yd = (npy_float64 *)PyArray_DATA(out);
    if (n > 0 && inner == 1) {
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_row_f64(xd + o * n, yd + o * n, n, take_log);
    } else if (n > 0 && inner > 0 && outer > 0) {
        npy_float64 *buf = PyMem_Malloc(2 * inner * sizeof(npy_float64));
        if (buf == NULL) {
            Py_DECREF(x);
            Py_DECREF(out);
            PyErr_NoMemory();
            return -1;
        }
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_block_f64(xd + o * n * inner, yd + o * n * inner, n, inner, take_log,
                                     buf);
        PyMem_Free(buf);
    }
    Py_DECREF(x);
    Py_XSETREF(*slot, (PyObject *)out);
    return 0;
}

static int thunk_0_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyArrayObject *i2 = (PyArrayObject *)inputs[2]; (void)i2;
    PyArrayObject *i3 = (PyArrayObject *)inputs[3]; (void)i3;
    PyArrayObject *i4 = (PyArrayObject *)inputs[4]; (void)i4;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i2) != NPY_FLOAT64 || PyArray_NDIM(i2) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i3) != NPY_FLOAT64 || PyArray_NDIM(i3) != 2) {
        PyErr_SetString(PyExc_TypeError, "Gemm{no_inplace}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i2, 1) != PyArray_DIM(i3, 0) || PyArray_DIM(i0, 0) != PyArray_DIM(i2, 0) || PyArray_DIM(i0, 1) != PyArray_DIM(i3, 1)) {
        PyObject *s0 = graphc_shape_tuple(i0), *s2 = graphc_shape_tuple(i2);
        PyObject *s3 = graphc_shape_tuple(i3);
        if (s0 && s2 && s3) PyErr_Format(PyExc_ValueError, "Gemm{no_inplace}: shape mismatch Z %R, X %R, Y %R", s0, s2, s3);
        Py_XDECREF(s0);
        Py_XDECREF(s2);
        Py_XDECREF(s3);
        FAIL;
    }
    double alpha_d;
    if (graphc_as_double(i1, &alpha_d) < 0) FAIL;
    const npy_float64 alpha = (npy_float64)alpha_d;
    double beta_d;
    if (graphc_as_double(i4, &beta_d) < 0) FAIL;
    const npy_float64 beta = (npy_float64)beta_d;
    PyArrayObject *out = graphc_out_array(o0, 2, PyArray_DIMS(i0), NPY_FLOAT64);
    if (out == NULL) FAIL;
    if ((beta != 0 && PyArray_CopyInto(out, i0) < 0) ||
        graphc_dgemm_into(out, alpha, i2, i3, beta) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_0_in[] = {{2, 12}, {0, 12}, {2, 12}, {2, 12}, {0, 12}};
static int thunk_0(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_0_run, thunk_0_in, 5, "Gemm{no_inplace}",
                          params, inputs, outputs);
}

static int thunk_1_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Dot22: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_FLOAT64 || PyArray_NDIM(i1) != 2) {
        PyErr_SetString(PyExc_TypeError, "Dot22: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i0, 1) != PyArray_DIM(i1, 0)) {
        PyArrayObject *ab[2] = {i0, i1};
        graphc_shape_error(PyExc_ValueError, "Dot22: shapes not aligned: ", 2, ab);
        FAIL;
    }
    npy_intp dims[2] = {PyArray_DIM(i0, 0), PyArray_DIM(i1, 1)};
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (graphc_dgemm_into(out, 1, i0, i1, 0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_1_in[] = {{2, 12}, {2, 12}};
static int thunk_1(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_1_run, thunk_1_in, 2, "Dot22",
                          params, inputs, outputs);
}

static int thunk_2_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "dot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_FLOAT64 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "dot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_DIM(i0, 1) != PyArray_DIM(i1, 0)) {
        PyArrayObject *ab[2] = {i0, i1};
        graphc_shape_error(PyExc_ValueError, "dot: shapes not aligned: ", 2, ab);
        FAIL;
    }
    npy_intp dims[1] = {PyArray_DIM(i0, 0)};
    PyArrayObject *out = graphc_out_array(o0, 1, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (graphc_dgemv_into(out, 1, i0, i1, 0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_2_in[] = {{2, 12}, {1, 12}};
static int thunk_2(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_2_run, thunk_2_in, 2, "dot",
                          params, inputs, outputs);
}

static int thunk_3_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "Softmax{axis=1}: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (graphc_softmax_f64(i0, 1, 0, o0) < 0) FAIL;

    }
    return 0;
}
static const graphc_in_spec thunk_3_in[] = {{2, 12}};
static int thunk_3(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_3_run, thunk_3_in, 1, "Softmax{axis=1}",
                          params, inputs, outputs);
}

static int thunk_4_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    PyObject **o1 = &outputs[1]; (void)o1;
    {

    if (PyArray_TYPE(i0) != NPY_FLOAT64 || PyArray_NDIM(i0) != 2) {
        PyErr_SetString(PyExc_TypeError, "CrossentropySoftmax1Hot: operand of an unexpected dtype or ndim");
        FAIL;
    }
    if (PyArray_TYPE(i1) != NPY_INT32 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "CrossentropySoftmax1Hot: class indices of an unexpected dtype");
        FAIL;
    }
    PyArrayObject *yv = i1;
    const npy_intp rows = PyArray_DIM(i0, 0), cols = PyArray_DIM(i0, 1);
    if (PyArray_DIM(yv, 0) != rows) {
        PyErr_Format(PyExc_ValueError, "CrossentropySoftmax1Hot: %zd rows but %zd class indices",
                     (Py_ssize_t)rows, (Py_ssize_t)PyArray_DIM(yv, 0));
        FAIL;
    }
    const npy_intp ys = PyArray_STRIDE(yv, 0);
    const char *yp = PyArray_DATA(yv);
    for (npy_intp i = 0; i < rows; i++) {
        npy_int32 c = *(const npy_int32 *)(yp + i * ys);
        if (!(c >= 0 && (npy_uint64)c < (npy_uint64)cols)) {
            PyErr_Format(PyExc_IndexError, "CrossentropySoftmax1Hot: class index out of range [0, %zd)",
                         (Py_ssize_t)cols);
            FAIL;
        }
    }
    if (cols == 0 && rows > 0) {
        PyErr_SetString(PyExc_IndexError, "CrossentropySoftmax1Hot: no classes");
        FAIL;
    }
    /* log-softmax rows into the sm slot, then nll = -lsm[y] and sm = exp(lsm) */
    if (graphc_softmax_f64(i0, 1, 1, o1) < 0) FAIL;
    PyArrayObject *sm = (PyArrayObject *)*o1;
    npy_intp nr = rows;
    PyArrayObject *nll = graphc_out_array(o0, 1, &nr, NPY_FLOAT64);
    if (nll == NULL) FAIL;
    npy_float64 *s = (npy_float64 *)PyArray_DATA(sm);
    npy_float64 *l = (npy_float64 *)PyArray_DATA(nll);
    for (npy_intp i = 0; i < rows; i++) {
        npy_float64 *row = s + i * cols;
        l[i] = -row[(npy_intp)*(const npy_int32 *)(yp + i * ys)];
#pragma omp simd
        for (npy_intp j = 0; j < cols; j++) row[j] = gc_vm_exp_npy_float64(row[j]);
    }
    Py_XSETREF(*o0, (PyObject *)nll);

    }
    return 0;
}
static const graphc_in_spec thunk_4_in[] = {{2, 12}, {1, 5}};
static int thunk_4(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_4_run, thunk_4_in, 2, "CrossentropySoftmax1Hot",
                          params, inputs, outputs);
}

static int graphc_module_init(void) {
    if (graphc_blas_load() < 0) FAIL;
    return 0;
}

static PyObject *graphc_thunks(PyObject *self, PyObject *noargs) {
    (void)self; (void)noargs;
    PyObject *c, *t = PyTuple_New(5);
    if (!t) return NULL;
    if (!(c = PyCapsule_New((void *)&thunk_0, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 0, c);
    if (!(c = PyCapsule_New((void *)&thunk_1, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 1, c);
    if (!(c = PyCapsule_New((void *)&thunk_2, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 2, c);
    if (!(c = PyCapsule_New((void *)&thunk_3, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 3, c);
    if (!(c = PyCapsule_New((void *)&thunk_4, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 4, c);
    return t;
fail:
    Py_DECREF(t);
    return NULL;
}

static PyMethodDef graphc_methods[] = {
    {"thunks", graphc_thunks, METH_NOARGS, "The thunks as graphc.thunk capsules."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef graphc_module = {
    PyModuleDef_HEAD_INIT, "graphc_cthunks", NULL, -1, graphc_methods
};

PyMODINIT_FUNC GRAPHC_INIT(void) {
    import_array();
    if (graphc_module_init() < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "graphc: C module initialisation failed");
        return NULL;
    }
    return PyModule_Create(&graphc_module);
}
