"""C for Dot, Dot22, Gemv and Gemm through the machine's BLAS (numpy's OpenBLAS, else
scipy's ``cython_blas``: ``graphc.linker.blas_lib``).

The Fortran routines' addresses are looked up once per module when it loads.
A C-ordered matrix is its Fortran-ordered transpose, so C- and F-contiguous operands (and
any with a usable leading dimension) are passed with transpose flags instead of copies.
float32 and float64 only; other dtypes run the Ops' Python code.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.blas_lib import blas_library
from graphc.linker.c.common import COMMON, check_operand, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor import blas

_PREFIX = {"float32": "s", "float64": "d"}

_LOADER = r"""
typedef @BINT@ graphc_bint; /* @LIBRARY@ */
#define GRAPHC_BINT_MAX @BINT_MAX@
typedef void (*graphc_sgemm_t)(char *, char *, graphc_bint *, graphc_bint *, graphc_bint *,
                               float *, float *, graphc_bint *, float *, graphc_bint *, float *,
                               float *, graphc_bint *);
typedef void (*graphc_dgemm_t)(char *, char *, graphc_bint *, graphc_bint *, graphc_bint *,
                               double *, double *, graphc_bint *, double *, graphc_bint *,
                               double *, double *, graphc_bint *);
typedef void (*graphc_sgemv_t)(char *, graphc_bint *, graphc_bint *, float *, float *,
                               graphc_bint *, float *, graphc_bint *, float *, float *,
                               graphc_bint *);
typedef void (*graphc_dgemv_t)(char *, graphc_bint *, graphc_bint *, double *, double *,
                               graphc_bint *, double *, graphc_bint *, double *, double *,
                               graphc_bint *);
typedef float (*graphc_sdot_t)(graphc_bint *, float *, graphc_bint *, float *, graphc_bint *);
typedef double (*graphc_ddot_t)(graphc_bint *, double *, graphc_bint *, double *,
                                graphc_bint *);
static graphc_sgemm_t graphc_sgemm;
static graphc_dgemm_t graphc_dgemm;
static graphc_sgemv_t graphc_sgemv;
static graphc_dgemv_t graphc_dgemv;
static graphc_sdot_t graphc_sdot;
static graphc_ddot_t graphc_ddot;

/* Fill the function pointers from graphc.linker.blas_lib.addresses (once; later calls
   return 0): the routines of the library this code was generated for. */
static int graphc_blas_load(void) {
    if (graphc_ddot != NULL) return 0;
    PyObject *mod = PyImport_ImportModule("graphc.linker.blas_lib");
    if (mod == NULL) return -1;
    PyObject *t = PyObject_CallMethod(mod, "addresses", "si", "@SOURCE@", @ILP64@);
    Py_DECREF(mod);
    if (t == NULL) return -1;
    void *fns[6];
    for (int k = 0; k < 6; k++) {
        fns[k] = PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 6
                     ? PyLong_AsVoidPtr(PyTuple_GET_ITEM(t, k)) : NULL;
        if (fns[k] == NULL) {
            Py_DECREF(t);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ImportError, "BLAS routine not found");
            return -1;
        }
    }
    Py_DECREF(t);
    graphc_sgemm = (graphc_sgemm_t)fns[0];
    graphc_dgemm = (graphc_dgemm_t)fns[1];
    graphc_sgemv = (graphc_sgemv_t)fns[2];
    graphc_dgemv = (graphc_dgemv_t)fns[3];
    graphc_sdot = (graphc_sdot_t)fns[4];
    graphc_ddot = (graphc_ddot_t)fns[5];
    return 0;
}
"""

HELPERS = r"""
/* A matrix in Fortran terms: trans 'N' = data is column-major with leading dimension ld;
   'T' = data is row-major (its column-major reading is the transpose). */
typedef struct {
    char *data;
    char trans;
    graphc_bint ld;
} graphc_fmat;

/* Describe a 2-d non-empty array for BLAS without copying; -1 when it cannot be. */
static int graphc_fmat_of(PyArrayObject *a, graphc_fmat *f) {
    const npy_intp es = PyArray_ITEMSIZE(a);
    const npy_intp m = PyArray_DIM(a, 0), n = PyArray_DIM(a, 1);
    const npy_intp s0 = PyArray_STRIDE(a, 0), s1 = PyArray_STRIDE(a, 1);
    npy_intp ld;
    if (!PyArray_ISALIGNED(a) || m > GRAPHC_BINT_MAX || n > GRAPHC_BINT_MAX) return -1;
    if ((s1 == es || n == 1) && (m == 1 || (s0 > 0 && s0 % es == 0 && s0 / es >= n))) {
        ld = m == 1 ? (n > 1 ? n : 1) : s0 / es;
        f->trans = 'T';
    } else if ((s0 == es || m == 1) && (n == 1 || (s1 > 0 && s1 % es == 0 && s1 / es >= m))) {
        ld = n == 1 ? (m > 1 ? m : 1) : s1 / es;
        f->trans = 'N';
    } else {
        return -1;
    }
    if (ld > GRAPHC_BINT_MAX) return -1;
    f->ld = (graphc_bint)ld;
    f->data = PyArray_DATA(a);
    return 0;
}

/* The element stride of a vector usable as a BLAS increment (> 0), or 0 if it is not. */
static graphc_bint graphc_inc_of(PyArrayObject *v) {
    const npy_intp es = PyArray_ITEMSIZE(v), s = PyArray_STRIDE(v, 0);
    if (!PyArray_ISALIGNED(v) || PyArray_DIM(v, 0) > GRAPHC_BINT_MAX) return 0;
    if (PyArray_DIM(v, 0) <= 1) return 1;
    if (s <= 0 || s % es || s / es > GRAPHC_BINT_MAX) return 0;
    return (graphc_bint)(s / es);
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
"""

_TYPED = r"""
/* z <- beta * z for a 1-d or 2-d array (beta == 0 writes zeros without reading z). */
static void graphc_Pscale(PyArrayObject *z, REAL beta) {
    const int nd = PyArray_NDIM(z);
    const npy_intp m = nd > 1 ? PyArray_DIM(z, 0) : 1, n = PyArray_DIM(z, nd - 1);
    const npy_intp s0 = nd > 1 ? PyArray_STRIDE(z, 0) : 0, s1 = PyArray_STRIDE(z, nd - 1);
    for (npy_intp i = 0; i < m; i++) {
        char *row = (char *)PyArray_DATA(z) + i * s0;
        for (npy_intp j = 0; j < n; j++) {
            REAL *p = (REAL *)(row + j * s1);
            *p = beta == 0 ? (REAL)0 : beta * *p;
        }
    }
}

/* Z <- beta Z + alpha X Y in place (Z M x N, X M x K, Y K x N; shapes checked by the
   caller). Z is not read when beta == 0. */
static int graphc_Pgemm_into(PyArrayObject *Z, REAL alpha, PyArrayObject *X, PyArrayObject *Y,
                             REAL beta) {
    const npy_intp M = PyArray_DIM(Z, 0), N = PyArray_DIM(Z, 1), K = PyArray_DIM(X, 1);
    if (M == 0 || N == 0) return 0;
    if (K == 0) {
        graphc_Pscale(Z, beta);
        return 0;
    }
    if (M > GRAPHC_BINT_MAX || N > GRAPHC_BINT_MAX || K > GRAPHC_BINT_MAX) {
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
        Zc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(2, PyArray_DIMS(Z), TYPENUM, 0)
                       : (PyArrayObject *)PyArray_NewCopy(Z, NPY_CORDER);
        if (Zc == NULL) goto done;
        graphc_fmat_of(Zc, &fz);
    }
    {
        graphc_bint m = (graphc_bint)M, n = (graphc_bint)N, k = (graphc_bint)K;
        /* let other threads run during big products (only C data is touched below) */
        PyThreadState *ts = (double)M * N * K > 1e6 ? PyEval_SaveThread() : NULL;
        if (fz.trans == 'N') { /* Z column-major: Z = op(X) op(Y) */
            graphc_Pgemm(&fx.trans, &fy.trans, &m, &n, &k, &alpha, (REAL *)fx.data, &fx.ld,
                         (REAL *)fy.data, &fy.ld, &beta, (REAL *)fz.data, &fz.ld);
        } else { /* Z row-major, i.e. Z^T column-major: Z^T = Y^T X^T */
            char ta = fy.trans == 'N' ? 'T' : 'N', tb = fx.trans == 'N' ? 'T' : 'N';
            graphc_Pgemm(&ta, &tb, &n, &m, &k, &alpha, (REAL *)fy.data, &fy.ld, (REAL *)fx.data,
                         &fx.ld, &beta, (REAL *)fz.data, &fz.ld);
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
static int graphc_Pgemv_into(PyArrayObject *y, REAL alpha, PyArrayObject *A, PyArrayObject *x,
                             REAL beta) {
    const npy_intp M = PyArray_DIM(A, 0), N = PyArray_DIM(A, 1);
    if (M == 0) return 0;
    if (N == 0) {
        graphc_Pscale(y, beta);
        return 0;
    }
    if (M > GRAPHC_BINT_MAX || N > GRAPHC_BINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "gemv: dimension too large for BLAS");
        return -1;
    }
    graphc_fmat fa;
    int rc = -1;
    graphc_bint incx, incy;
    PyArrayObject *Ac, *xc, *yc = NULL;
    Ac = graphc_maybe_copy(A, graphc_fmat_of(A, &fa) < 0 || graphc_overlap(A, y));
    xc = graphc_maybe_copy(x, graphc_inc_of(x) == 0 || graphc_overlap(x, y));
    if (Ac == NULL || xc == NULL) goto done;
    graphc_fmat_of(Ac, &fa);
    incx = graphc_inc_of(xc);
    incy = graphc_inc_of(y);
    if (incy == 0) {
        yc = beta == 0 ? (PyArrayObject *)PyArray_EMPTY(1, PyArray_DIMS(y), TYPENUM, 0)
                       : (PyArrayObject *)PyArray_NewCopy(y, NPY_CORDER);
        if (yc == NULL) goto done;
        incy = 1;
    }
    {
        REAL *yd = (REAL *)PyArray_DATA(yc != NULL ? yc : y), *xd = (REAL *)PyArray_DATA(xc);
        graphc_bint m = (graphc_bint)M, n = (graphc_bint)N;
        if (fa.trans == 'N') {
            char t = 'N';
            graphc_Pgemv(&t, &m, &n, &alpha, (REAL *)fa.data, &fa.ld, xd, &incx,
                         &beta, yd, &incy);
        } else { /* row-major A is column-major A^T (N x M) */
            char t = 'T';
            graphc_Pgemv(&t, &n, &m, &alpha, (REAL *)fa.data, &fa.ld, xd, &incx,
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
static int graphc_Pdot_vv(PyArrayObject *a, PyArrayObject *b, REAL *out) {
    const npy_intp n = PyArray_DIM(a, 0);
    if (n == 0) {
        *out = 0;
        return 0;
    }
    if (n > GRAPHC_BINT_MAX) {
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
    graphc_bint nn = (graphc_bint)n, ia = graphc_inc_of(ac), ib = graphc_inc_of(bc);
    if (sizeof(REAL) < sizeof(double)) { /* a sum: accumulated in double, as Sum's */
        const REAL *p = (const REAL *)PyArray_DATA(ac), *q = (const REAL *)PyArray_DATA(bc);
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (ia == 1 && ib == 1) {
            const npy_intp m = n / 4;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
            for (npy_intp i = 0; i < m; i++) {
                s0 += (double)p[i] * q[i]; s1 += (double)p[i + m] * q[i + m];
                s2 += (double)p[i + 2 * m] * q[i + 2 * m];
                s3 += (double)p[i + 3 * m] * q[i + 3 * m];
            }
            for (npy_intp i = 4 * m; i < n; i++) s0 += (double)p[i] * q[i];
        } else { /* positive increments (graphc_inc_of) */
            for (npy_intp i = 0; i < n; i++) s0 += (double)p[i * ia] * q[i * ib];
        }
        *out = (REAL)((s0 + s1) + (s2 + s3));
    } else {
        *out = graphc_Pdot(&nn, (REAL *)PyArray_DATA(ac), &ia, (REAL *)PyArray_DATA(bc), &ib);
    }
    Py_DECREF(ac);
    Py_DECREF(bc);
    return 0;
}
"""


def _typed(dtype: str) -> str:
    p = _PREFIX[dtype]
    text = _TYPED.replace("graphc_P", f"graphc_{p}").replace("TYPENUM", typenum(dtype))
    return text.replace("REAL", ctype(dtype))


_INIT = ("if (graphc_blas_load() < 0) FAIL;",)


def loader() -> str:
    """The declarations and loader of the BLAS routines, for the library the
    ``blas_library`` flag selects (``graphc.linker.blas_lib``)."""
    lib = blas_library()
    width, bint, bmax = (64, "int64_t", "INT64_MAX") if lib.ilp64 else (32, "int", "INT_MAX")
    fill = {"@BINT@": bint, "@BINT_MAX@": bmax, "@SOURCE@": lib.source, "@ILP64@": str(width // 64),
            "@LIBRARY@": f"{lib.source}'s BLAS, {width}-bit integers"}  # fmt: skip
    text = _LOADER
    for key, value in fill.items():
        text = text.replace(key, value)
    return text


def _support(dtype: str) -> tuple[str, ...]:
    return (COMMON, loader(), HELPERS, _typed(dtype))


def _float_dtype(node: Apply) -> str | None:
    """The common float dtype of all tensor operands and outputs (coefficients aside)."""
    dts = {v.dtype for v in node.outputs}
    if len(dts) != 1:
        return None
    (dt,) = dts
    return dt if dt in _PREFIX else None


def _code(node: Apply, dtype: str, body: str, key: object) -> CThunkCode:
    return CThunkCode(body=body, support=_support(dtype), init=_INIT, key=key)


def _coef(var: str, name: str, ct: str) -> str:
    return f"""
    double {name}_d;
    if (graphc_as_double({var}, &{name}_d) < 0) FAIL;
    const {ct} {name} = ({ct}){name}_d;"""


# ------------------------------------------------------------------ Dot, Dot22


@register_c(blas.Dot)
def gen_dot(node: Apply) -> CThunkCode | None:
    dt = _float_dtype(node)
    a, b = node.inputs
    if dt is None or a.dtype != dt or b.dtype != dt:
        return None
    p, ct, tn = _PREFIX[dt], ctype(dt), typenum(dt)
    name = str(node.op)
    na, nb = a.ndim, b.ndim
    checks = check_operand("i0", dt, na, name) + check_operand("i1", dt, nb, name)
    mismatch = f"""
    if (PyArray_DIM(i0, {na - 1}) != PyArray_DIM(i1, 0)) {{
        PyArrayObject *ab[2] = {{i0, i1}};
        graphc_shape_error(PyExc_ValueError, "{name}: shapes not aligned: ", 2, ab);
        FAIL;
    }}"""
    if na == 2:
        # matrix @ matrix is a gemm into (rows, cols), matrix @ vector a gemv into (rows,)
        if nb == 2:
            kind, dims = "gemm", "PyArray_DIM(i0, 0), PyArray_DIM(i1, 1)"
        else:
            kind, dims = "gemv", "PyArray_DIM(i0, 0)"
        compute = f"""
    npy_intp dims[{nb}] = {{{dims}}};
    PyArrayObject *out = graphc_out_array(o0, {nb}, dims, {tn});
    if (out == NULL) FAIL;
    if (graphc_{p}{kind}_into(out, 1, i0, i1, 0) < 0) {{
        Py_DECREF(out);
        FAIL;
    }}"""
    elif nb == 2:
        compute = f"""
    npy_intp dims[1] = {{PyArray_DIM(i1, 1)}};
    PyArrayObject *out = graphc_out_array(o0, 1, dims, {tn});
    if (out == NULL) FAIL;
    PyArrayObject *bt = (PyArrayObject *)PyArray_Transpose(i1, NULL);
    if (bt == NULL || graphc_{p}gemv_into(out, 1, bt, i0, 0) < 0) {{
        Py_XDECREF(bt);
        Py_DECREF(out);
        FAIL;
    }}
    Py_DECREF(bt);"""
    else:
        compute = f"""
    PyArrayObject *out = graphc_out_array(o0, 0, NULL, {tn});
    if (out == NULL) FAIL;
    if (graphc_{p}dot_vv(i0, i1, ({ct} *)PyArray_DATA(out)) < 0) {{
        Py_DECREF(out);
        FAIL;
    }}"""
    body = checks + mismatch + compute + "\n    Py_XSETREF(*o0, (PyObject *)out);\n"
    return _code(node, dt, body, ("Dot", name, dt, na, nb))


# ------------------------------------------------------------------ Gemv, Gemm


def _gemx(node: Apply, kind: str) -> CThunkCode | None:
    dt = _float_dtype(node)
    if dt is None or any(node.inputs[k].dtype != dt for k in (0, 2, 3)):
        return None
    if node.inputs[1].ndim != 0 or node.inputs[4].ndim != 0:
        return None
    p, ct, tn = _PREFIX[dt], ctype(dt), typenum(dt)
    inplace = node.op.inplace
    name = str(node.op)
    if kind == "gemm":
        nd = 2
        checks = (
            check_operand("i0", dt, 2, name)
            + check_operand("i2", dt, 2, name)
            + check_operand("i3", dt, 2, name)
        )
        bad = ("PyArray_DIM(i2, 1) != PyArray_DIM(i3, 0) || PyArray_DIM(i0, 0) != "
               "PyArray_DIM(i2, 0) || PyArray_DIM(i0, 1) != PyArray_DIM(i3, 1)")  # fmt: skip
        labels = ("Z", "X", "Y")
    else:
        nd = 1
        checks = (
            check_operand("i0", dt, 1, name)
            + check_operand("i2", dt, 2, name)
            + check_operand("i3", dt, 1, name)
        )
        bad = "PyArray_DIM(i2, 0) != PyArray_DIM(i0, 0) || PyArray_DIM(i2, 1) != PyArray_DIM(i3, 0)"
        labels = ("y", "A", "x")
    fmt = f"{name}: shape mismatch {labels[0]} %R, {labels[1]} %R, {labels[2]} %R"
    shape_check = f"""
    if ({bad}) {{
        PyObject *s0 = graphc_shape_tuple(i0), *s2 = graphc_shape_tuple(i2);
        PyObject *s3 = graphc_shape_tuple(i3);
        if (s0 && s2 && s3) PyErr_Format(PyExc_ValueError, "{fmt}", s0, s2, s3);
        Py_XDECREF(s0);
        Py_XDECREF(s2);
        Py_XDECREF(s3);
        FAIL;
    }}"""
    coefs = _coef("i1", "alpha", ct) + _coef("i4", "beta", ct)
    if getattr(node.op, "broadcast", False):
        shape_check, compute = _broadcast_gemm(name, p, tn)
    elif inplace:
        compute = f"""
    if (!PyArray_ISWRITEABLE(i0)) {{
        PyErr_SetString(PyExc_ValueError, "{name}: the destroyed operand is read-only");
        FAIL;
    }}
    if (graphc_{p}{kind}_into(i0, alpha, i2, i3, beta) < 0) FAIL;
    Py_INCREF(i0);
    Py_XSETREF(*o0, (PyObject *)i0);
"""
    else:
        compute = f"""
    PyArrayObject *out = graphc_out_array(o0, {nd}, PyArray_DIMS(i0), {tn});
    if (out == NULL) FAIL;
    if ((beta != 0 && PyArray_CopyInto(out, i0) < 0) ||
        graphc_{p}{kind}_into(out, alpha, i2, i3, beta) < 0) {{
        Py_DECREF(out);
        FAIL;
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    body = checks + shape_check + coefs + compute
    key = (kind, name, dt, node.inputs[1].dtype, node.inputs[4].dtype, str(node.op))
    return _code(node, dt, body, key)


def _broadcast_gemm(name: str, p: str, tn: str) -> tuple[str, str]:
    """Shape check and body of ``Gemm{no_inplace,broadcast}``: Z (i0) and the product
    broadcast as in numpy.  When Z has the product's shape or broadcasts to it, Z is copied
    into the output (the slot's previous value when it fits: an update's recycled buffer)
    and one gemm accumulates into it; when the product must broadcast instead, it is
    computed apart and added."""
    check = f"""
    const npy_intp pd[2] = {{PyArray_DIM(i2, 0), PyArray_DIM(i3, 1)}};
    int z_to_p = 1, p_to_z = 1;
    for (int d = 0; d < 2; d++) {{
        if (PyArray_DIM(i0, d) != pd[d]) {{
            z_to_p &= PyArray_DIM(i0, d) == 1;
            p_to_z &= pd[d] == 1;
        }}
    }}
    if (PyArray_DIM(i2, 1) != PyArray_DIM(i3, 0) || !(z_to_p || p_to_z)) {{
        PyObject *s0 = graphc_shape_tuple(i0), *s2 = graphc_shape_tuple(i2);
        PyObject *s3 = graphc_shape_tuple(i3);
        if (s0 && s2 && s3)
            PyErr_Format(PyExc_ValueError, "{name}: shape mismatch Z %R, X %R, Y %R", s0, s2, s3);
        Py_XDECREF(s0);
        Py_XDECREF(s2);
        Py_XDECREF(s3);
        FAIL;
    }}"""
    compute = f"""
    PyArrayObject *out;
    if (z_to_p) {{
        out = graphc_out_array(o0, 2, pd, {tn});
        if (out == NULL) FAIL;
        if ((beta != 0 && PyArray_CopyInto(out, i0) < 0) ||
            graphc_{p}gemm_into(out, alpha, i2, i3, beta) < 0) {{
            Py_DECREF(out);
            FAIL;
        }}
    }} else {{
        PyArrayObject *prod = (PyArrayObject *)PyArray_EMPTY(2, (npy_intp *)pd, {tn}, 0);
        if (prod == NULL) FAIL;
        out = graphc_out_array(o0, 2, PyArray_DIMS(i0), {tn});
        PyObject *sum = NULL;
        if (out != NULL && graphc_{p}gemm_into(prod, alpha, i2, i3, 0) == 0 &&
            PyArray_CopyInto(out, i0) == 0) {{
            graphc_{p}scale(out, beta);
            sum = PyNumber_InPlaceAdd((PyObject *)out, (PyObject *)prod);
        }}
        Py_DECREF(prod);
        if (sum == NULL) {{
            Py_XDECREF(out);
            FAIL;
        }}
        Py_DECREF(sum);
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    return check, compute


@register_c(blas.Gemv)
def gen_gemv(node: Apply) -> CThunkCode | None:
    return _gemx(node, "gemv")


@register_c(blas.Gemm)
def gen_gemm(node: Apply) -> CThunkCode | None:
    return _gemx(node, "gemm")
