"""Elemwise fusion: ``exp(x)*y + tanh(z) - x**2`` on 10**6 elements.

Run: ``python benchmarks/bench_fusion.py [--n N] [--repeats R]``. For float64 and float32
prints the median time of interleaved calls of graphc FAST_RUN, FAST_RUN with fusion
excluded, numpy, and PyTensor FAST_RUN when it is importable, with ratios to numpy.
"""

from __future__ import annotations

import statistics

import numpy as np

import graphc
import graphc.tensor as T

try:
    from benchmarks.common import interleaved_samples, size_parser
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, size_parser  # type: ignore[no-redef]


def _numpy(x, y, z):
    return np.exp(x) * y + np.tanh(z) - x**2


def _graphc(dtype, excluding=()):
    x, y, z = (T.vector(n, dtype=dtype) for n in "xyz")
    two = T.constant(np.full(1, 2, dtype=dtype))
    mode = graphc.Mode(optimizer="fast_run").excluding(*excluding)
    f = graphc.function([x, y, z], T.exp(x) * y + T.tanh(z) - x**two, mode=mode)
    f.trust_input = True
    return f


def _pytensor(dtype):
    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError:
        return None
    x, y, z = (pt.vector(n, dtype=dtype) for n in "xyz")
    return pytensor.function([x, y, z], pt.exp(x) * y + pt.tanh(z) - x**2, mode="FAST_RUN")


def bench(dtype: str, n: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, n).astype(dtype) for _ in range(3)]
    cands = {
        "graphc FAST_RUN": _graphc(dtype),
        "graphc no fusion": _graphc(dtype, ("fusion",)),
        "numpy": _numpy,
    }
    pt = _pytensor(dtype)
    if pt is not None:
        cands["PyTensor FAST_RUN"] = pt
    want = _numpy(*args)
    for name, fn in cands.items():
        got = fn(*args)
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    calls = {k: (lambda fn=fn: fn(*args)) for k, fn in cands.items()}
    times = interleaved_samples(calls, repeats, warm_up=False)  # the check above warmed up
    base = statistics.median(times["numpy"])
    print(f"{dtype}, n={n}:")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:20s} {med * 1e3:8.3f} ms   x{med / base:5.2f} of numpy")


def main() -> None:
    a = size_parser(__doc__).parse_args()
    for dtype in ("float64", "float32"):
        bench(dtype, a.n, a.repeats)


if __name__ == "__main__":
    main()
