"""C for Pool, MaxPoolGrad and AveragePoolGrad: direct loops over the pooling windows.

Max pooling over windows that tile the input (no padding, stride = window, the usual 2x2)
and its gradient go row by row with no per-window clipping (``graphc_pool_tiled``).

Each window is clipped as in the numpy code: to the zero-padded input for the divisor of
``average_inc_pad``, to the real input for everything else. float32 and float64; other
dtypes run the Ops' Python code.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.common import COMMON, FLOAT_DTYPES, ctype, store_out_epilogue, typed_template
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor.signal.pool import AveragePoolGrad, MaxPoolGrad, Pool

_MODE = {"max": 0, "sum": 1, "average_inc_pad": 2, "average_exc_pad": 3}

_SHARED = r"""
typedef struct {
    npy_intp lead, h, w, oh, ow, wh, ww, sh, sw, ph, pw;
    int mode; /* 0 max, 1 sum, 2 average_inc_pad, 3 average_exc_pad */
} graphc_pool_geom;

/* Pooled length of one axis (Theano's rule, as pool_output_length). */
static npy_intp graphc_pool_len(npy_intp size, npy_intp ws, npy_intp st, npy_intp pad,
                                int ignore_border) {
    size += 2 * pad;
    if (ignore_border) {
        npy_intp n = size - ws < 0 ? -1 : (size - ws) / st;
        return n + 1 < 0 ? 0 : n + 1;
    }
    if (st >= ws) return size == 0 ? 0 : (size - 1) / st + 1;
    npy_intp n = size - 1 - ws + st;
    return (n < 0 ? 0 : n / st) + 1;
}

/* The window of output (i, j) in input coordinates, and its divisor. */
static void graphc_pool_window(const graphc_pool_geom *g, npy_intp i, npy_intp j,
                               npy_intp *r0, npy_intp *r1, npy_intp *c0, npy_intp *c1,
                               npy_intp *count) {
    npy_intp a0 = i * g->sh, b0 = j * g->sw;
    npy_intp a1 = a0 + g->wh, b1 = b0 + g->ww;
    if (a1 > g->h + 2 * g->ph) a1 = g->h + 2 * g->ph;
    if (b1 > g->w + 2 * g->pw) b1 = g->w + 2 * g->pw;
    npy_intp inc = (a1 - a0) * (b1 - b0);
    *r0 = (a0 > g->ph ? a0 : g->ph) - g->ph;
    *r1 = (a1 < g->h + g->ph ? a1 : g->h + g->ph) - g->ph;
    *c0 = (b0 > g->pw ? b0 : g->pw) - g->pw;
    *c1 = (b1 < g->w + g->pw ? b1 : g->w + g->pw) - g->pw;
    if (*r1 < *r0) *r1 = *r0;
    if (*c1 < *c0) *c1 = *c0;
    *count = g->mode == 2 ? inc : (*r1 - *r0) * (*c1 - *c0);
}

/* Fill the geometry from x's shape; `dims` gets the pooled shape. -1 with an error set. */
static int graphc_pool_geom_of(PyArrayObject *x, graphc_pool_geom *g, npy_intp *dims,
                               int ignore_border) {
    int nd = PyArray_NDIM(x);
    if (nd < 2) {
        PyErr_SetString(PyExc_ValueError, "pool_2d: input must have at least 2 dimensions");
        return -1;
    }
    g->lead = 1;
    for (int k = 0; k < nd - 2; k++) {
        dims[k] = PyArray_DIM(x, k);
        g->lead *= dims[k];
    }
    g->h = PyArray_DIM(x, nd - 2);
    g->w = PyArray_DIM(x, nd - 1);
    g->oh = graphc_pool_len(g->h, g->wh, g->sh, g->ph, ignore_border);
    g->ow = graphc_pool_len(g->w, g->ww, g->sw, g->pw, ignore_border);
    dims[nd - 2] = g->oh;
    dims[nd - 1] = g->ow;
    return 0;
}

/* Whether `a` has the pooled shape `dims` (nd entries); ValueError naming `what` if not. */
static int graphc_pool_check(PyArrayObject *a, int nd, const npy_intp *dims, const char *what) {
    int ok = PyArray_NDIM(a) == nd;
    for (int k = 0; ok && k < nd; k++) ok = PyArray_DIM(a, k) == dims[k];
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "pool_2d gradient: %s does not match the pooling of x",
                     what);
        return -1;
    }
    return 0;
}
"""

_TYPED = r"""
/* d where x == m, else 0, without a branch (a compare and a mask: the gradient's test of
   every input value against its window's maximum is unpredictable). */
static inline REAL graphc_pick_REAL(REAL x, REAL m, REAL d) {
    UBITS bits;
    const UBITS mask = (UBITS)0 - (UBITS)(x == m);
    memcpy(&bits, &d, sizeof bits);
    bits &= mask;
    memcpy(&d, &bits, sizeof bits);
    return d;
}

/* Max pooling, or (kind 1) its gradient, over windows that tile the input: no padding,
   stride = window, every window whole (the rows and columns past the last are left to the
   caller). One pass along each row pair for 2x2 windows, the most common. */
static void graphc_pool_tiled_REAL(int kind, const REAL *restrict x, const REAL *restrict mx,
                                   const REAL *restrict gz, REAL *restrict o,
                                   const graphc_pool_geom *g) {
    const npy_intp wh = g->wh, ww = g->ww, w = g->w, ow = g->ow;
    for (npy_intp l = 0; l < g->lead; l++)
        for (npy_intp i = 0; i < g->oh; i++) {
            const REAL *xr = x + (l * g->h + i * wh) * w;
            const npy_intp q = (l * g->oh + i) * ow;
            REAL *gr = o + (l * g->h + i * wh) * w;
            if (kind == 0 && wh == 2 && ww == 2) {
                for (npy_intp j = 0; j < ow; j++) {
                    REAL acc = xr[2 * j];
                    const REAL b = xr[2 * j + 1], c = xr[w + 2 * j], d = xr[w + 2 * j + 1];
                    if (b > acc || b != b) acc = b;
                    if (c > acc || c != c) acc = c;
                    if (d > acc || d != d) acc = d;
                    o[q + j] = acc;
                }
            } else if (kind == 0) {
                for (npy_intp j = 0; j < ow; j++) {
                    REAL acc = -(REAL)INFINITY;
                    for (npy_intp a = 0; a < wh; a++)
                        for (npy_intp b = 0; b < ww; b++) {
                            const REAL v = xr[a * w + j * ww + b];
                            if (v > acc || v != v) acc = v;
                        }
                    o[q + j] = acc;
                }
            } else if (wh == 2 && ww == 2) {
                for (npy_intp j = 0; j < ow; j++) {
                    const REAL m = mx[q + j], d = gz[q + j];
                    gr[2 * j] = graphc_pick_REAL(xr[2 * j], m, d);
                    gr[2 * j + 1] = graphc_pick_REAL(xr[2 * j + 1], m, d);
                    gr[w + 2 * j] = graphc_pick_REAL(xr[w + 2 * j], m, d);
                    gr[w + 2 * j + 1] = graphc_pick_REAL(xr[w + 2 * j + 1], m, d);
                }
            } else {
                for (npy_intp j = 0; j < ow; j++) {
                    const REAL m = mx[q + j], d = gz[q + j];
                    for (npy_intp a = 0; a < wh; a++)
                        for (npy_intp b = 0; b < ww; b++) {
                            const npy_intp k = a * w + j * ww + b;
                            gr[k] = graphc_pick_REAL(xr[k], m, d);
                        }
                }
            }
        }
}

/* kind 0: Pool(x); 1: MaxPoolGrad(x, maxout, gz); 2: AveragePoolGrad(x, gz). */
static int graphc_pool_REAL(int kind, PyObject *const *inputs, PyObject **slot, int mode,
                            int ignore_border, npy_intp wh, npy_intp ww, npy_intp sh,
                            npy_intp sw, npy_intp ph, npy_intp pw) {
    int rc = -1;
    PyArrayObject *X = NULL, *M = NULL, *G = NULL, *out = NULL;
    graphc_pool_geom g;
    npy_intp dims[NPY_MAXDIMS];
    g.wh = wh; g.ww = ww; g.sh = sh; g.sw = sw; g.ph = ph; g.pw = pw; g.mode = mode;
    X = (PyArrayObject *)PyArray_FROM_OTF(inputs[0], TYPENUM, NPY_ARRAY_IN_ARRAY);
    if (X == NULL || graphc_pool_geom_of(X, &g, dims, ignore_border) < 0) goto done;
    const int nd = PyArray_NDIM(X);
    if (kind == 1) {
        M = (PyArrayObject *)PyArray_FROM_OTF(inputs[1], TYPENUM, NPY_ARRAY_IN_ARRAY);
        if (M == NULL || graphc_pool_check(M, nd, dims, "maxout") < 0) goto done;
    }
    if (kind != 0) {
        PyObject *gz_obj = inputs[kind == 1 ? 2 : 1];
        G = (PyArrayObject *)PyArray_FROM_OTF(gz_obj, TYPENUM, NPY_ARRAY_IN_ARRAY);
        if (G == NULL || graphc_pool_check(G, nd, dims, "gz") < 0) goto done;
    }
    out = graphc_out_array(slot, nd, kind == 0 ? dims : PyArray_DIMS(X), TYPENUM);
    if (out == NULL) goto done;
    {
        const REAL *x = (const REAL *)PyArray_DATA(X);
        const REAL *mx = M ? (const REAL *)PyArray_DATA(M) : NULL;
        const REAL *gz = G ? (const REAL *)PyArray_DATA(G) : NULL;
        REAL *o = (REAL *)PyArray_DATA(out);
        const npy_intp plane = g.h * g.w, oplane = g.oh * g.ow;
        const int tiled = mode == 0 && kind != 2 && g.ph == 0 && g.pw == 0 && g.sh == g.wh &&
                          g.sw == g.ww && g.oh * g.wh <= g.h && g.ow * g.ww <= g.w;
        Py_BEGIN_ALLOW_THREADS
        if (kind != 0 && !(tiled && g.oh * g.wh == g.h && g.ow * g.ww == g.w))
            memset(o, 0, (size_t)PyArray_NBYTES(out));
        if (tiled) graphc_pool_tiled_REAL(kind, x, mx, gz, o, &g);
        for (npy_intp l = 0; l < g.lead && !tiled; l++) {
            const REAL *xl = x + l * plane;
            REAL *gl = o + l * plane;
            for (npy_intp i = 0; i < g.oh; i++)
                for (npy_intp j = 0; j < g.ow; j++) {
                    npy_intp r0, r1, c0, c1, count, q = l * oplane + i * g.ow + j;
                    graphc_pool_window(&g, i, j, &r0, &r1, &c0, &c1, &count);
                    if (kind == 0) {
                        REAL acc = mode == 0 ? -(REAL)INFINITY : (REAL)0;
                        for (npy_intp r = r0; r < r1; r++)
                            for (npy_intp c = c0; c < c1; c++) {
                                REAL v = xl[r * g.w + c];
                                if (mode == 0) { if (v > acc || v != v) acc = v; }
                                else acc += v;
                            }
                        if (mode >= 2) acc /= (REAL)count;
                        o[q] = acc;
                    } else if (kind == 1) {
                        const REAL m = mx[q], d = gz[q];
                        for (npy_intp r = r0; r < r1; r++)
                            for (npy_intp c = c0; c < c1; c++)
                                if (xl[r * g.w + c] == m) gl[r * g.w + c] += d;
                    } else {
                        const REAL d = mode >= 2 ? gz[q] / (REAL)count : gz[q];
                        for (npy_intp r = r0; r < r1; r++)
                            for (npy_intp c = c0; c < c1; c++) gl[r * g.w + c] += d;
                    }
                }
        }
        Py_END_ALLOW_THREADS
    }
""" + store_out_epilogue(("X", "M", "G"))


def _typed(dtype: str) -> str:
    return typed_template(_TYPED, dtype, UBITS="npy_uint64" if dtype == "float64" else "npy_uint32")


_KIND: dict[type, int] = {Pool: 0, MaxPoolGrad: 1, AveragePoolGrad: 2}


@register_c(Pool, MaxPoolGrad, AveragePoolGrad)
def gen_pool(node: Apply) -> CThunkCode | None:
    dtype = node.outputs[0].type.dtype
    if dtype not in FLOAT_DTYPES or any(i.type.dtype != dtype for i in node.inputs):
        return None
    op = node.op
    kind = _KIND[type(op)]
    args = (kind, "inputs", "o0", _MODE[op.mode], int(op.ignore_border), *op.ws, *op.stride,
            *op.pad)  # fmt: skip
    body = f"if (graphc_pool_{ctype(dtype)}({', '.join(map(str, args))}) < 0) FAIL;"
    return CThunkCode(
        body=body,
        support=(COMMON, _SHARED, _typed(dtype)),
        key=(op, tuple(i.type for i in node.inputs)),
    )
