"""C for 3x3, stride-1, undilated convolutions by Winograd's F(2x2, 3x3) algorithm.

Each 2x2 block of output positions (a tile) is computed from the 4x4 block of input
under it: the input block ``d`` becomes ``B^T d B``, each 3x3 filter ``g`` becomes
``G g G^T`` (4x4), and for each of the 16 positions ``e`` of those 4x4 blocks one BLAS
gemm multiplies the ``(out channels, in channels)`` matrix of transformed filters by the
``(in channels, tiles)`` matrix of transformed inputs; ``A^T m A`` turns each 4x4 block
of products back into 2x2 outputs. That is 16 multiplications per tile and channel pair
where im2col + gemm does 36 (2.25x fewer), for two linear transforms of the data.
Tiles go through in chunks whose transformed inputs and products fit ``WINO_BYTES``.

The forward convolution calls it with the filters as they are; the gradient w.r.t. the
input, which is a convolution of the output gradient with the filters turned 180 degrees
and their two channel axes swapped, padded by ``2 - pad``, calls it with those filters.
The gradient w.r.t. the filters of ``A^T [(G g G^T) * (B^T d B)] A`` is
``G^T [(A t A^T) * (B^T d B)] G`` summed over the tiles, ``t`` a tile's 2x2 output
gradient: the same input transform, the 16 products of the ``(out channels, tiles)`` and
``(tiles, in channels)`` matrices accumulated over the chunks, then one inverse transform
per filter.
"""

from __future__ import annotations

from graphc.tensor.conv import WINO_BYTES, WINO_MIN_CHANNELS

WINOGRAD = rf"""
#define WINO_BYTES {WINO_BYTES}
#define WINO_MIN_CHANNELS {WINO_MIN_CHANNELS}
/* A Winograd convolution: x (n, ci, h, w), zero-padded by ph and pw, correlated with
   3x3 filters into o (n, fo, oh, ow). */
typedef struct {{
    npy_intp n, ci, h, w, fo, oh, ow, ph, pw;
}} graphc_wino_geom;

/* The distance between two of the 16 matrices of a chunk's transformed inputs (rows
   channels, tc columns): one cache line more than their size, so that the 16 values of a
   tile, written or read together, do not all fall in the same cache set. */
#define WINO_STEP(channels, tc) ((channels) * (tc) + 16)

/* Tile rows per chunk: as many as fit WINO_BYTES of transformed inputs and products, at
   least one (a row of tiles is (ow + 1) / 2 tiles). */
static npy_intp graphc_wino_chunk(const graphc_wino_geom *g, npy_intp itemsize) {{
    const npy_intp tw = (g->ow + 1) / 2, nrows = g->n * ((g->oh + 1) / 2);
    npy_intp rr = WINO_BYTES / (16 * (g->ci + g->fo) * tw * itemsize);
    if (rr < 1) rr = 1;
    return rr > nrows ? (nrows > 0 ? nrows : 1) : rr;
}}
"""

WINOGRAD_TYPED = r"""
/* u[e] (fo, ci) <- G g G^T of each 3x3 filter g: tap (a, b) of output channel f over input
   channel c is w[f*wsf + c*wsc + t], t = 3a + b, or 8 - t when `rot` (turned 180 degrees). */
static void graphc_wino_filters_REAL(const REAL *w, npy_intp wsf, npy_intp wsc, int rot,
                                     REAL *restrict u, const graphc_wino_geom *g) {
    const npy_intp fc = g->fo * g->ci;
    for (npy_intp f = 0; f < g->fo; f++)
        for (npy_intp c = 0; c < g->ci; c++) {
            const REAL *k = w + f * wsf + c * wsc;
            REAL q[3][3], t[4][3];
            for (int i = 0; i < 9; i++) q[i / 3][i % 3] = k[rot ? 8 - i : i];
            for (int j = 0; j < 3; j++) {
                t[0][j] = q[0][j];
                t[1][j] = (REAL)0.5 * (q[0][j] + q[1][j] + q[2][j]);
                t[2][j] = (REAL)0.5 * (q[0][j] - q[1][j] + q[2][j]);
                t[3][j] = q[2][j];
            }
            REAL *dst = u + f * g->ci + c;
            for (int i = 0; i < 4; i++) {
                dst[(4 * i + 0) * fc] = t[i][0];
                dst[(4 * i + 1) * fc] = (REAL)0.5 * (t[i][0] + t[i][1] + t[i][2]);
                dst[(4 * i + 2) * fc] = (REAL)0.5 * (t[i][0] - t[i][1] + t[i][2]);
                dst[(4 * i + 3) * fc] = t[i][2];
            }
        }
}

/* v[e] (ci, tc) <- B^T d B of the 4x4 input block d of each tile of the chunk: tile rows
   [r0, r0 + nr) (row r: image r / th, output rows 2 (r % th) and the next), tw tiles each.
   Per channel and tile row, the 4 input rows under it are copied zero-padded into `rows`
   (4 x 2 tw + 2), their vertical transform formed along whole rows, then the horizontal
   one per tile: loops over contiguous runs with no test per element. */
static void graphc_wino_inputs_REAL(const REAL *restrict x, REAL *restrict v, npy_intp tc,
                                    npy_intp r0, npy_intp nr, REAL *restrict rows,
                                    const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, wp = 2 * tw + 2;
    const npy_intp step = WINO_STEP(g->ci, tc);
    const npy_intp lo = g->pw < wp ? g->pw : wp, hi = g->pw + g->w < wp ? g->pw + g->w : wp;
    REAL *restrict t = rows + 4 * wp;
    for (npy_intp c = 0; c < g->ci; c++)
        for (npy_intp r = 0; r < nr; r++) {
            const npy_intp img = (r0 + r) / th, y0 = 2 * ((r0 + r) % th) - g->ph;
            const REAL *plane = x + (img * g->ci + c) * g->h * g->w;
            for (int i = 0; i < 4; i++) {
                REAL *row = rows + i * wp;
                const npy_intp y = y0 + i;
                if (y < 0 || y >= g->h || hi <= lo) {
                    memset(row, 0, (size_t)wp * sizeof(REAL));
                    continue;
                }
                memset(row, 0, (size_t)lo * sizeof(REAL));
                memcpy(row + lo, plane + y * g->w + (lo - g->pw), (size_t)(hi - lo) * sizeof(REAL));
                memset(row + hi, 0, (size_t)(wp - hi) * sizeof(REAL));
            }
            for (npy_intp j = 0; j < wp; j++) {
                const REAL d0 = rows[j], d1 = rows[wp + j], d2 = rows[2 * wp + j];
                const REAL d3 = rows[3 * wp + j];
                t[j] = d0 - d2;
                t[wp + j] = d1 + d2;
                t[2 * wp + j] = d2 - d1;
                t[3 * wp + j] = d1 - d3;
            }
            REAL *dst = v + c * tc + r * tw;
            for (int i = 0; i < 4; i++) {
                const REAL *ti = t + i * wp;
                REAL *restrict e0 = dst + (4 * i) * step, *restrict e1 = e0 + step;
                REAL *restrict e2 = e1 + step, *restrict e3 = e2 + step;
                for (npy_intp k = 0; k < tw; k++) {
                    const REAL a = ti[2 * k], b = ti[2 * k + 1], cc = ti[2 * k + 2];
                    const REAL dd = ti[2 * k + 3];
                    e0[k] = a - cc;
                    e1[k] = b + cc;
                    e2[k] = cc - b;
                    e3[k] = b - dd;
                }
            }
        }
}

/* o <- A^T m A of each tile's 4x4 products m[e] (fo, tc) for tile rows [r0, r0 + nr): per
   output channel and tile row, two output rows formed in `rows` (2 x 2 tw) and copied out
   clipped to the image. */
static void graphc_wino_outputs_REAL(const REAL *restrict m, REAL *restrict o, npy_intp tc,
                                     npy_intp r0, npy_intp nr, REAL *restrict rows,
                                     const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, step = WINO_STEP(g->fo, tc);
    for (npy_intp f = 0; f < g->fo; f++)
        for (npy_intp r = 0; r < nr; r++) {
            const npy_intp img = (r0 + r) / th, y = 2 * ((r0 + r) % th);
            const REAL *src = m + f * tc + r * tw;
            REAL *restrict top = rows, *restrict bot = rows + 2 * tw;
            for (npy_intp k = 0; k < tw; k++) {
                REAL q[16];
                for (int e = 0; e < 16; e++) q[e] = src[e * step + k];
                const REAL t0 = q[0] + q[4] + q[8], t1 = q[1] + q[5] + q[9];
                const REAL t2 = q[2] + q[6] + q[10], t3 = q[3] + q[7] + q[11];
                const REAL b0 = q[4] - q[8] - q[12], b1 = q[5] - q[9] - q[13];
                const REAL b2 = q[6] - q[10] - q[14], b3 = q[7] - q[11] - q[15];
                top[2 * k] = t0 + t1 + t2;
                top[2 * k + 1] = t1 - t2 - t3;
                bot[2 * k] = b0 + b1 + b2;
                bot[2 * k + 1] = b1 - b2 - b3;
            }
            REAL *dst = o + ((img * g->fo + f) * g->oh + y) * g->ow;
            memcpy(dst, top, (size_t)g->ow * sizeof(REAL));
            if (y + 1 < g->oh) memcpy(dst + g->ow, bot, (size_t)g->ow * sizeof(REAL));
        }
}

/* u[e] (fo, tc) <- A t A^T of the 2x2 block t of output gradient of each tile of the
   chunk (tile rows [r0, r0 + nr), as graphc_wino_inputs_REAL's), zero past the output's
   last row and column: per output channel and tile row, its two rows are copied
   zero-padded into `rows` (2 x 2 tw) and transformed with no test per element. */
static void graphc_wino_grads_REAL(const REAL *restrict top, REAL *restrict u, npy_intp tc,
                                   npy_intp r0, npy_intp nr, REAL *restrict rows,
                                   const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, step = WINO_STEP(g->fo, tc);
    REAL *restrict up = rows, *restrict dn = rows + 2 * tw;
    for (npy_intp f = 0; f < g->fo; f++)
        for (npy_intp r = 0; r < nr; r++) {
            const npy_intp img = (r0 + r) / th, y = 2 * ((r0 + r) % th);
            const REAL *src = top + ((img * g->fo + f) * g->oh + y) * g->ow;
            memcpy(up, src, (size_t)g->ow * sizeof(REAL));
            if (y + 1 < g->oh) memcpy(dn, src + g->ow, (size_t)g->ow * sizeof(REAL));
            else memset(dn, 0, (size_t)g->ow * sizeof(REAL));
            for (npy_intp j = g->ow; j < 2 * tw; j++) up[j] = dn[j] = 0;
            REAL *dst = u + f * tc + r * tw;
            for (npy_intp k = 0; k < tw; k++) {
                const REAL p = up[2 * k], q = up[2 * k + 1], s = dn[2 * k], t = dn[2 * k + 1];
                /* the rows of A t: (p, q), (p + s, q + t), (p - s, q - t), (-s, -t); then
                   each row (a, b) times A^T: (a, a + b, a - b, -b) */
                const REAL a[4] = {p, p + s, p - s, -s}, b[4] = {q, q + t, q - t, -t};
                for (int i = 0; i < 4; i++) {
                    dst[(4 * i) * step + k] = a[i];
                    dst[(4 * i + 1) * step + k] = a[i] + b[i];
                    dst[(4 * i + 2) * step + k] = a[i] - b[i];
                    dst[(4 * i + 3) * step + k] = -b[i];
                }
            }
        }
}

/* gw (fo, ci, 3, 3) <- the gradient of the correlation of x with 3x3 filters given its
   output gradient top (n, fo, oh, ow): per filter pair, G^T m G of the 4x4 sum m over
   every tile of (A t A^T) * (B^T d B), summed by 16 BLAS gemms per chunk of tiles; taps
   turned 180 degrees when `flip`. -1 if a buffer cannot be had. Called without the GIL. */
static int graphc_wino_wgrad_REAL(const REAL *x, const REAL *top, REAL *gw, int flip,
                                  const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, nrows = g->n * th;
    const npy_intp rc_rows = graphc_wino_chunk(g, sizeof(REAL)), tc = rc_rows * tw;
    const npy_intp fc = g->fo * g->ci;
    int rc = -1;
    REAL *v = (REAL *)malloc((size_t)(16 * WINO_STEP(g->ci, tc)) * sizeof(REAL));
    REAL *u = (REAL *)malloc((size_t)(16 * WINO_STEP(g->fo, tc)) * sizeof(REAL));
    REAL *m = (REAL *)calloc((size_t)(16 * fc > 0 ? 16 * fc : 1), sizeof(REAL));
    REAL *rows = (REAL *)malloc((size_t)(8 * (2 * tw + 2)) * sizeof(REAL));
    if (u == NULL || v == NULL || m == NULL || rows == NULL) goto done;
    graphc_bint FO = (graphc_bint)g->fo, CI = (graphc_bint)g->ci, LD = (graphc_bint)tc;
    REAL one = 1;
    char nn = 'N', tt = 'T';
    for (npy_intp r0 = 0; r0 < nrows && fc > 0; r0 += rc_rows) {
        const npy_intp nr = nrows - r0 < rc_rows ? nrows - r0 : rc_rows;
        graphc_wino_inputs_REAL(x, v, tc, r0, nr, rows, g);
        graphc_wino_grads_REAL(top, u, tc, r0, nr, rows, g);
        graphc_bint M = (graphc_bint)(nr * tw);
        /* m[e] (fo, ci) += u[e] (fo, M) v[e]' (M, ci): Fortran (ci, fo) = v (ci, M) u' */
        for (int e = 0; e < 16; e++)
            GEMM(&tt, &nn, &CI, &FO, &M, &one, v + e * WINO_STEP(g->ci, tc), &LD,
                 u + e * WINO_STEP(g->fo, tc), &LD, &one, m + e * fc, &CI);
    }
    for (npy_intp q = 0; q < fc; q++) {
        REAL t[3][4], o[9];
        for (int j = 0; j < 4; j++) { /* G^T m: rows m0 + (m1 + m2) / 2, (m1 - m2) / 2, ... */
            const REAL m0 = m[j * fc + q], m1 = m[(4 + j) * fc + q];
            const REAL m2 = m[(8 + j) * fc + q], m3 = m[(12 + j) * fc + q];
            t[0][j] = m0 + (REAL)0.5 * (m1 + m2);
            t[1][j] = (REAL)0.5 * (m1 - m2);
            t[2][j] = (REAL)0.5 * (m1 + m2) + m3;
        }
        for (int i = 0; i < 3; i++) { /* ... then times G */
            o[3 * i] = t[i][0] + (REAL)0.5 * (t[i][1] + t[i][2]);
            o[3 * i + 1] = (REAL)0.5 * (t[i][1] - t[i][2]);
            o[3 * i + 2] = (REAL)0.5 * (t[i][1] + t[i][2]) + t[i][3];
        }
        for (int k = 0; k < 9; k++) gw[q * 9 + k] = o[flip ? 8 - k : k];
    }
    rc = 0;
done:
    free(u);
    free(v);
    free(m);
    free(rows);
    return rc;
}

/* o (n, fo, oh, ow) <- x correlated with the 3x3 filters w (graphc_wino_filters_REAL's
   layout); -1 with MemoryError set if a buffer cannot be had. Called without the GIL. */
static int graphc_wino_REAL(const REAL *x, const REAL *w, npy_intp wsf, npy_intp wsc, int rot,
                            REAL *o, const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, nrows = g->n * th;
    const npy_intp rc_rows = graphc_wino_chunk(g, sizeof(REAL)), tc = rc_rows * tw;
    int rc = -1;
    REAL *u = (REAL *)malloc((size_t)(16 * g->fo * g->ci) * sizeof(REAL));
    REAL *v = (REAL *)malloc((size_t)(16 * WINO_STEP(g->ci, tc)) * sizeof(REAL));
    REAL *m = (REAL *)malloc((size_t)(16 * WINO_STEP(g->fo, tc)) * sizeof(REAL));
    REAL *rows = (REAL *)malloc((size_t)(8 * (2 * tw + 2)) * sizeof(REAL));
    if (u == NULL || v == NULL || m == NULL || rows == NULL) goto done;
    graphc_wino_filters_REAL(w, wsf, wsc, rot, u, g);
    graphc_bint FO = (graphc_bint)g->fo, CI = (graphc_bint)g->ci, LD = (graphc_bint)tc;
    REAL one = 1, zero = 0;
    char nn = 'N';
    for (npy_intp r0 = 0; r0 < nrows; r0 += rc_rows) {
        const npy_intp nr = nrows - r0 < rc_rows ? nrows - r0 : rc_rows;
        graphc_wino_inputs_REAL(x, v, tc, r0, nr, rows, g);
        graphc_bint M = (graphc_bint)(nr * tw);
        /* m[e] (fo, M) = u[e] (fo, ci) v[e] (ci, M): Fortran (M, fo) = v' (M, ci) u' */
        for (int e = 0; e < 16; e++)
            GEMM(&nn, &nn, &M, &FO, &CI, &one, v + e * WINO_STEP(g->ci, tc), &LD,
                 u + e * g->fo * g->ci, &CI, &zero, m + e * WINO_STEP(g->fo, tc), &LD);
        graphc_wino_outputs_REAL(m, o, tc, r0, nr, rows, g);
    }
    rc = 0;
done:
    free(u);
    free(v);
    free(m);
    free(rows);
    return rc;
}
"""
