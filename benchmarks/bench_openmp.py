"""OpenMP element-wise loops against the serial loop, on an idle machine and with the
second core busy (a spinning process started for the measurement), and the share of the
machine's memory bandwidth (``graphc.linker.machine``) each loop reaches.

- ``(x*y + z)*x - y``: memory-bound (4 arrays moved, 4 flops an element);
- ``exp(x)*y + tanh(z) - x**2``: bound by the vector exp and tanh.

Times are medians of interleaved calls, with the interquartile spread over the median.

    python benchmarks/bench_openmp.py [--n N] [--repeats R]
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

import graphc
import graphc.tensor as T

try:
    from benchmarks.common import interleaved_samples, median_spread, size_parser
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, median_spread, size_parser  # type: ignore[no-redef]

EXPRS: dict[str, Callable] = {
    "(x*y + z)*x - y": lambda a, b, c, m: (a * b + c) * a - b,
    "exp(x)*y + tanh(z) - x**2": lambda a, b, c, m: m.exp(a) * b + m.tanh(c) - a**2,
}


def bandwidth_gbs() -> float | None:
    """This machine's calibrated memory bandwidth (GB/s), or None when unavailable."""
    from graphc.linker.machine import machine_limits

    try:
        limits = machine_limits()
    except Exception:  # noqa: BLE001 - no compiler: no roofline column
        return None
    return None if limits is None else float(limits["bandwidth_gbs"])


def bytes_moved(n: int, dtype: str, arrays: int = 4) -> int:
    """Bytes an element-wise loop over ``arrays`` operands of ``n`` elements moves."""
    return arrays * n * np.dtype(dtype).itemsize


class Spinner:
    """A process keeping one core busy while the block runs."""

    def __enter__(self) -> Spinner:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)  # let it start spinning
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


def candidates(label: str, n: int, dtype: str) -> dict[str, Callable[[], object]]:
    """The serial and the OpenMP loop of ``EXPRS[label]`` on ``n`` elements, checked."""
    fn = EXPRS[label]
    x, y, z = (T.tensor(dtype, (None,), name=s) for s in "xyz")
    serial = graphc.function([x, y, z], fn(x, y, z, T), trust_input=True)
    with graphc.config.change_flags(openmp=True):
        par = graphc.function([x, y, z], fn(x, y, z, T), trust_input=True)
    rng = np.random.default_rng(0)
    xv, yv, zv = (rng.uniform(-1, 1, n).astype(dtype) for _ in range(3))
    np.testing.assert_array_equal(par(xv, yv, zv), serial(xv, yv, zv))
    return {"serial": lambda: serial(xv, yv, zv), "openmp": lambda: par(xv, yv, zv)}


def run(n: int = 10**6, repeats: int = 15, dtype: str = "float64") -> dict:
    """Per expression: ``{"idle": {cand: (median s, spread)}, "busy": ..., "bw_share":
    {cand: share of the bandwidth, idle}}``; ``"bandwidth_gbs"`` the calibration."""
    bw = bandwidth_gbs()
    out: dict = {"n": n, "dtype": dtype, "bandwidth_gbs": bw, "exprs": {}}
    for label in EXPRS:
        cands = candidates(label, n, dtype)
        idle = median_spread(interleaved_samples(cands, repeats, number=5, gc_off=True))
        with Spinner():
            busy = median_spread(interleaved_samples(cands, repeats, number=5, gc_off=True))
        share = {}
        if bw:
            share = {k: bytes_moved(n, dtype) / m / 1e9 / bw for k, (m, _) in idle.items()}
        out["exprs"][label] = {"idle": idle, "busy": busy, "bw_share": share}
    return out


def render(res: dict) -> str:
    bw = res["bandwidth_gbs"]
    lines = [f"OpenMP element-wise loops, {res['n']:.0e} {res['dtype']}, bandwidth "
             f"{bw:.1f} GB/s" if bw else "bandwidth unknown"]  # fmt: skip
    for label, r in res["exprs"].items():
        cells = []
        for load in ("idle", "busy"):
            (s, ss), (p, ps_) = r[load]["serial"], r[load]["openmp"]
            cells.append(f"{load}: serial {s * 1e3:.3f} ms ±{ss:.0%}, openmp {p * 1e3:.3f} ms "
                         f"±{ps_:.0%} ({s / p:.2f}x)")  # fmt: skip
        share = ", ".join(f"{k} {v:.0%}" for k, v in r["bw_share"].items())
        lines.append(
            f"- {label}: " + "; ".join(cells) + (f"; bandwidth share {share}" if share else "")
        )
    return "\n".join(lines)


def main() -> None:
    a = size_parser(__doc__).parse_args()
    print(render(run(a.n, a.repeats)))


if __name__ == "__main__":
    main()
