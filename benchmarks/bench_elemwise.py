"""Elemwise speed: the "c|py" linker against "py" and plain numpy.

1. ``exp(x)*y + tanh(z) - x**2`` over 10^6 elements (float64, float32) as ONE Composite
   Elemwise node (built by hand), c|py vs py vs numpy.
2. A chain of 100 small Elemwise nodes (10 elements): per-node time, c|py vs py.

Times are medians of interleaved runs. Run: ``python benchmarks/bench_elemwise.py``.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphc
import graphc.tensor as T
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.type import TensorType

try:
    from benchmarks.common import interleaved_samples, medians
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, medians  # type: ignore[no-redef]


def composite(dtype: str) -> Elemwise:
    """``exp(a)*b + tanh(c) - a**2`` as one scalar Composite."""
    a, b, c = (ps.ScalarType(dtype)() for _ in range(3))
    two = ps.as_scalar(np.asarray(2, dtype=dtype))
    out = ps.sub(ps.add(ps.mul(ps.exp(a), b), ps.tanh(c)), ps.pow(a, two))
    return Elemwise(ps.Composite([a, b, c], [out]))


def modes():
    return {
        "c|py": graphc.Mode(linker="c|py", optimizer=None),
        "py": graphc.Mode(linker="py", optimizer=None),
    }


def interleaved(fns: dict, repeat: int, inner: int = 1) -> dict[str, float]:
    """Median seconds per call of each of ``fns``, timed in interleaved rounds."""
    return medians(interleaved_samples(fns, repeat, number=inner))


def bench_fused(n: int, repeat: int) -> list[tuple]:
    rows = []
    for dtype in ("float64", "float32"):
        x, y, z = (TensorType(dtype, (None,))(v) for v in "xyz")
        out = composite(dtype)(x, y, z)
        fs = {k: graphc.function([x, y, z], out, mode=m) for k, m in modes().items()}
        assert fs["c|py"].linked.impls[0].is_c
        rng = np.random.default_rng(0)
        xv, yv, zv = (rng.standard_normal(n).astype(dtype) for _ in range(3))
        ref = np.exp(xv) * yv + np.tanh(zv) - xv**2
        got = fs["c|py"](xv, yv, zv)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol)
        t = interleaved(
            {
                "c|py": lambda: fs["c|py"](xv, yv, zv),
                "py": lambda: fs["py"](xv, yv, zv),
                "numpy": lambda: np.exp(xv) * yv + np.tanh(zv) - xv**2,
            },
            repeat,
        )
        rows.append((f"fused 10^{int(np.log10(n))} {dtype}", t))
    return rows


def bench_chain(nodes: int, size: int, repeat: int) -> list[tuple]:
    x = T.dvector("x")
    y = x
    for k in range(nodes):  # unary nodes only: exactly ``nodes`` Apply nodes
        y = (T.tanh, T.sin, T.neg, T.cos, T.sqr)[k % 5](y)
    fs = {k: graphc.function([x], y, mode=m) for k, m in modes().items()}
    assert all(i.is_c for i in fs["c|py"].linked.impls)
    n_nodes = len(fs["c|py"].linked.schedule)
    xv = np.linspace(-1, 1, size)
    np.testing.assert_allclose(fs["c|py"](xv), fs["py"](xv), rtol=1e-12)
    t = interleaved({k: (lambda f=f: f(xv)) for k, f in fs.items()}, repeat, inner=20)
    return [
        (f"chain {n_nodes} nodes x {size} el (per node)", {k: v / n_nodes for k, v in t.items()})
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10**6)
    p.add_argument("--repeat", type=int, default=21)
    args = p.parse_args()
    rows = bench_fused(args.n, args.repeat) + bench_chain(100, 10, args.repeat)
    print(f"{'case':40} {'c|py':>10} {'py':>10} {'numpy':>10} {'py/c|py':>8} {'np/c|py':>8}")
    for name, t in rows:
        c, py, npy = t["c|py"], t["py"], t.get("numpy")
        unit, scale = ("ms", 1e3) if c > 1e-4 else ("ns", 1e9)
        cols = [f"{c * scale:8.2f}{unit}", f"{py * scale:8.2f}{unit}"]
        cols.append(f"{npy * scale:8.2f}{unit}" if npy else f"{'-':>10}")
        ratio = f"{npy / c:8.2f}" if npy else f"{'-':>8}"
        print(f"{name:40} {cols[0]:>10} {cols[1]:>10} {cols[2]:>10} {py / c:8.2f} {ratio}")


if __name__ == "__main__":
    main()
