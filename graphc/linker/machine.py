"""This machine's limits for the profile's roofline, measured once and cached with the
compile cache: memory bandwidth by a STREAM-triad-like C loop (``a = b + s * c`` over
arrays far larger than the caches, OpenMP threads as the generated C uses them) and the
peak floating-point rate by a large float64 GEMM through the BLAS the generated C calls;
for the benchmarks' element-wise rooflines, the peak per dtype of independent vector fused
multiply-adds at the generated C's vector width (``fma_gflops``).

The figures are kept in ``<cache root>/machine-limits.json`` under a key naming the CPU,
the BLAS and the thread count; ``graphc-cache clear`` does not remove them (they do not
depend on graphc's version).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphc.flags import config
from graphc.linker.build_env import _cpu
from graphc.linker.cache import get_cache

TRIAD_N = 1 << 22  # doubles per array: 3 x 32 MiB, beyond any last-level cache
GEMM_N = 1024  # 2.1 GFLOP per product
REPEATS = 5

_TRIAD_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <time.h>

/* triad(a, b, c, s, reps) -> best ns of reps passes of a[i] = b[i] + s * c[i] */
static PyObject *triad(PyObject *self, PyObject *args) {
    Py_buffer a, b, c; double s; int reps;
    if (!PyArg_ParseTuple(args, "w*y*y*di", &a, &b, &c, &s, &reps)) return NULL;
    Py_ssize_t n = a.len / (Py_ssize_t)sizeof(double);
    if (b.len < a.len || c.len < a.len) {
        PyBuffer_Release(&a); PyBuffer_Release(&b); PyBuffer_Release(&c);
        PyErr_SetString(PyExc_ValueError, "triad: b and c must be as long as a");
        return NULL;
    }
    double *pa = (double *)a.buf; const double *pb = (const double *)b.buf;
    const double *pc = (const double *)c.buf;
    int64_t best = INT64_MAX;
    Py_BEGIN_ALLOW_THREADS
    for (int r = 0; r < reps; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        #pragma omp parallel for schedule(static)
        for (Py_ssize_t i = 0; i < n; i++) pa[i] = pb[i] + s * pc[i];
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
        if (ns < best) best = ns;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&a); PyBuffer_Release(&b); PyBuffer_Release(&c);
    return PyLong_FromLongLong((long long)best);
}

static PyMethodDef methods[] = {{"triad", triad, METH_VARARGS, "triad"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "graphc_triad", NULL, -1, methods};
PyMODINIT_FUNC GRAPHC_INIT(void) { return PyModule_Create(&mod); }
"""


def triad_bandwidth(n: int = TRIAD_N, repeats: int = REPEATS) -> float:
    """GB/s of the best of ``repeats`` triad passes over ``n`` doubles (24 bytes moved per
    element, as STREAM counts them)."""
    flags = ["-fopenmp"] if config.openmp else []
    if config.openmp:
        from graphc.linker.c.par_policy import configure_runtime

        configure_runtime()  # the threads wait as the generated C's do
    module = get_cache().load(_TRIAD_C, extra_cflags=flags, name_hint="triad")
    a, b, c = np.empty(n), np.full(n, 1.0), np.full(n, 2.0)
    a.fill(0.0)  # touch every page before timing
    ns = module.triad(a, b, c, 3.0, repeats)
    if not np.all(a[:: max(n // 97, 1)] == 7.0):
        raise RuntimeError("triad calibration computed a wrong result")
    return 3 * 8 * n / max(ns, 1)


def _gemm() -> Any:
    """The float64 product through the BLAS the generated C calls."""
    if config.blas_library == "scipy":
        from scipy.linalg.blas import dgemm

        return lambda x, y: dgemm(1.0, x, y)
    return np.dot  # numpy's own OpenBLAS: the library blas_library=auto/numpy picks


def gemm_gflops(n: int = GEMM_N, repeats: int = 3) -> float:
    """GFLOP/s of the best of ``repeats`` ``n x n`` float64 products (2 n^3 flops each)."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    product = _gemm()
    product(x[:64, :64], y[:64, :64])  # start the BLAS threads
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        product(x, y)
        best = min(best, time.perf_counter_ns() - t0)
    return 2.0 * n**3 / max(best, 1)


_FMA_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <time.h>

/* the generated C's vector width: 512 bits where AVX-512 is (-mprefer-vector-width=512) */
#if defined(__AVX512F__)
#define GC_VBYTES 64
#elif defined(__AVX__)
#define GC_VBYTES 32
#else
#define GC_VBYTES 16
#endif
#define GC_ACC 16 /* independent chains: more than FMA latency x ports on any x86 */

#define GC_FMA_LOOP(T, NAME)                                                          \
static double NAME(int64_t iters) {                                                   \
    typedef T vec __attribute__((vector_size(GC_VBYTES)));                            \
    vec acc[GC_ACC], m = (vec){0} + (T)0.5, c = (vec){0} + (T)1.0;                    \
    for (int k = 0; k < GC_ACC; k++) acc[k] = (vec){0} + (T)k;                        \
    for (int64_t i = 0; i < iters; i++)                                               \
        for (int k = 0; k < GC_ACC; k++) acc[k] = acc[k] * m + c; /* x -> 2: no overflow, \
                                                                      no subnormal */ \
    vec s = acc[0];                                                                   \
    for (int k = 1; k < GC_ACC; k++) s += acc[k];                                     \
    return (double)s[0];                                                              \
}
GC_FMA_LOOP(double, fma_f64)
GC_FMA_LOOP(float, fma_f32)

/* fma_run(dtype_bits, iters, reps) -> (best ns, flops per pass) on this thread */
static PyObject *fma_run(PyObject *self, PyObject *args) {
    int bits, reps; long long iters;
    if (!PyArg_ParseTuple(args, "iLi", &bits, &iters, &reps)) return NULL;
    double sink = 0.0;
    int64_t best = INT64_MAX;
    Py_BEGIN_ALLOW_THREADS
    for (int r = 0; r < reps; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        sink += bits == 32 ? fma_f32(iters) : fma_f64(iters);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
        if (ns < best) best = ns;
    }
    Py_END_ALLOW_THREADS
    if (sink != sink) { PyErr_SetString(PyExc_RuntimeError, "fma_run: NaN"); return NULL; }
    double lanes = (double)GC_VBYTES / (bits / 8);
    return Py_BuildValue("Ld", (long long)best, 2.0 * GC_ACC * lanes * (double)iters);
}

static PyMethodDef methods[] = {
    {"fma_run", fma_run, METH_VARARGS, "fma_run"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "graphc_fma", NULL, -1, methods};
PyMODINIT_FUNC GRAPHC_INIT(void) { return PyModule_Create(&mod); }
"""

FMA_ITERS = 1 << 20  # 16 vector fmas each: 8 million cycles a pass at 2 fmas a cycle


def fma_kernel() -> Callable[[str, int], tuple[int, float]]:
    """``run(dtype, iters) -> (ns, flops)``: one pass of independent vector fused
    multiply-adds on this thread, compiled as the generated C is (its vector width)."""
    flags = ["-mprefer-vector-width=512", "-ffp-contract=fast"]
    module = get_cache().load(_FMA_C, extra_cflags=flags, name_hint="fma")
    bits = {"float64": 64, "float32": 32}
    return lambda dtype, iters: module.fma_run(bits[dtype], iters, 1)


def fma_gflops(dtype: str, repeats: int = REPEATS) -> float:
    """GFLOP/s of one core: the best of ``repeats`` passes of :func:`fma_kernel` (an fma
    is 2 flops per lane), the peak of its vector units, of which a GEMM reaches ~90%."""
    run = fma_kernel()
    run(dtype, 1024)
    best = min((run(dtype, FMA_ITERS) for _ in range(repeats)), key=lambda r: r[0] / r[1])
    return best[1] / max(best[0], 1)


def fma_limits(measure: bool = True) -> dict[str, float] | None:
    """``{"float64": GFLOP/s, "float32": GFLOP/s}`` of one core (:func:`fma_gflops`), from
    ``machine-limits.json``, else measured (about 0.1 s) and cached; None when not cached
    and ``measure`` is false."""
    return _cached(_key() + ":fma", measure,
                   lambda: {dt: fma_gflops(dt) for dt in ("float64", "float32")})  # fmt: skip


def _key() -> str:
    threads = os.environ.get("OMP_NUM_THREADS", "") + "/" + str(os.cpu_count())
    text = f"{_cpu()}|{config.blas_library}|{config.openmp}|{threads}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def limits_path() -> Path:
    return get_cache().root / "machine-limits.json"


def machine_limits(measure: bool = True) -> dict[str, Any] | None:
    """``{"bandwidth_gbs", "peak_gflops", "triad_n", "gemm_n", "blas"}`` for this machine,
    from the cache, else measured (about a second) and cached; None when not cached and
    ``measure`` is false."""
    return _cached(_key(), measure, lambda: {
        "bandwidth_gbs": triad_bandwidth(),
        "peak_gflops": gemm_gflops(),
        "triad_n": TRIAD_N,
        "gemm_n": GEMM_N,
        "blas": config.blas_library,
    })  # fmt: skip


def _cached(key: str, measure: bool, measured: Callable[[], dict[str, Any]]) -> Any:
    """The entry ``key`` of ``machine-limits.json``, else (when ``measure``) ``measured()``
    written there; None when absent and not ``measure``."""
    path = limits_path()
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cached = {}
    found = cached.get(key)
    if found is not None or not measure:
        return found
    found = measured()
    cached[key] = found
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(cached, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: measured again next time
    return found
