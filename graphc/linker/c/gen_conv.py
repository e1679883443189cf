"""C for Conv2d and its gradient Ops: im2col and one BLAS gemm per chunk of columns.

For a chunk the columns buffer is ``(C*KH*KW, positions)`` (row ``(c, a, b)`` holds the
input under filter tap ``(a, b)`` of channel ``c`` at every output position of the chunk,
zero where the tap falls in the padding), at most ``C_CHUNK_BYTES`` so that it is written
and packed by BLAS in L2. Images of fewer than ``C_BATCH_BELOW`` output positions go
several to a chunk (few, larger products; the result passes through a chunk matrix in
NCHW order); larger ones one at a time, in tiles of whole output rows, the products
reading and writing the image's ``(F, OH*OW)`` plane in place (leading dimension OH*OW).
The forward pass forms ``W @ cols``; the gradient w.r.t. the filters accumulates
``top @ cols^T`` (in float32 transposed, ``cols @ top^T``; images batched in chunks of
at most ``C_WGRAD_CHUNK_BYTES``; by Winograd where the forward pass runs it); the
gradient w.r.t. the input forms ``W^T @ top`` and adds it back over the windows
(col2im). im2col and col2im copy each output row's in-image span without a test per
element. BLAS is the library ``gen_blas.loader()`` loads. float32 and float64;
inputs of another float dtype are cast to the output's.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.common import (
    COMMON,
    FLOAT_DTYPES,
    ctype,
    store_out_epilogue,
    typed_template,
)
from graphc.linker.c.gen_blas import HELPERS, loader
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.linker.c.winograd import WINOGRAD, WINOGRAD_TYPED
from graphc.tensor.conv import (
    C_BATCH_BELOW,
    C_CHUNK_BYTES,
    C_WGRAD_CHUNK_BYTES,
    WINO_WGRAD_DTYPES,
    Conv2d,
    Conv2dGradInputs,
    Conv2dGradWeights,
)

_GEMM = {"float32": "graphc_sgemm", "float64": "graphc_dgemm"}
# The filters' gradient of these dtypes is formed transposed, (C*KH*KW, F), the small
# output gradient as BLAS's first operand and the columns as its second: OpenBLAS's
# float32 kernels ran the weight gradients 17-22% faster so (LeNet layer 2, VGG-like
# 3x3 layers); its float64 kernels 6-8% slower.
GW_TRANSPOSED_DTYPES = ("float32",)

_CHUNK = (
    f"#define CHUNK_BYTES {C_CHUNK_BYTES}\n#define WGRAD_CHUNK_BYTES {C_WGRAD_CHUNK_BYTES}\n"
    f"#define BATCH_BELOW {C_BATCH_BELOW}\n"
)

_GEOMETRY = r"""
/* n bytes of a row; the widths of small images' rows as fixed-size copies, which the
   compiler inlines: a memcpy call per 8-double row cost more than the copy (im2col of
   LeNet's layer 2: the filters' gradient 0.93x the time, the forward pass 0.94x) */
static inline void graphc_copy_row(void *dst, const void *src, size_t n) {
    switch (n) {
    case 32: memcpy(dst, src, 32); return;
    case 64: memcpy(dst, src, 64); return;
    case 96: memcpy(dst, src, 96); return;
    case 128: memcpy(dst, src, 128); return;
    case 192: memcpy(dst, src, 192); return;
    case 256: memcpy(dst, src, 256); return;
    default: memcpy(dst, src, n);
    }
}

/* The geometry of one convolution; sizes are checked before any buffer is touched. */
typedef struct {
    npy_intp n, c, h, w, f, kh, kw, oh, ow;
    npy_intp ph, pw, sh, sw, dh, dw;
    int flip;
} graphc_conv_geom;

/* Padding of border mode `mode` (0 valid, 1 full, 2 half, 3 explicit ph/pw). */
static void graphc_conv_pads(graphc_conv_geom *g, int mode, npy_intp ph, npy_intp pw) {
    npy_intp span_h = (g->kh - 1) * g->dh + 1, span_w = (g->kw - 1) * g->dw + 1;
    if (mode == 0) { g->ph = 0; g->pw = 0; }
    else if (mode == 1) { g->ph = span_h - 1; g->pw = span_w - 1; }
    else if (mode == 2) { g->ph = span_h / 2; g->pw = span_w / 2; }
    else { g->ph = ph; g->pw = pw; }
    npy_intp th = g->h + 2 * g->ph - span_h, tw = g->w + 2 * g->pw - span_w;
    g->oh = th < 0 ? 0 : th / g->sh + 1;
    g->ow = tw < 0 ? 0 : tw / g->sw + 1;
}

/* A C-contiguous aligned array of `typenum` holding `obj` (new reference), checked 4-d. */
static PyArrayObject *graphc_conv_in(PyObject *obj, int typenum, const char *what) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(obj, typenum, NPY_ARRAY_IN_ARRAY);
    if (a != NULL && PyArray_NDIM(a) != 4) {
        PyErr_Format(PyExc_ValueError, "conv2d: %s must be 4-d", what);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* (rows, cols) from a length-2 integer vector. */
static int graphc_conv_hw(PyObject *obj, npy_intp *a, npy_intp *b, const char *what) {
    PyArrayObject *v = (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_INT64, NPY_ARRAY_IN_ARRAY);
    if (v == NULL) return -1;
    if (PyArray_NDIM(v) != 1 || PyArray_DIM(v, 0) != 2) {
        PyErr_Format(PyExc_ValueError, "conv2d gradient: %s must have 2 entries", what);
        Py_DECREF(v);
        return -1;
    }
    *a = (npy_intp)((npy_int64 *)PyArray_DATA(v))[0];
    *b = (npy_intp)((npy_int64 *)PyArray_DATA(v))[1];
    Py_DECREF(v);
    if (*a < 1 || *b < 1) {
        PyErr_Format(PyExc_ValueError, "conv2d gradient: %s must be positive", what);
        return -1;
    }
    return 0;
}

/* Images per BLAS call: as many as fit a `chunk`-byte columns buffer, at least one (the
   Ops' workspace_bytes use the same rule). */
static npy_intp graphc_conv_batch(npy_intp n, npy_intp taps, npy_intp p, npy_intp itemsize,
                                  npy_intp chunk) {
    if (p >= BATCH_BELOW) return 1;
    npy_intp one = taps * p * itemsize;
    npy_intp b = chunk / (one > 0 ? one : 1);
    if (b > n) b = n;
    return b < 1 ? 1 : b;
}

/* Filter column b reads input column j*sw + off at output column j (off returned); the
   output columns [*j0, *j1) are those inside the image, the others read padding. */
static npy_intp graphc_conv_span(const graphc_conv_geom *g, npy_intp b, npy_intp *j0,
                                 npy_intp *j1) {
    const npy_intp off = b * g->dw - g->pw;
    npy_intp lo = off < 0 ? (-off + g->sw - 1) / g->sw : 0;
    npy_intp hi = g->w - off <= 0 ? 0 : (g->w - off + g->sw - 1) / g->sw;
    if (hi > g->ow) hi = g->ow;
    if (lo > hi) lo = hi;
    *j0 = lo;
    *j1 = hi;
    return off;
}

/* Output rows per tile when images go one at a time: as many as fit `chunk` bytes of
   columns, at least one (the Ops' workspace_bytes use the same rule). */
static npy_intp graphc_conv_rows(npy_intp taps, npy_intp ow, npy_intp oh, npy_intp itemsize,
                                 npy_intp chunk) {
    npy_intp one = taps * ow * itemsize;
    npy_intp r = chunk / (one > 0 ? one : 1);
    if (r > oh) r = oh;
    return r < 1 ? 1 : r;
}

/* Whether Winograd F(2x2, 3x3) runs this convolution (kind 0) or input gradient (kind 1):
   3x3 filters, stride 1, no dilation, enough channels, and for the gradient a padding of
   at most 2 (the transposed convolution's padding is 2 - pad). */
static int graphc_conv_wino_ok(const graphc_conv_geom *g, int kind) {
    if (g->kh != 3 || g->kw != 3 || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1)
        return 0;
    if (g->c < WINO_MIN_CHANNELS || g->f < WINO_MIN_CHANNELS) return 0;
    return kind == 0 || (kind == 1 && g->ph <= 2 && g->pw <= 2);
}

/* Whether BLAS (graphc_bint dimensions) can take this geometry; sets ValueError if not. */
static int graphc_conv_fits(const graphc_conv_geom *g) {
    npy_intp ckk = g->c * g->kh * g->kw, p = g->oh * g->ow;
    if (ckk > GRAPHC_BINT_MAX || g->f > GRAPHC_BINT_MAX || ckk * p > NPY_MAX_INTP / 8 ||
        graphc_conv_batch(g->n, ckk, p, 8, CHUNK_BYTES) * p > GRAPHC_BINT_MAX) {
        PyErr_SetString(PyExc_ValueError, "conv2d: sizes too large for BLAS");
        return -1;
    }
    return 0;
}
"""

_TYPED = r"""
/* cols (C*KH*KW rows, `p` apart; (i1 - i0)*OW used) <- the windows of image x (C, H, W)
   at output rows [i0, i1). Per filter column b the output columns [j0, j1) read inside
   the image (graphc_conv_span): the rows are copied without a test per element, the
   padding around them zeroed. */
static void graphc_im2col_REAL(const REAL *restrict x, REAL *restrict cols, npy_intp p,
                               const graphc_conv_geom *g, npy_intp i0, npy_intp i1) {
    const npy_intp ow = g->ow, sw = g->sw;
    for (npy_intp c = 0; c < g->c; c++)
        for (npy_intp a = 0; a < g->kh; a++)
            for (npy_intp b = 0; b < g->kw; b++) {
                REAL *row = cols + ((c * g->kh + a) * g->kw + b) * p;
                npy_intp j0, j1;
                const npy_intp off = graphc_conv_span(g, b, &j0, &j1);
                for (npy_intp i = i0; i < i1; i++) {
                    const npy_intp y = i * g->sh + a * g->dh - g->ph;
                    REAL *dst = row + (i - i0) * ow;
                    if (y < 0 || y >= g->h) {
                        memset(dst, 0, (size_t)ow * sizeof(REAL));
                        continue;
                    }
                    const REAL *src = x + (c * g->h + y) * g->w + off;
                    for (npy_intp j = 0; j < j0; j++) dst[j] = 0;
                    if (sw == 1)
                        graphc_copy_row(dst + j0, src + j0, (size_t)(j1 - j0) * sizeof(REAL));
                    else
                        for (npy_intp j = j0; j < j1; j++) dst[j] = src[j * sw];
                    for (npy_intp j = j1; j < ow; j++) dst[j] = 0;
                }
            }
}

/* gx (C, H, W) += the columns of output rows [i0, i1) added back over their windows (gx
   zeroed by the caller). */
static void graphc_col2im_REAL(const REAL *restrict cols, REAL *restrict gx, npy_intp p,
                               const graphc_conv_geom *g, npy_intp i0, npy_intp i1) {
    const npy_intp ow = g->ow, sw = g->sw;
    for (npy_intp c = 0; c < g->c; c++)
        for (npy_intp a = 0; a < g->kh; a++)
            for (npy_intp b = 0; b < g->kw; b++) {
                const REAL *row = cols + ((c * g->kh + a) * g->kw + b) * p;
                npy_intp j0, j1;
                const npy_intp off = graphc_conv_span(g, b, &j0, &j1);
                for (npy_intp i = i0; i < i1; i++) {
                    const npy_intp y = i * g->sh + a * g->dh - g->ph;
                    if (y < 0 || y >= g->h) continue;
                    REAL *dst = gx + (c * g->h + y) * g->w + off;
                    const REAL *src = row + (i - i0) * ow;
                    if (sw == 1)
                        for (npy_intp j = j0; j < j1; j++) dst[j] += src[j];
                    else
                        for (npy_intp j = j0; j < j1; j++) dst[j * sw] += src[j];
                }
            }
}

/* The filters as a C-ordered (F, C*KH*KW) matrix, flipped in both spatial axes if asked
   (a malloc'ed copy; NULL with MemoryError set on failure). */
static REAL *graphc_conv_wmat_REAL(const REAL *w, const graphc_conv_geom *g) {
    const npy_intp taps = g->kh * g->kw, n = g->f * g->c * taps;
    REAL *out = (REAL *)malloc((size_t)(n > 0 ? n : 1) * sizeof(REAL));
    if (out == NULL) { PyErr_NoMemory(); return NULL; }
    for (npy_intp q = 0; q < g->f * g->c; q++)
        for (npy_intp t = 0; t < taps; t++)
            out[q * taps + t] = w[q * taps + (g->flip ? taps - 1 - t : t)];
    return out;
}

/* kind 0: out = conv(a=x, b=w); 1: out = d/dx from (a=w, b=top); 2: out = d/dw from
   (a=x, b=top). hw: the input's (kind 1) or the filters' (kind 2) rows and columns. */
static int graphc_conv_REAL(int kind, PyObject *a_obj, PyObject *b_obj, PyObject *hw_obj,
                            PyObject **slot, int mode, npy_intp eph, npy_intp epw,
                            npy_intp sh, npy_intp sw, npy_intp dh, npy_intp dw, int flip) {
    int rc = -1;
    PyArrayObject *A = NULL, *B = NULL, *out = NULL;
    REAL *cols = NULL, *mid = NULL, *wmat = NULL, *gw = NULL;
    graphc_conv_geom g;
    g.sh = sh; g.sw = sw; g.dh = dh; g.dw = dw; g.flip = flip;
    A = graphc_conv_in(a_obj, TYPENUM, kind == 1 ? "filters" : "input");
    B = graphc_conv_in(b_obj, TYPENUM, kind == 0 ? "filters" : "output gradient");
    if (A == NULL || B == NULL) goto done;
    npy_intp *da = PyArray_DIMS(A), *db = PyArray_DIMS(B);
    if (kind == 0) {
        g.n = da[0]; g.c = da[1]; g.h = da[2]; g.w = da[3];
        g.f = db[0]; g.kh = db[2]; g.kw = db[3];
        if (db[1] != g.c) {
            PyErr_Format(PyExc_ValueError, "Conv2d: input has %zd channels, filters %zd",
                         (Py_ssize_t)g.c, (Py_ssize_t)db[1]);
            goto done;
        }
    } else if (kind == 1) {
        g.f = da[0]; g.c = da[1]; g.kh = da[2]; g.kw = da[3]; g.n = db[0];
        if (graphc_conv_hw(hw_obj, &g.h, &g.w, "input_hw") < 0) goto done;
    } else {
        g.n = da[0]; g.c = da[1]; g.h = da[2]; g.w = da[3]; g.f = db[1];
        if (graphc_conv_hw(hw_obj, &g.kh, &g.kw, "filter_hw") < 0) goto done;
    }
    graphc_conv_pads(&g, mode, eph, epw);
    if (g.oh <= 0 || g.ow <= 0) {
        PyErr_Format(PyExc_ValueError,
                     "Conv2d: no output: input (%zd, %zd) with filters (%zd, %zd) gives no output "
                     "(the padded input is smaller than the dilated filter)",
                     (Py_ssize_t)g.h, (Py_ssize_t)g.w, (Py_ssize_t)g.kh, (Py_ssize_t)g.kw);
        goto done;
    }
    if (kind != 0 && (db[0] != g.n || db[1] != g.f || db[2] != g.oh || db[3] != g.ow)) {
        PyErr_Format(PyExc_ValueError,
                     "Conv2d gradient: output gradient of shape (%zd, %zd, %zd, %zd) does not "
                     "match (expected (%zd, %zd, %zd, %zd))",
                     (Py_ssize_t)db[0], (Py_ssize_t)db[1], (Py_ssize_t)db[2], (Py_ssize_t)db[3],
                     (Py_ssize_t)g.n, (Py_ssize_t)g.f, (Py_ssize_t)g.oh, (Py_ssize_t)g.ow);
        goto done;
    }
    if (graphc_conv_fits(&g) < 0) goto done;
    const npy_intp ckk = g.c * g.kh * g.kw, p = g.oh * g.ow;
    npy_intp dims[4];
    if (kind == 0) { dims[0] = g.n; dims[1] = g.f; dims[2] = g.oh; dims[3] = g.ow; }
    else if (kind == 1) { dims[0] = g.n; dims[1] = g.c; dims[2] = g.h; dims[3] = g.w; }
    else { dims[0] = g.f; dims[1] = g.c; dims[2] = g.kh; dims[3] = g.kw; }
    out = graphc_out_array(slot, 4, dims, TYPENUM);
    if (out == NULL) goto done;
    REAL *o = (REAL *)PyArray_DATA(out);
    if (kind == 2 && WINO_WGRAD && graphc_conv_wino_ok(&g, 0)) {
        const graphc_wino_geom wg = {g.n, g.c, g.h, g.w, g.f, g.oh, g.ow, g.ph, g.pw};
        const REAL *x = (const REAL *)PyArray_DATA(A), *top = (const REAL *)PyArray_DATA(B);
        int wrc;
        Py_BEGIN_ALLOW_THREADS
        wrc = graphc_wino_wgrad_REAL(x, top, o, g.flip, &wg);
        Py_END_ALLOW_THREADS
        if (wrc < 0) { PyErr_NoMemory(); goto done; }
        goto stored;
    }
    if (kind != 2 && graphc_conv_wino_ok(&g, kind)) {
        wmat = graphc_conv_wmat_REAL((const REAL *)PyArray_DATA(kind == 0 ? B : A), &g);
        if (wmat == NULL) goto done;
        /* the input gradient: the output gradient correlated with the filters turned 180
           degrees, their channel axes swapped, padded by 2 - pad */
        const graphc_wino_geom wg = kind == 0
            ? (graphc_wino_geom){g.n, g.c, g.h, g.w, g.f, g.oh, g.ow, g.ph, g.pw}
            : (graphc_wino_geom){g.n, g.f, g.oh, g.ow, g.c, g.h, g.w, 2 - g.ph, 2 - g.pw};
        const REAL *src = (const REAL *)PyArray_DATA(kind == 0 ? A : B);
        int wrc;
        Py_BEGIN_ALLOW_THREADS
        wrc = kind == 0 ? graphc_wino_REAL(src, wmat, ckk, 9, 0, o, &wg)
                        : graphc_wino_REAL(src, wmat, 9, ckk, 1, o, &wg);
        Py_END_ALLOW_THREADS
        if (wrc < 0) { PyErr_NoMemory(); goto done; }
        goto stored;
    }
    const npy_intp chunk = kind == 2 && p < BATCH_BELOW ? WGRAD_CHUNK_BYTES : CHUNK_BYTES;
    const npy_intp batch = graphc_conv_batch(g.n, ckk, p, sizeof(REAL), chunk);
    /* one image a chunk: its output rows in tiles of `rt` rows */
    const npy_intp rt =
        batch > 1 ? g.oh : graphc_conv_rows(ckk, g.ow, g.oh, sizeof(REAL), chunk);
    const npy_intp bp = batch > 1 ? batch * p : rt * g.ow; /* columns of one chunk */
    cols = (REAL *)malloc((size_t)(ckk * bp) * sizeof(REAL));
    /* one image per chunk: the products read and write the images' (F, P) planes in place */
    if (batch > 1) mid = (REAL *)malloc((size_t)(g.f * bp > 0 ? g.f * bp : 1) * sizeof(REAL));
    if (cols == NULL || (batch > 1 && mid == NULL)) { PyErr_NoMemory(); goto done; }
    if (kind != 2) {
        wmat = graphc_conv_wmat_REAL((const REAL *)PyArray_DATA(kind == 0 ? B : A), &g);
        if (wmat == NULL) goto done;
    } else {
        gw = (REAL *)calloc((size_t)(g.f * ckk > 0 ? g.f * ckk : 1), sizeof(REAL));
        if (gw == NULL) { PyErr_NoMemory(); goto done; }
    }
    {
        graphc_bint F = (graphc_bint)g.f, K = (graphc_bint)ckk;
        REAL one = 1, zero = 0;
        char nn = 'N', tt = 'T';
        const REAL *top = kind == 0 ? NULL : (const REAL *)PyArray_DATA(B);
        const REAL *x = kind == 1 ? NULL : (const REAL *)PyArray_DATA(A);
        const npy_intp img = g.c * g.h * g.w;
        Py_BEGIN_ALLOW_THREADS
        if (kind == 1) memset(o, 0, (size_t)PyArray_NBYTES(out));
        for (npy_intp n0 = 0; n0 < g.n && F > 0 && K > 0; n0 += batch)
        for (npy_intp i0 = 0; i0 < g.oh; i0 += rt) {
            const npy_intp nb = g.n - n0 < batch ? g.n - n0 : batch;
            const npy_intp i1 = g.oh - i0 < rt ? g.oh : i0 + rt;
            graphc_bint M = (graphc_bint)(batch > 1 ? nb * p : (i1 - i0) * g.ow);
            graphc_bint LD = (graphc_bint)bp, LP = (graphc_bint)(batch > 1 ? bp : p);
            REAL *plane = batch > 1 ? mid
                        : (kind == 0 ? o : (REAL *)top) + n0 * g.f * p + i0 * g.ow;
            if (kind != 0 && batch > 1) /* mid (F, nb*P) <- top[n0 : n0+nb] (nb, F, P) */
                for (npy_intp b = 0; b < nb; b++)
                    for (npy_intp f = 0; f < g.f; f++)
                        memcpy(mid + f * bp + b * p, top + ((n0 + b) * g.f + f) * p,
                               (size_t)p * sizeof(REAL));
            if (kind != 1)
                for (npy_intp b = 0; b < nb; b++)
                    graphc_im2col_REAL(x + (n0 + b) * img, cols + b * p, bp, &g, i0, i1);
            if (kind == 0) {
                /* mid (F, M) = W (F, K) cols (K, M): Fortran (M, F) = cols' (M, K) W' */
                GEMM(&nn, &nn, &M, &F, &K, &one, cols, &LD, wmat, &K, &zero, plane, &LP);
                for (npy_intp b = 0; b < nb && batch > 1; b++)
                    for (npy_intp f = 0; f < g.f; f++)
                        memcpy(o + ((n0 + b) * g.f + f) * p, mid + f * bp + b * p,
                               (size_t)p * sizeof(REAL));
            } else if (kind == 1) {
                /* cols (K, M) = W' mid (F, M): Fortran (M, K) = mid' (M, F) W (F, K) */
                GEMM(&nn, &tt, &M, &K, &F, &one, plane, &LP, wmat, &K, &zero, cols, &LD);
                for (npy_intp b = 0; b < nb; b++)
                    graphc_col2im_REAL(cols + b * p, o + (n0 + b) * img, bp, &g, i0, i1);
            } else {
                if (GW_TRANSPOSED) /* gw' (K, F) += cols (K, M) mid': Fortran (F, K) */
                    GEMM(&tt, &nn, &F, &K, &M, &one, plane, &LP, cols, &LD, &one, gw, &F);
                else /* gw (F, K) += mid (F, M) cols' (M, K): Fortran (K, F) */
                    GEMM(&tt, &nn, &K, &F, &M, &one, cols, &LD, plane, &LP, &one, gw, &K);
            }
        }
        if (kind == 2) {
            const npy_intp taps = g.kh * g.kw;
            /* o[f, c, t] = gw[f, (c, t)] or gw'[(c, t), f], tap t turned if flipping */
            const npy_intp sf = GW_TRANSPOSED ? 1 : ckk, sk = GW_TRANSPOSED ? g.f : 1;
            for (npy_intp f = 0; f < g.f; f++)
                for (npy_intp k = 0; k < ckk; k++) {
                    const npy_intp t = k % taps, src = k - t + (g.flip ? taps - 1 - t : t);
                    o[f * ckk + k] = gw[f * sf + src * sk];
                }
        }
        if (kind == 0 && (F == 0 || K == 0)) memset(o, 0, (size_t)(g.n * g.f * p) * sizeof(REAL));
        Py_END_ALLOW_THREADS
    }
stored:
""" + store_out_epilogue(("A", "B"), ("cols", "mid", "wmat", "gw"))


def _typed(dtype: str) -> str:
    return typed_template(
        WINOGRAD_TYPED + _TYPED,
        dtype,
        GEMM=_GEMM[dtype],
        GW_TRANSPOSED=str(int(dtype in GW_TRANSPOSED_DTYPES)),
        WINO_WGRAD=str(int(dtype in WINO_WGRAD_DTYPES)),
    )


def _border(border_mode: str | tuple[int, int]) -> tuple[int, int, int]:
    if isinstance(border_mode, tuple):
        return 3, border_mode[0], border_mode[1]
    return {"valid": 0, "full": 1, "half": 2}[border_mode], 0, 0


_KIND: dict[type, int] = {Conv2d: 0, Conv2dGradInputs: 1, Conv2dGradWeights: 2}


@register_c(Conv2d, Conv2dGradInputs, Conv2dGradWeights)
def gen_conv(node: Apply) -> CThunkCode | None:
    dtype = node.outputs[0].type.dtype
    if dtype not in FLOAT_DTYPES:
        return None
    op = node.op
    kind = _KIND[type(op)]
    mode, ph, pw = _border(op.border_mode)
    (sh, sw), (dh, dw) = op.subsample, op.filter_dilation
    hw = "inputs[2]" if kind else "NULL"
    body = (
        f"if (graphc_conv_{ctype(dtype)}({kind}, inputs[0], inputs[1], {hw}, o0, {mode}, "
        f"{ph}, {pw}, {sh}, {sw}, {dh}, {dw}, {int(op.filter_flip)}) < 0) FAIL;"
    )
    return CThunkCode(
        body=body,
        support=(COMMON, loader(), HELPERS, _CHUNK, WINOGRAD, _GEOMETRY, _typed(dtype)),
        init=("if (graphc_blas_load() < 0) FAIL;",),
        key=(op, tuple(i.type for i in node.inputs)),
    )
