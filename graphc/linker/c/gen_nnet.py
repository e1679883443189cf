"""C for Softmax, LogSoftmax (any axis) and the 1-hot cross-entropies with their gradients.

Each lane along the softmax axis is shifted by its maximum before ``exp``, as the Ops'
Python code does. Inputs that are not C-contiguous and aligned are copied first; the
last-axis case then runs over contiguous rows.
"""

from __future__ import annotations

from graphc.flags import config
from graphc.graph.basic import Apply
from graphc.linker.c.common import COMMON, FLOAT_DTYPES, INT_DTYPES, check_operand, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.linker.c.vecmath import VECMATH
from graphc.tensor import nnet

# Helpers shared by every dtype: emitted once per module (support code is deduplicated by
# text, so a helper must never sit in a per-dtype block, or two dtypes redefine it).
_SHARED = r"""
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
"""

# REAL, EXP and LOG are replaced per dtype; names get the dtype as a suffix.
_KERNELS = r"""
/* softmax (take_log 0) or log-softmax (take_log 1) of the contiguous row x[0..n) into y. */
static void graphc_softmax_row_SFX(const REAL *x, REAL *y, npy_intp n, int take_log) {
    REAL m = x[0];
#pragma omp simd reduction(max : m)
    for (npy_intp j = 1; j < n; j++) m = x[j] > m ? x[j] : m;
    if (take_log) {
        if (!isfinite(m)) m = 0;
        double s = 0; /* sums accumulate in double, as Sum of float32 does */
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) s += (double)EXP(x[j] - m);
        const REAL ls = LOG((REAL)s);
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = (x[j] - m) - ls;
    } else {
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (npy_intp j = 0; j < n; j++) {
            y[j] = EXP(x[j] - m);
            s += (double)y[j];
        }
#pragma omp simd
        for (npy_intp j = 0; j < n; j++) y[j] = y[j] / s;
    }
}

/* The same over the middle axis of a C-ordered (outer, n, inner) block, inner > 1:
   the loops run along `inner` (contiguous). `buf` holds 2 * inner scratch doubles. */
static void graphc_softmax_block_SFX(const REAL *x, REAL *y, npy_intp n, npy_intp inner,
                                     int take_log, double *buf) {
    double *m = buf, *s = buf + inner;
    for (npy_intp k = 0; k < inner; k++) {
        m[k] = x[k];
        s[k] = 0;
    }
    for (npy_intp j = 1; j < n; j++)
        for (npy_intp k = 0; k < inner; k++) {
            const REAL v = x[j * inner + k];
            m[k] = v > m[k] ? v : m[k];
        }
    if (take_log)
        for (npy_intp k = 0; k < inner; k++) m[k] = isfinite(m[k]) ? m[k] : 0;
    for (npy_intp j = 0; j < n; j++)
#pragma omp simd
        for (npy_intp k = 0; k < inner; k++) {
            REAL e = EXP((REAL)(x[j * inner + k] - m[k]));
            s[k] += e;
            if (!take_log) y[j * inner + k] = e;
        }
    if (take_log) {
        for (npy_intp k = 0; k < inner; k++) s[k] = (double)LOG((REAL)s[k]);
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++)
                y[j * inner + k] = (x[j * inner + k] - m[k]) - s[k];
    } else {
        for (npy_intp j = 0; j < n; j++)
            for (npy_intp k = 0; k < inner; k++) y[j * inner + k] = y[j * inner + k] / s[k];
    }
}

/* (log-)softmax of `a` along `axis` into a new (or reused) output slot. */
static int graphc_softmax_SFX(PyArrayObject *a, int axis, int take_log, PyObject **slot) {
    const int nd = PyArray_NDIM(a);
    PyArrayObject *x = graphc_carray(a);
    if (x == NULL) return -1;
    PyArrayObject *out = graphc_out_array(slot, nd, PyArray_DIMS(a), TYPENUM);
    if (out == NULL) {
        Py_DECREF(x);
        return -1;
    }
    npy_intp outer = 1, inner = 1, n = PyArray_DIM(a, axis);
    for (int k = 0; k < axis; k++) outer *= PyArray_DIM(a, k);
    for (int k = axis + 1; k < nd; k++) inner *= PyArray_DIM(a, k);
    const REAL *xd = (const REAL *)PyArray_DATA(x);
    REAL *yd = (REAL *)PyArray_DATA(out);
    if (n > 0 && inner == 1) {
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_row_SFX(xd + o * n, yd + o * n, n, take_log);
    } else if (n > 0 && inner > 0 && outer > 0) {
        double *buf = PyMem_Malloc(2 * inner * sizeof(double));
        if (buf == NULL) {
            Py_DECREF(x);
            Py_DECREF(out);
            PyErr_NoMemory();
            return -1;
        }
        for (npy_intp o = 0; o < outer; o++)
            graphc_softmax_block_SFX(xd + o * n * inner, yd + o * n * inner, n, inner, take_log,
                                     buf);
        PyMem_Free(buf);
    }
    Py_DECREF(x);
    Py_XSETREF(*slot, (PyObject *)out);
    return 0;
}
"""


def _exp(dtype: str) -> str:
    """The C exp of the vectorized loops: graphc's vector math (``vecmath.py``) unless
    ``config.c_vecmath`` is off."""
    if config.c_vecmath:
        return f"gc_vm_exp_{ctype(dtype)}"
    return "expf" if dtype == "float32" else "exp"


def _kernels(dtype: str) -> str:
    sfx = "f32" if dtype == "float32" else "f64"
    exp, log = _exp(dtype), ("logf" if dtype == "float32" else "log")
    return (
        _KERNELS.replace("_SFX", "_" + sfx)
        .replace("REAL", ctype(dtype))
        .replace("TYPENUM", typenum(dtype))
        .replace("EXP(", exp + "(")
        .replace("LOG(", log + "(")
    )


def _support(dtype: str) -> tuple[str, ...]:
    return (COMMON, _SHARED, VECMATH, _kernels(dtype))


def _sfx(dtype: str) -> str:
    return "f32" if dtype == "float32" else "f64"


# ------------------------------------------------------------------ softmax


@register_c(nnet.Softmax, nnet.LogSoftmax)
def gen_softmax(node: Apply) -> CThunkCode | None:
    x = node.inputs[0]
    dt = x.dtype
    if dt not in FLOAT_DTYPES or node.outputs[0].dtype != dt:
        return None
    nd = x.ndim
    axis = node.op.axis % nd
    log = int(isinstance(node.op, nnet.LogSoftmax))
    name = str(node.op)
    body = (
        check_operand("i0", dt, nd, name)
        + f"""
    if (graphc_softmax_{_sfx(dt)}(i0, {axis}, {log}, o0) < 0) FAIL;
"""
    )
    return CThunkCode(body=body, support=_support(dt), key=(name, log, dt, nd, axis))


# ------------------------------------------------------------------ 1-hot cross-entropies


def _idx_check(name: str, rows: str, cols: str, ity: str) -> str:
    """C checking the index vector ``yv`` (int type ``ity``) against rows and classes."""
    return f"""
    if (PyArray_DIM(yv, 0) != {rows}) {{
        PyErr_Format(PyExc_ValueError, "{name}: %zd rows but %zd class indices",
                     (Py_ssize_t){rows}, (Py_ssize_t)PyArray_DIM(yv, 0));
        FAIL;
    }}
    const npy_intp ys = PyArray_STRIDE(yv, 0);
    const char *yp = PyArray_DATA(yv);
    for (npy_intp i = 0; i < {rows}; i++) {{
        {ity} c = *(const {ity} *)(yp + i * ys);
        if (!(c >= 0 && (npy_uint64)c < (npy_uint64){cols})) {{
            PyErr_Format(PyExc_IndexError, "{name}: class index out of range [0, %zd)",
                         (Py_ssize_t){cols});
            FAIL;
        }}
    }}"""


def _idx_ok(node: Apply, pos: int) -> str | None:
    dt = node.inputs[pos].dtype
    return ctype(dt) if dt in INT_DTYPES and node.inputs[pos].ndim == 1 else None


def _idx_type_check(pos: int, dt: str, name: str) -> str:
    return f"""
    if (PyArray_TYPE(i{pos}) != {typenum(dt)} || PyArray_NDIM(i{pos}) != 1) {{
        PyErr_SetString(PyExc_TypeError, "{name}: class indices of an unexpected dtype");
        FAIL;
    }}"""


def _matrix_and_labels(name: str, mat: str, dt: str, ypos: int, ydt: str, ity: str) -> str:
    """C checking the (rows, cols) matrix ``mat`` and the class index input ``i{ypos}``;
    declares ``rows``, ``cols`` and the index vector's ``yv``, ``ys`` and ``yp``."""
    return (
        check_operand(mat, dt, 2, name)
        + _idx_type_check(ypos, ydt, name)
        + f"""
    PyArrayObject *yv = i{ypos};
    const npy_intp rows = PyArray_DIM({mat}, 0), cols = PyArray_DIM({mat}, 1);"""
        + _idx_check(name, "rows", "cols", ity)
    )


@register_c(nnet.CrossentropySoftmax1Hot)
def gen_xent_sm_1hot(node: Apply) -> CThunkCode | None:
    x, y = node.inputs
    dt = x.dtype
    ity = _idx_ok(node, 1)
    if dt not in FLOAT_DTYPES or ity is None or any(o.dtype != dt for o in node.outputs):
        return None
    ct, tn, sfx = ctype(dt), typenum(dt), _sfx(dt)
    exp = _exp(dt)
    name = str(node.op)
    body = (
        _matrix_and_labels(name, "i0", dt, 1, y.dtype, ity)
        + f"""
    if (cols == 0 && rows > 0) {{
        PyErr_SetString(PyExc_IndexError, "{name}: no classes");
        FAIL;
    }}
    /* log-softmax rows into the sm slot, then nll = -lsm[y] and sm = exp(lsm) */
    if (graphc_softmax_{sfx}(i0, 1, 1, o1) < 0) FAIL;
    PyArrayObject *sm = (PyArrayObject *)*o1;
    npy_intp nr = rows;
    PyArrayObject *nll = graphc_out_array(o0, 1, &nr, {tn});
    if (nll == NULL) FAIL;
    {ct} *s = ({ct} *)PyArray_DATA(sm);
    {ct} *l = ({ct} *)PyArray_DATA(nll);
    for (npy_intp i = 0; i < rows; i++) {{
        {ct} *row = s + i * cols;
        l[i] = -row[(npy_intp)*(const {ity} *)(yp + i * ys)];
#pragma omp simd
        for (npy_intp j = 0; j < cols; j++) row[j] = {exp}(row[j]);
    }}
    Py_XSETREF(*o0, (PyObject *)nll);
"""
    )
    return CThunkCode(body=body, support=_support(dt), key=(name, dt, y.dtype))


@register_c(nnet.CrossentropySoftmax1HotDx)
def gen_xent_sm_1hot_dx(node: Apply) -> CThunkCode | None:
    g, sm, y = node.inputs
    dt = sm.dtype
    ity = _idx_ok(node, 2)
    if dt not in FLOAT_DTYPES or ity is None or g.dtype != dt or node.outputs[0].dtype != dt:
        return None
    ct, tn = ctype(dt), typenum(dt)
    name = str(node.op)
    body = (
        check_operand("i0", dt, 1, name)
        + _matrix_and_labels(name, "i1", dt, 2, y.dtype, ity)
        + f"""
    if (PyArray_DIM(i0, 0) != rows) {{
        PyErr_Format(PyExc_ValueError, "{name}: %zd rows but dnll has %zd entries",
                     (Py_ssize_t)rows, (Py_ssize_t)PyArray_DIM(i0, 0));
        FAIL;
    }}
    PyArrayObject *out = graphc_out_array(o0, 2, PyArray_DIMS(i1), {tn});
    if (out == NULL) FAIL;
    const char *gp = PyArray_DATA(i0), *sp = PyArray_DATA(i1);
    const npy_intp gs = PyArray_STRIDE(i0, 0), s0 = PyArray_STRIDE(i1, 0);
    const npy_intp s1 = PyArray_STRIDE(i1, 1);
    {ct} *d = ({ct} *)PyArray_DATA(out);
    for (npy_intp i = 0; i < rows; i++) {{
        const {ct} gi = *(const {ct} *)(gp + i * gs);
        const char *srow = sp + i * s0;
        {ct} *drow = d + i * cols;
        if (s1 == (npy_intp)sizeof({ct}))
            for (npy_intp j = 0; j < cols; j++) drow[j] = ((const {ct} *)srow)[j] * gi;
        else
            for (npy_intp j = 0; j < cols; j++) drow[j] = *(const {ct} *)(srow + j * s1) * gi;
        drow[(npy_intp)*(const {ity} *)(yp + i * ys)] -= gi;
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    )
    return CThunkCode(body=body, support=_support(dt), key=(name, dt, y.dtype))


@register_c(nnet.CrossentropyCategorical1Hot)
def gen_xent_1hot(node: Apply) -> CThunkCode | None:
    x, y = node.inputs
    dt = x.dtype
    ity = _idx_ok(node, 1)
    if dt not in FLOAT_DTYPES or ity is None or node.outputs[0].dtype != dt:
        return None
    ct, tn = ctype(dt), typenum(dt)
    log = "logf" if dt == "float32" else "log"
    name = str(node.op)
    body = (
        _matrix_and_labels(name, "i0", dt, 1, y.dtype, ity)
        + f"""
    npy_intp nr = rows;
    PyArrayObject *out = graphc_out_array(o0, 1, &nr, {tn});
    if (out == NULL) FAIL;
    {ct} *d = ({ct} *)PyArray_DATA(out);
    for (npy_intp i = 0; i < rows; i++) {{
        npy_intp c = (npy_intp)*(const {ity} *)(yp + i * ys);
        d[i] = -{log}(*({ct} *)PyArray_GETPTR2(i0, i, c));
    }}
    Py_XSETREF(*o0, (PyObject *)out);
"""
    )
    return CThunkCode(body=body, support=_support(dt), key=(name, dt, y.dtype))
