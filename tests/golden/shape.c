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

#ifdef GRAPHC_HAVE_MVEC
__attribute__((simd("notinbranch"))) double acos(double);
__attribute__((simd("notinbranch"))) float acosf(float);
__attribute__((simd("notinbranch"))) double asin(double);
__attribute__((simd("notinbranch"))) float asinf(float);
__attribute__((simd("notinbranch"))) double atan(double);
__attribute__((simd("notinbranch"))) float atanf(float);
__attribute__((simd("notinbranch"))) double cbrt(double);
__attribute__((simd("notinbranch"))) float cbrtf(float);
__attribute__((simd("notinbranch"))) double cos(double);
__attribute__((simd("notinbranch"))) float cosf(float);
__attribute__((simd("notinbranch"))) double cosh(double);
__attribute__((simd("notinbranch"))) float coshf(float);
__attribute__((simd("notinbranch"))) double erf(double);
__attribute__((simd("notinbranch"))) float erff(float);
__attribute__((simd("notinbranch"))) double erfc(double);
__attribute__((simd("notinbranch"))) float erfcf(float);
__attribute__((simd("notinbranch"))) double exp(double);
__attribute__((simd("notinbranch"))) float expf(float);
__attribute__((simd("notinbranch"))) double exp10(double);
__attribute__((simd("notinbranch"))) float exp10f(float);
__attribute__((simd("notinbranch"))) double exp2(double);
__attribute__((simd("notinbranch"))) float exp2f(float);
__attribute__((simd("notinbranch"))) double expm1(double);
__attribute__((simd("notinbranch"))) float expm1f(float);
__attribute__((simd("notinbranch"))) double log(double);
__attribute__((simd("notinbranch"))) float logf(float);
__attribute__((simd("notinbranch"))) double log10(double);
__attribute__((simd("notinbranch"))) float log10f(float);
__attribute__((simd("notinbranch"))) double log1p(double);
__attribute__((simd("notinbranch"))) float log1pf(float);
__attribute__((simd("notinbranch"))) double log2(double);
__attribute__((simd("notinbranch"))) float log2f(float);
__attribute__((simd("notinbranch"))) double sin(double);
__attribute__((simd("notinbranch"))) float sinf(float);
__attribute__((simd("notinbranch"))) double sinh(double);
__attribute__((simd("notinbranch"))) float sinhf(float);
__attribute__((simd("notinbranch"))) double tan(double);
__attribute__((simd("notinbranch"))) float tanf(float);
__attribute__((simd("notinbranch"))) double tanh(double);
__attribute__((simd("notinbranch"))) float tanhf(float);
__attribute__((simd("notinbranch"))) double acosh(double);
__attribute__((simd("notinbranch"))) float acoshf(float);
__attribute__((simd("notinbranch"))) double asinh(double);
__attribute__((simd("notinbranch"))) float asinhf(float);
__attribute__((simd("notinbranch"))) double atanh(double);
__attribute__((simd("notinbranch"))) float atanhf(float);
__attribute__((simd("notinbranch"))) double pow(double, double);
__attribute__((simd("notinbranch"))) float powf(float, float);
__attribute__((simd("notinbranch"))) double atan2(double, double);
__attribute__((simd("notinbranch"))) float atan2f(float, float);
__attribute__((simd("notinbranch"))) double hypot(double, double);
__attribute__((simd("notinbranch"))) float hypotf(float, float);
#endif

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
GC_DEF_INT(npy_int8)
GC_DEF_INT(npy_int16)
GC_DEF_INT(npy_int32)
GC_DEF_INT(npy_int64)
GC_DEF_INT(npy_uint8)
GC_DEF_INT(npy_uint16)
GC_DEF_INT(npy_uint32)
GC_DEF_INT(npy_uint64)
GC_DEF_INT(npy_bool)
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

static void gc_ew_14dc6f367924_c(npy_intp n, char **p) {
    const npy_int32 *q0 = (const npy_int32 *)p[0];
    npy_int64 *q1 = (npy_int64 *)p[1];
#pragma omp simd
    for (npy_intp i = 0; i < n; i++) {
        const npy_int32 x0 = q0[i];
        q1[i] = (npy_int64)(((npy_int64)x0));
    }
}
static void gc_ew_14dc6f367924_s(npy_intp n, char **p, const npy_intp *s) {
    for (npy_intp i = 0; i < n; i++) {
        const npy_int32 x0 = *(const npy_int32 *)(p[0] + i * s[0]);
        *(npy_int64 *)(p[1] + i * s[1]) = (npy_int64)(((npy_int64)x0));
    }
}

static int thunk_0_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    npy_intp n = 2;
    PyArrayObject *out = graphc_out_array(o0, 1, &n, NPY_INT64);
    if (out == NULL) FAIL;
    for (int k = 0; k < 2; k++)
        ((npy_int64 *)PyArray_DATA(out))[k] = PyArray_DIM(i0, k);
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_0_in[] = {{2, 12}};
static int thunk_0(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_0_run, thunk_0_in, 1, "Shape",
                          params, inputs, outputs);
}

static int thunk_1_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyObject **o0 = &outputs[0]; (void)o0;
    {
    npy_intp dims[1], strides[1];
    char *data = PyArray_DATA(i0);
    npy_intp v, start, stop, step;
    int d = 0;
    { /* axis 0: 0 */
    const npy_intp n = PyArray_DIM(i0, 0), s = PyArray_STRIDE(i0, 0);
    v = 0;
    if (v < -n || v >= n) {
        PyErr_Format(PyExc_IndexError,
                     "Subtensor{0}: index %zd is out of bounds for axis 0 with size %zd",
                     (Py_ssize_t)v, (Py_ssize_t)n);
        FAIL;
    }
    data += (v < 0 ? v + n : v) * s;
    }
    for (int k = 1; k < 1; k++, d++) {
        dims[d] = PyArray_DIM(i0, k);
        strides[d] = PyArray_STRIDE(i0, k);
    }
    PyArray_Descr *descr = PyArray_DESCR(i0);
    Py_INCREF(descr);
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, descr, 0, dims, strides, data,
                                         PyArray_FLAGS(i0) & NPY_ARRAY_WRITEABLE, NULL);
    if (out == NULL) FAIL;
    Py_INCREF(i0);
    if (PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)i0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, out);
    }
    return 0;
}
static const graphc_in_spec thunk_1_in[] = {{1, 7}};
static int thunk_1(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_1_run, thunk_1_in, 1, "Subtensor{0}",
                          params, inputs, outputs);
}

static int thunk_2_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyObject **o0 = &outputs[0]; (void)o0;
    {
    const char *name = "Elemwise{convert_to_int64,no_inplace}";
    PyArrayObject *in[1], *tmp[1], *own[1];
    npy_intp shape[1], st[2];
    char *data[2];
    int es[2];
    int rc = -1;
    for (int k = 0; k < 1; k++) tmp[k] = own[k] = NULL;
    if (!(own[0] = in[0] = gc_input(inputs[0], 0, 0, NPY_INT32, name))) goto done;
    if (gc_broadcast(in, 1, 0, shape, name) < 0) goto done;
    if (!PyArray_ISALIGNED(in[0])) {
        if (!(tmp[0] = (PyArrayObject *)PyArray_NewCopy(in[0], NPY_CORDER))) goto done;
        in[0] = tmp[0];
    }
    data[0] = PyArray_BYTES(in[0]); es[0] = 4;
    gc_strides(in[0], 0, &st[0]);
    { PyArrayObject *a = gc_prepare_output(o0, 0, shape, NPY_INT64);
      if (a == NULL) goto done;
      data[1] = PyArray_BYTES(a); es[1] = 8; gc_strides(a, 0, &st[1]); }
    gc_ew_loop(2, 1, 0, shape, data, st, es, gc_ew_14dc6f367924_c, gc_ew_14dc6f367924_s);
    rc = 0;
done:
    Py_XDECREF(tmp[0]); Py_XDECREF(own[0]);
    if (rc < 0) FAIL;
    }
    return 0;
}
static const graphc_in_spec thunk_2_in[] = {{0, 5}};
static int thunk_2(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_2_run, thunk_2_in, 1, "Elemwise{convert_to_int64,no_inplace}",
                          params, inputs, outputs);
}

static int thunk_3_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyArrayObject *i2 = (PyArrayObject *)inputs[2]; (void)i2;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    npy_intp dims[2];
    if (graphc_as_intp((PyArrayObject *)inputs[1], &dims[0]) < 0) FAIL;
    if (graphc_as_intp((PyArrayObject *)inputs[2], &dims[1]) < 0) FAIL;
    for (int k = 0; k < 2; k++) {
        if (dims[k] < 0) {
            PyErr_SetString(PyExc_ValueError, "Alloc: negative dimensions are not allowed");
            FAIL;
        }
    }
    if (PyArray_TYPE(i0) != NPY_FLOAT64) {
        PyErr_SetString(PyExc_TypeError, "Alloc: unexpected value dtype");
        FAIL;
    }
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    if (PyArray_SIZE(i0) == 1 && PyArray_NDIM(i0) <= 2) {
        /* a scalar value: fill without numpy's broadcasting machinery */
        const npy_float64 v = *(const npy_float64 *)PyArray_DATA(i0);
        npy_float64 *d = (npy_float64 *)PyArray_DATA(out);
        const npy_intp n = PyArray_SIZE(out);
        for (npy_intp k = 0; k < n; k++) d[k] = v;
    } else if (PyArray_CopyInto(out, i0) < 0) {
        Py_DECREF(out);
        PyObject *t = PyTuple_New(2);
        if (t != NULL) {
            for (int k = 0; k < 2; k++)
                PyTuple_SET_ITEM(t, k, PyLong_FromSsize_t(dims[k]));
            PyObject *vs = graphc_shape_tuple(i0);
            if (vs != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "Alloc: cannot broadcast a value of shape %R to %R", vs, t);
                Py_DECREF(vs);
            }
            Py_DECREF(t);
        }
        FAIL;
    }
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_3_in[] = {{0, 12}, {0, 7}, {0, 7}};
static int thunk_3(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_3_run, thunk_3_in, 3, "Alloc",
                          params, inputs, outputs);
}

static int thunk_4_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    if (PyArray_TYPE(i1) != NPY_INT64 || PyArray_NDIM(i1) != 1) {
        PyErr_SetString(PyExc_TypeError, "Reshape{2}: the shape must be an int64 vector");
        FAIL;
    }
    if (PyArray_SIZE(i1) != 2) {
        PyErr_Format(PyExc_ValueError, "Reshape{2}: got a shape with %zd entries",
                     (Py_ssize_t)PyArray_SIZE(i1));
        FAIL;
    }
    npy_intp dims[2];
    int unknown = -1, bad = 0;
    npy_intp known = 1, total = PyArray_SIZE(i0);
    for (int k = 0; k < 2; k++) {
        npy_int64 v = *(npy_int64 *)PyArray_GETPTR1(i1, k);
        dims[k] = (npy_intp)v;
        if (v == -1 && unknown < 0) unknown = k;
        else if (v < 0) bad = 1;
        else known *= (npy_intp)v;
    }
    if (!bad && unknown >= 0) {
        if (known == 0 || total % known) bad = 1;
        else dims[unknown] = total / known;
    } else if (!bad && known != total) {
        bad = 1;
    }
    if (bad) {
        PyObject *want = PyTuple_New(2);
        PyObject *have = graphc_shape_tuple(i0);
        if (want != NULL && have != NULL) {
            for (int k = 0; k < 2; k++)
                PyTuple_SET_ITEM(want, k,
                                 PyLong_FromLongLong(*(npy_int64 *)PyArray_GETPTR1(i1, k)));
            PyErr_Format(PyExc_ValueError,
                         "Reshape{2}: cannot reshape an array of shape %R into %R", have, want);
        }
        Py_XDECREF(want);
        Py_XDECREF(have);
        FAIL;
    }
    PyObject *out;
    if (PyArray_IS_C_CONTIGUOUS(i0)) {
        /* a view sharing the input's buffer; its base is the input */
        PyArray_Descr *descr = PyArray_DESCR(i0);
        Py_INCREF(descr);
        int flags = NPY_ARRAY_C_CONTIGUOUS | (PyArray_FLAGS(i0) &
                    (NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED));
        out = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, NULL,
                                   PyArray_DATA(i0), flags, NULL);
        if (out == NULL) FAIL;
        Py_INCREF(i0);
        if (PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)i0) < 0) {
            Py_DECREF(out);
            FAIL;
        }
    } else {
        PyArray_Dims shp = {dims, 2};
        out = PyArray_Newshape(i0, &shp, NPY_CORDER);  /* numpy: a view when strides allow */
        if (out == NULL) FAIL;
    }
    Py_XSETREF(*o0, out);

    }
    return 0;
}
static const graphc_in_spec thunk_4_in[] = {{2, 12}, {1, 7}};
static int thunk_4(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_4_run, thunk_4_in, 2, "Reshape{2}",
                          params, inputs, outputs);
}

static int thunk_5_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    {

    PyArrayObject *ins[2];
    for (int j = 0; j < 2; j++) ins[j] = (PyArrayObject *)inputs[j];
    npy_intp dims[2];
    for (int k = 0; k < 2; k++) dims[k] = PyArray_DIM(ins[0], k);
    dims[1] = 0;
    for (int j = 0; j < 2; j++) {
        int ok = PyArray_NDIM(ins[j]) == 2 && PyArray_TYPE(ins[j]) == NPY_FLOAT64;
        for (int k = 0; ok && k < 2; k++)
            ok = k == 1 || PyArray_DIM(ins[j], k) == dims[k];
        if (!ok) {
            graphc_shape_error(PyExc_ValueError, "Join{axis=1}: cannot join arrays of shapes ",
                               2, ins);
            FAIL;
        }
        dims[1] += PyArray_DIM(ins[j], 1);
    }
    PyArrayObject *out = graphc_out_array(o0, 2, dims, NPY_FLOAT64);
    if (out == NULL) FAIL;
    const npy_intp es = PyArray_ITEMSIZE(out);
    npy_intp outer = 1, inner = es;  /* rows before the axis; bytes of one output row */
    for (int k = 0; k < 1; k++) outer *= dims[k];
    for (int k = 1; k < 2; k++) inner *= dims[k];
    npy_intp offset = 0;  /* bytes into an output row */
    for (int j = 0; j < 2; j++) {
        PyArrayObject *a = ins[j];
        npy_intp chunk = es;
        for (int k = 1; k < 2; k++) chunk *= PyArray_DIM(a, k);
        if (chunk == 0 || outer == 0) continue;
        if (PyArray_IS_C_CONTIGUOUS(a)) {
            const char *src = PyArray_DATA(a);
            char *dst = (char *)PyArray_DATA(out) + offset;
            for (npy_intp r = 0; r < outer; r++)
                memcpy(dst + r * inner, src + r * chunk, chunk);
        } else {
            /* a strided view of the output's block for this input, then numpy's copy */
            npy_intp strides[2];
            for (int k = 0; k < 2; k++) strides[k] = PyArray_STRIDE(out, k);
            PyArray_Descr *descr = PyArray_DESCR(out);
            Py_INCREF(descr);
            PyArrayObject *view = (PyArrayObject *)PyArray_NewFromDescr(
                &PyArray_Type, descr, 2, PyArray_DIMS(a), strides,
                (char *)PyArray_DATA(out) + offset, NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
            if (view == NULL || PyArray_CopyInto(view, a) < 0) {
                Py_XDECREF(view);
                Py_DECREF(out);
                FAIL;
            }
            Py_DECREF(view);
        }
        offset += chunk;
    }
    Py_XSETREF(*o0, (PyObject *)out);

    }
    return 0;
}
static const graphc_in_spec thunk_5_in[] = {{2, 12}, {2, 12}};
static int thunk_5(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_5_run, thunk_5_in, 2, "Join{axis=1}",
                          params, inputs, outputs);
}

static int thunk_6_run(void *params, PyObject *const *inputs, PyObject **outputs) {
    (void)params; (void)inputs; (void)outputs;
    PyArrayObject *i0 = (PyArrayObject *)inputs[0]; (void)i0;
    PyArrayObject *i1 = (PyArrayObject *)inputs[1]; (void)i1;
    PyObject **o0 = &outputs[0]; (void)o0;
    {
    npy_intp dims[2], strides[2];
    char *data = PyArray_DATA(i0);
    npy_intp v, start, stop, step;
    int d = 0;
    { /* axis 0: 1:int32 */
    const npy_intp n = PyArray_DIM(i0, 0), s = PyArray_STRIDE(i0, 0);
    step = 1;
    start = 1;
    if (graphc_as_intp((PyArrayObject *)inputs[1], &v) < 0) FAIL;
    stop = v;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "Subtensor{1:int32, ::2}: slice step cannot be zero");
        FAIL;
    }
    {
        Py_ssize_t a = start, b = stop;
        dims[d] = PySlice_AdjustIndices(n, &a, &b, step);
        start = a;
    }
    strides[d] = s * step;
    if (dims[d] > 0) data += start * s;
    d++;
    }
    { /* axis 1: ::2 */
    const npy_intp n = PyArray_DIM(i0, 1), s = PyArray_STRIDE(i0, 1);
    step = 2;
    start = step < 0 ? PY_SSIZE_T_MAX : 0;
    stop = step < 0 ? PY_SSIZE_T_MIN : PY_SSIZE_T_MAX;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "Subtensor{1:int32, ::2}: slice step cannot be zero");
        FAIL;
    }
    {
        Py_ssize_t a = start, b = stop;
        dims[d] = PySlice_AdjustIndices(n, &a, &b, step);
        start = a;
    }
    strides[d] = s * step;
    if (dims[d] > 0) data += start * s;
    d++;
    }
    for (int k = 2; k < 2; k++, d++) {
        dims[d] = PyArray_DIM(i0, k);
        strides[d] = PyArray_STRIDE(i0, k);
    }
    PyArray_Descr *descr = PyArray_DESCR(i0);
    Py_INCREF(descr);
    PyObject *out = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, strides, data,
                                         PyArray_FLAGS(i0) & NPY_ARRAY_WRITEABLE, NULL);
    if (out == NULL) FAIL;
    Py_INCREF(i0);
    if (PyArray_SetBaseObject((PyArrayObject *)out, (PyObject *)i0) < 0) {
        Py_DECREF(out);
        FAIL;
    }
    Py_XSETREF(*o0, out);
    }
    return 0;
}
static const graphc_in_spec thunk_6_in[] = {{2, 12}, {0, 5}};
static int thunk_6(void *params, PyObject *const *inputs, PyObject **outputs) {
    return graphc_checked(thunk_6_run, thunk_6_in, 2, "Subtensor{1:int32, ::2}",
                          params, inputs, outputs);
}

static int graphc_module_init(void) {

    return 0;
}

static PyObject *graphc_thunks(PyObject *self, PyObject *noargs) {
    (void)self; (void)noargs;
    PyObject *c, *t = PyTuple_New(7);
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
    if (!(c = PyCapsule_New((void *)&thunk_5, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 5, c);
    if (!(c = PyCapsule_New((void *)&thunk_6, "graphc.thunk", NULL))) goto fail;
    PyTuple_SET_ITEM(t, 6, c);
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
