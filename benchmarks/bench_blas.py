"""Dot22 and Gemv through generated C (the BLAS `graphc.linker.blas_lib` picks) against numpy.dot.

Shapes: an MLP layer's 400x784 weights times a 784-vector (Gemv) and a 128x784 batch
times 784x500 weights (Dot22). Timings are medians over interleaved runs (C, numpy, C, ...)
so drift hits both sides alike. Also prints which BLAS library ran.

    python benchmarks/bench_blas.py [--repeat N] [--dtype float32|float64]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import graphc
from graphc.tensor import blas
from graphc.tensor.type import TensorType


def blas_info() -> str:
    """The BLAS libraries loaded in this process (threadpoolctl) or numpy's build config."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        rows = [
            f"{i.get('internal_api')} {i.get('version')} ({i.get('filepath')}, "
            f"{i.get('num_threads')} threads)"
            for i in threadpool_info()
            if i.get("user_api") == "blas"
        ]
        if rows:
            return "; ".join(rows)
    import scipy

    found = []
    for name, mod in (("scipy (graphc's C thunks)", scipy), ("numpy", np)):
        try:
            deps = mod.show_config(mode="dicts")["Build Dependencies"]["blas"]
            found.append(f"{name}: {deps.get('name')} {deps.get('version')}")
        except Exception as exc:  # noqa: BLE001 - reporting only
            found.append(f"{name}: unknown ({exc})")
    return "; ".join(found) + " (build config; threadpoolctl not installed)"


def openblas_core() -> str | None:
    """The OpenBLAS kernel family numpy's OpenBLAS picked on this CPU (threadpoolctl).

    An older OpenBLAS (Theano 0.8.2's venv) may not know this CPU and fall back to its
    generic kernels, several times slower: a peer run there gets ``OPENBLAS_CORETYPE`` set
    to this, so both libraries run the same kernels."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    for pool in threadpoolctl.threadpool_info():
        if pool["internal_api"] == "openblas":
            return pool.get("architecture")
    return None


def median_interleaved(fns, repeat: int, inner: int) -> list[float]:
    """Median seconds per call of each function, runs interleaved."""
    times: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            times[k].append((time.perf_counter() - t0) / inner)
    return [statistics.median(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = ap.parse_args()
    dt = args.dtype
    rng = np.random.default_rng(0)
    mode = graphc.Mode(linker="c|py", optimizer=None)

    A, X, W = (TensorType(dt, (None, None))() for _ in range(3))  # noqa: N806
    x, y = TensorType(dt, (None,))(), TensorType(dt, (None,))()
    alpha, beta = TensorType(dt, ())(), TensorType(dt, ())()
    f_gemv = graphc.function([y, alpha, A, x, beta], blas.gemv(y, alpha, A, x, beta), mode=mode)
    f_dot22 = graphc.function([X, W], blas.dot22(X, W), mode=mode)
    for f in (f_gemv, f_dot22):
        assert all(i.is_c for i in f.linked.impls), "expected C thunks"

    a = rng.standard_normal((400, 784)).astype(dt)
    v = rng.standard_normal(784).astype(dt)
    yv = np.zeros(400, dt)
    one, zero = np.asarray(1, dt), np.asarray(0, dt)
    xb = rng.standard_normal((128, 784)).astype(dt)
    w = rng.standard_normal((784, 500)).astype(dt)
    at, wf = np.asfortranarray(a), np.asfortranarray(w)

    cases = [
        ("Gemv 400x784 . 784 (C-order A)", lambda: f_gemv(yv, one, a, v, zero), lambda: a @ v),
        ("Gemv 400x784 . 784 (F-order A)", lambda: f_gemv(yv, one, at, v, zero), lambda: at @ v),
        ("Dot22 128x784 . 784x500", lambda: f_dot22(xb, w), lambda: np.dot(xb, w)),
        ("Dot22 128x784 . 784x500 (F-order W)", lambda: f_dot22(xb, wf), lambda: np.dot(xb, wf)),
    ]
    np.testing.assert_allclose(f_dot22(xb, w), xb @ w, rtol=1e-3, atol=1e-3)
    print(f"BLAS: {blas_info()}")
    print(f"dtype {dt}, median of {args.repeat} interleaved runs")
    print(f"{'case':<36} {'graphc C':>12} {'numpy':>12} {'C/numpy':>8}")
    for name, c_fn, np_fn in cases:
        inner = 200 if "Gemv" in name else 10
        tc, tn = median_interleaved([c_fn, np_fn], args.repeat, inner)
        print(f"{name:<36} {tc * 1e6:>10.1f}us {tn * 1e6:>10.1f}us {tc / tn:>8.2f}")


if __name__ == "__main__":
    main()
