"""C for RandomVariable: Philox4x64-10 and numpy's algorithms, drawing exactly what numpy's
``Generator(Philox(key, counter))`` draws (the Python ``perform`` is the reference).

Covered: ``uniform`` with scalar parameters, and ``binomial`` with constant ``n`` and ``p``
where numpy uses its inversion algorithm (``n * min(p, 1 - p) <= 30``: dropout masks and
other small counts). Other nodes run their ``perform``.
"""

from __future__ import annotations

import numpy as np

from graphc.graph.basic import Apply, Constant, Variable
from graphc.linker.c.common import COMMON, DTYPES, ctype, typenum
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.tensor.random.op import STATE_SIZE, STATE_TYPE, RandomVariable

PHILOX = r"""
/* Philox4x64-10 as numpy's bit generator runs it: the counter is incremented (with carry)
   before each block of four 64-bit outputs. */
typedef struct { npy_uint64 ctr[4], key[2], buf[4]; int pos; } graphc_philox;

static inline npy_uint64 graphc_mulhilo(npy_uint64 a, npy_uint64 b, npy_uint64 *hi) {
    __uint128_t p = (__uint128_t)a * b;
    *hi = (npy_uint64)(p >> 64);
    return (npy_uint64)p;
}

static npy_uint64 graphc_philox_next(graphc_philox *s) {
    if (s->pos < 4) return s->buf[s->pos++];
    if (++s->ctr[0] == 0 && ++s->ctr[1] == 0 && ++s->ctr[2] == 0) ++s->ctr[3];
    npy_uint64 c0 = s->ctr[0], c1 = s->ctr[1], c2 = s->ctr[2], c3 = s->ctr[3];
    npy_uint64 k0 = s->key[0], k1 = s->key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B97F4A7C15ULL;
            k1 += 0xBB67AE8584CAA73BULL;
        }
        npy_uint64 hi0, hi1;
        npy_uint64 lo0 = graphc_mulhilo(0xD2E7470EE14C6C93ULL, c0, &hi0);
        npy_uint64 lo1 = graphc_mulhilo(0xCA5A826395121157ULL, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    s->buf[0] = c0; s->buf[1] = c1; s->buf[2] = c2; s->buf[3] = c3;
    s->pos = 1;
    return c0;
}

/* low + range * u rounded as numpy rounds it: the product is stored (volatile) so the
   compiler cannot fuse the two operations into one FMA with a different rounding */
static inline double graphc_uniform(graphc_philox *s, double low, double range) {
    volatile double scaled = range * ((double)(graphc_philox_next(s) >> 11) *
                                      (1.0 / 9007199254740992.0));
    return low + scaled;
}

static inline npy_float32 graphc_off_high_f(npy_float32 x, npy_float32 high, npy_float32 below) {
    return x == high ? below : x;
}

static inline double graphc_off_high_d(double x, double high, double below) {
    return x == high ? below : x;
}

static inline double graphc_next_double(graphc_philox *s) {
    return (double)(graphc_philox_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* numpy's inversion algorithm for binomial(n, p), p <= 0.5, n * p <= 30 */
static npy_int64 graphc_binomial_inversion(graphc_philox *s, npy_int64 n, double p) {
    double q = 1.0 - p, qn = exp(n * log(q)), np_ = n * p;
    double lim = np_ + 10.0 * sqrt(np_ * q + 1);
    npy_int64 bound = (npy_int64)((double)n < lim ? (double)n : lim);
    npy_int64 x = 0;
    double px = qn, u = graphc_next_double(s);
    while (u > px) {
        x++;
        if (x > bound) {
            x = 0;
            px = qn;
            u = graphc_next_double(s);
        } else {
            u -= px;
            px = ((n - x + 1) * p * px) / (x * q);
        }
    }
    return x;
}

/* Read a RandomVariable's state and size; allocate the sample (dims from size). */
static int graphc_rv_begin(PyArrayObject *state, PyArrayObject *size, int ndim,
                           graphc_philox *s, npy_intp *dims, const char *name) {
    if (PyArray_TYPE(state) != NPY_UINT64 || PyArray_NDIM(state) != 1 ||
        PyArray_DIM(state, 0) != 6) {
        PyErr_Format(PyExc_ValueError, "%s: a random state must be a uint64 vector of "
                     "length 6", name);
        return -1;
    }
    if (PyArray_TYPE(size) != NPY_INT64 || PyArray_NDIM(size) != 1 ||
        PyArray_DIM(size, 0) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: the sample has %d dimensions but size has %d "
                     "entries", name, ndim, (int)PyArray_DIM(size, 0));
        return -1;
    }
    for (int k = 0; k < 2; k++) s->key[k] = *(npy_uint64 *)PyArray_GETPTR1(state, k);
    for (int k = 0; k < 4; k++) s->ctr[k] = *(npy_uint64 *)PyArray_GETPTR1(state, k + 2);
    s->pos = 4;
    for (int k = 0; k < ndim; k++) {
        dims[k] = (npy_intp)*(npy_int64 *)PyArray_GETPTR1(size, k);
        if (dims[k] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: negative dimensions are not allowed", name);
            return -1;
        }
    }
    return 0;
}

/* The new state: same key, the counter past every block used. */
static int graphc_rv_end(PyObject **slot, const graphc_philox *s) {
    npy_intp n = 6;
    PyArrayObject *out = (PyArrayObject *)PyArray_EMPTY(1, &n, NPY_UINT64, 0);
    if (out == NULL) return -1;
    npy_uint64 *d = (npy_uint64 *)PyArray_DATA(out);
    d[0] = s->key[0]; d[1] = s->key[1];
    for (int k = 0; k < 4; k++) d[k + 2] = s->ctr[k];
    Py_XSETREF(*slot, (PyObject *)out);
    return 0;
}
"""


def _scalar(var: str, dtype: str) -> str:
    return f"(double)*({ctype(dtype)} *)PyArray_DATA({var})"


def _constant_value(v: Variable) -> float | int | bool | None:
    return np.asarray(v.data).item() if isinstance(v, Constant) and v.ndim == 0 else None


_NEXTAFTER = {"float32": "nextafterf", "float64": "nextafter"}


@register_c(RandomVariable)
def gen_random(node: Apply) -> CThunkCode | None:
    op = node.op
    params = node.inputs[2:]
    out_dt = op.dtype
    if out_dt not in DTYPES or STATE_SIZE != 6 or op.state_type is not STATE_TYPE:
        return None
    if any(p.ndim != 0 or p.dtype not in DTYPES for p in params):
        return None
    name = str(op).replace('"', "")
    if op.dist == "uniform":
        if out_dt not in _NEXTAFTER:
            return None
        low, high = _scalar("i2", params[0].dtype), _scalar("i3", params[1].dtype)
        setup = f"""
    double low = {low}, range = {high} - low;
    if (!isfinite(range)) {{
        PyErr_SetString(PyExc_OverflowError, "Range exceeds valid bounds");
        FAIL;
    }}
    /* a draw that rounds to high moves one step toward low (keep_off_high) */
    const {ctype(out_dt)} high_c = ({ctype(out_dt)})({high});
    const {ctype(out_dt)} below_c = {_NEXTAFTER[out_dt]}(high_c, ({ctype(out_dt)})low);"""
        off = "graphc_off_high_f" if out_dt == "float32" else "graphc_off_high_d"
        draw = f"{off}(({ctype(out_dt)}) graphc_uniform(&st, low, range), high_c, below_c)"
    elif op.dist == "binomial":
        n, p = _constant_value(params[0]), _constant_value(params[1])
        if n is None or p is None or int(n) != n or n < 0 or not 0.0 <= p <= 1.0:
            return None
        n, p = int(n), float(p)
        if n == 0 or p == 0.0:
            setup, draw = "", "0"
        elif p <= 0.5 and p * n <= 30.0:
            setup, draw = "", f"graphc_binomial_inversion(&st, {n}LL, {p!r})"
        elif p > 0.5 and (1.0 - p) * n <= 30.0:
            setup, draw = "", f"{n}LL - graphc_binomial_inversion(&st, {n}LL, {1.0 - p!r})"
        else:
            return None  # numpy's BTPE algorithm: runs in Python
    else:
        return None
    nd = op.ndim
    body = f"""
    graphc_philox st;
    npy_intp dims[{max(nd, 1)}];
    if (graphc_rv_begin(i0, i1, {nd}, &st, dims, "{name}") < 0) FAIL;{setup}
    PyArrayObject *out = graphc_out_array(o1, {nd}, dims, {typenum(out_dt)});
    if (out == NULL) FAIL;
    {ctype(out_dt)} *data = ({ctype(out_dt)} *)PyArray_DATA(out);
    npy_intp count = PyArray_SIZE(out);
    for (npy_intp k = 0; k < count; k++) data[k] = ({ctype(out_dt)})({draw});
    Py_XSETREF(*o1, (PyObject *)out);
    if (graphc_rv_end(o0, &st) < 0) FAIL;
"""
    key = ("RandomVariable", op, tuple(p.type for p in params), setup, draw)
    return CThunkCode(body=body, support=(COMMON, PHILOX), key=key)
