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

/* Tiles per chunk: as many as fit WINO_BYTES of transformed inputs and products. */
static npy_intp graphc_wino_chunk(const graphc_wino_geom *g, npy_intp itemsize) {{
    const npy_intp nt = g->n * ((g->oh + 1) / 2) * ((g->ow + 1) / 2);
    npy_intp tc = WINO_BYTES / (16 * (g->ci + g->fo) * itemsize);
    if (tc < 16) tc = 16;
    return tc > nt ? (nt > 0 ? nt : 1) : tc;
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

/* v[e] (ci, tc) <- B^T d B of the 4x4 input block d of each tile k < nc of the chunk: tile k
   is image tn[k] at output row ty[k], column tx[k]; inside[k] says whether d lies wholly
   inside the image (no test per element). */
static void graphc_wino_inputs_REAL(const REAL *restrict x, REAL *restrict v, npy_intp tc,
                                    npy_intp nc, const npy_intp *tn, const npy_intp *ty,
                                    const npy_intp *tx, const char *inside,
                                    const graphc_wino_geom *g) {
    const npy_intp plane = g->h * g->w, step = g->ci * tc;
    for (npy_intp c = 0; c < g->ci; c++)
        for (npy_intp k = 0; k < nc; k++) {
            const REAL *img = x + (tn[k] * g->ci + c) * plane;
            const npy_intp y0 = ty[k] - g->ph, x0 = tx[k] - g->pw;
            REAL d[4][4], t[4][4];
            if (inside[k]) {
                const REAL *src = img + y0 * g->w + x0;
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) d[i][j] = src[i * g->w + j];
            } else {
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        const npy_intp yy = y0 + i, xx = x0 + j;
                        d[i][j] = (yy >= 0 && yy < g->h && xx >= 0 && xx < g->w)
                                      ? img[yy * g->w + xx] : (REAL)0;
                    }
            }
            for (int j = 0; j < 4; j++) {
                t[0][j] = d[0][j] - d[2][j];
                t[1][j] = d[1][j] + d[2][j];
                t[2][j] = d[2][j] - d[1][j];
                t[3][j] = d[1][j] - d[3][j];
            }
            REAL *dst = v + c * tc + k;
            for (int i = 0; i < 4; i++) {
                dst[(4 * i + 0) * step] = t[i][0] - t[i][2];
                dst[(4 * i + 1) * step] = t[i][1] + t[i][2];
                dst[(4 * i + 2) * step] = t[i][2] - t[i][1];
                dst[(4 * i + 3) * step] = t[i][1] - t[i][3];
            }
        }
}

/* o <- A^T m A of each tile's 4x4 products m[e] (fo, tc), the 2x2 outputs clipped to the
   image. */
static void graphc_wino_outputs_REAL(const REAL *restrict m, REAL *restrict o, npy_intp tc,
                                     npy_intp nc, const npy_intp *tn, const npy_intp *ty,
                                     const npy_intp *tx, const graphc_wino_geom *g) {
    const npy_intp plane = g->oh * g->ow, step = g->fo * tc;
    for (npy_intp f = 0; f < g->fo; f++)
        for (npy_intp k = 0; k < nc; k++) {
            const REAL *src = m + f * tc + k;
            REAL q[4][4], t[2][4];
            for (int e = 0; e < 16; e++) q[e / 4][e % 4] = src[e * step];
            for (int j = 0; j < 4; j++) {
                t[0][j] = q[0][j] + q[1][j] + q[2][j];
                t[1][j] = q[1][j] - q[2][j] - q[3][j];
            }
            REAL *dst = o + (tn[k] * g->fo + f) * plane + ty[k] * g->ow + tx[k];
            const int rows = ty[k] + 1 < g->oh ? 2 : 1, cols = tx[k] + 1 < g->ow ? 2 : 1;
            for (int i = 0; i < rows; i++) {
                dst[i * g->ow] = t[i][0] + t[i][1] + t[i][2];
                if (cols == 2) dst[i * g->ow + 1] = t[i][1] - t[i][2] - t[i][3];
            }
        }
}

/* o (n, fo, oh, ow) <- x correlated with the 3x3 filters w (graphc_wino_filters_REAL's
   layout); -1 with MemoryError set if a buffer cannot be had. Called without the GIL. */
static int graphc_wino_REAL(const REAL *x, const REAL *w, npy_intp wsf, npy_intp wsc, int rot,
                            REAL *o, const graphc_wino_geom *g) {
    const npy_intp th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, nt = g->n * th * tw;
    const npy_intp tc = graphc_wino_chunk(g, sizeof(REAL));
    int rc = -1;
    REAL *u = (REAL *)malloc((size_t)(16 * g->fo * g->ci) * sizeof(REAL));
    REAL *v = (REAL *)malloc((size_t)(16 * g->ci * tc) * sizeof(REAL));
    REAL *m = (REAL *)malloc((size_t)(16 * g->fo * tc) * sizeof(REAL));
    npy_intp *tiles = (npy_intp *)malloc((size_t)(3 * tc) * sizeof(npy_intp));
    char *inside = (char *)malloc((size_t)tc);
    if (u == NULL || v == NULL || m == NULL || tiles == NULL || inside == NULL) goto done;
    graphc_wino_filters_REAL(w, wsf, wsc, rot, u, g);
    npy_intp *tn = tiles, *ty = tiles + tc, *tx = tiles + 2 * tc;
    graphc_bint FO = (graphc_bint)g->fo, CI = (graphc_bint)g->ci, LD = (graphc_bint)tc;
    REAL one = 1, zero = 0;
    char nn = 'N';
    for (npy_intp t0 = 0; t0 < nt; t0 += tc) {
        const npy_intp nc = nt - t0 < tc ? nt - t0 : tc;
        for (npy_intp k = 0; k < nc; k++) {
            const npy_intp t = t0 + k, r = t % (th * tw);
            tn[k] = t / (th * tw);
            ty[k] = 2 * (r / tw);
            tx[k] = 2 * (r % tw);
            const npy_intp y0 = ty[k] - g->ph, x0 = tx[k] - g->pw;
            inside[k] = y0 >= 0 && y0 + 4 <= g->h && x0 >= 0 && x0 + 4 <= g->w;
        }
        graphc_wino_inputs_REAL(x, v, tc, nc, tn, ty, tx, inside, g);
        graphc_bint M = (graphc_bint)nc;
        /* m[e] (fo, nc) = u[e] (fo, ci) v[e] (ci, nc): Fortran (nc, fo) = v' (nc, ci) u' */
        for (int e = 0; e < 16; e++)
            GEMM(&nn, &nn, &M, &FO, &CI, &one, v + e * g->ci * tc, &LD,
                 u + e * g->fo * g->ci, &CI, &zero, m + e * g->fo * tc, &LD);
        graphc_wino_outputs_REAL(m, o, tc, nc, tn, ty, tx, g);
    }
    rc = 0;
done:
    free(u);
    free(v);
    free(m);
    free(tiles);
    free(inside);
    return rc;
}
"""

