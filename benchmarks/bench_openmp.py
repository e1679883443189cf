"""OpenMP element-wise loops against the serial loop, on an idle machine and with the
second core busy (a spinning process started for the measurement), and the share of the
limit that binds each loop (``binding_limit``): the bandwidth of a triad timed beside it or
the peak FLOP rate (``benchmarks/roofline.py``).

- ``(x*y + z)*x - y``: memory-bound (4 arrays moved, 4 flops an element);
- ``exp(x)*y + tanh(z) - x**2``: 93 flops an element in float64 (53 in float32), bound
  by the peak FLOP rate on the roofline.

Times are medians of interleaved calls, with the interquartile spread over the median.

    python benchmarks/bench_openmp.py [--n N] [--repeats R]
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

import graphc
import graphc.tensor as T
from graphc.linker.blas_threads import usable_cpus

try:
    from benchmarks.common import interleaved_samples, median_spread, size_parser
    from benchmarks.roofline import Loop, candidate_shares, loop_of, peak_gflops
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, median_spread, size_parser  # type: ignore[no-redef]
    from roofline import Loop, candidate_shares, loop_of, peak_gflops  # type: ignore[no-redef]

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


class Spinner:
    """A process keeping one core busy while the block runs."""

    def __enter__(self) -> Spinner:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)  # let it start spinning
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


def _triad(threaded: bool) -> Callable[[np.ndarray, np.ndarray, np.ndarray], object]:
    """The calibration's triad (``graphc.linker.machine``) on one thread; on all, the same
    pass split by graphc's worker pool, as the OpenMP loops are: a libgomp team of its own
    would fight the pool's polling workers for the second core, and its threads, asleep
    between the samples, took a millisecond to wake on a virtual machine, so that the
    triad on two threads measured the wake-up, not the memory (0.9x of one thread on an
    idle machine; 2x with libgomp's threads spinning)."""
    from graphc.linker.c import par_pool
    from graphc.linker.cache import get_cache
    from graphc.linker.machine import _TRIAD_C

    if not threaded:
        module = get_cache().load(_TRIAD_C, name_hint="triad")
        return lambda a, b, c: module.triad(a, b, c, 3.0, 1)
    threads = usable_cpus()

    def every(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        # the workers as it found them: woken from sleep (the loops' policy had sent them
        # there, or a pause), asleep again, not polling on the core the next candidate
        # needs (with the second core busy, serial runs slowed 2x behind a polling worker)
        if par_pool.triad(a, b, c, threads) == 2:
            par_pool.rest()

    return every


def references(n: int, dtype: str) -> dict[str, Callable[[], object]]:
    """The limits measured beside the loops, under the same load: the triad over arrays of
    the loops' size in bytes, on one thread and on all ("triad", "triad openmp"; STREAM's
    24 bytes an element)."""
    m = n * np.dtype(dtype).itemsize // 8
    a, b, c = np.zeros(m), np.full(m, 1.0), np.full(m, 2.0)
    one, every = _triad(False), _triad(True)
    return {"triad": lambda: one(a, b, c), "triad openmp": lambda: every(a, b, c)}


def await_free_core(
    refs: dict[str, Callable[[], object]], need: float = 1.5, timeout: float = 30.0
) -> float:
    """Wait (up to ``timeout`` seconds) until the triad on all threads runs ``need`` times
    as fast as on one, i.e. the other cores are free, as the idle rows say they are: on a
    shared or virtual machine another tenant can hold a core for seconds. Returns the
    triad's speed-up last seen (below ``need`` when the wait timed out)."""
    end = time.monotonic() + timeout
    while True:
        med = {k: m for k, (m, _) in median_spread(interleaved_samples(refs, 5, number=3)).items()}
        ratio = med["triad"] / med["triad openmp"]
        if ratio >= need or time.monotonic() > end:
            return ratio
        time.sleep(0.5)


def idle_samples(
    cands: dict[str, Callable[[], object]], repeats: int, need: float = 1.5, warm_up: bool = True
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """``repeats`` rounds of interleaved samples (5 calls each) of ``cands`` (with the
    references), taken on an idle machine: a round in which the triad on all threads ran
    under ``need`` times as fast as on one (another tenant held the second core for the
    moment) is left out and taken again, up to ``2 * repeats`` times; every candidate is
    called once first unless ``warm_up`` is False. Returns the samples kept and those left
    out (the idle rows report both)."""
    kept: dict[str, list[float]] = {k: [] for k in cands}
    left: dict[str, list[float]] = {k: [] for k in cands}
    for i in range(3 * repeats):
        if len(kept["triad"]) >= repeats:
            break
        one = interleaved_samples(cands, 1, number=5, gc_off=True, warm_up=warm_up and i == 0)
        free = one["triad"][0] >= need * one["triad openmp"][0]
        if free or len(left["triad"]) >= 2 * repeats:
            for k, v in one.items():
                kept[k] += v
        else:
            for k, v in one.items():
                left[k] += v
    return kept, left


def candidates(label: str, n: int, dtype: str) -> tuple[dict[str, Callable[[], object]], Loop]:
    """The serial and the OpenMP loop of ``EXPRS[label]`` on ``n`` elements, checked, and
    what one call moves and computes."""
    fn = EXPRS[label]
    x, y, z = (T.tensor(dtype, (None,), name=s) for s in "xyz")
    serial = graphc.function([x, y, z], fn(x, y, z, T), trust_input=True)
    with graphc.config.change_flags(openmp=True):
        par = graphc.function([x, y, z], fn(x, y, z, T), trust_input=True)
    rng = np.random.default_rng(0)
    xv, yv, zv = (rng.uniform(-1, 1, n).astype(dtype) for _ in range(3))
    np.testing.assert_array_equal(par(xv, yv, zv), serial(xv, yv, zv))
    cands = {"serial": lambda: serial(xv, yv, zv), "openmp": lambda: par(xv, yv, zv)}
    return cands, loop_of(serial, n, dtype)


def binding_limit(n: int, dtype: str, med: dict[str, float], threads: int, loop: Loop,
                  peak: float) -> dict:  # fmt: skip
    """Per loop (serial, openmp): ``(bound, share)``, the limit that binds it and the
    share of that limit it reaches (``roofline.candidate_shares``): the bandwidth of the
    same-size triad on as many threads, or ``peak`` GFLOP/s (one core's) times the threads."""
    triad_bytes = 24 * (n * np.dtype(dtype).itemsize // 8)
    return candidate_shares(med, loop, peak, triad_bytes, threads)


def run(n: int = 10**6, repeats: int = 15, dtype: str = "float64", wait: float = 30.0) -> dict:
    """Per expression: ``{"idle": {cand: (median s, spread)}, "busy": ..., "limits": {load:
    {loop: (bound, share)}}, "split": {load: share of the OpenMP loop's runs split},
    "free_core": the triad's speed-up on all threads just before the idle samples (they
    wait up to ``wait`` s for a free core: ``await_free_core``), "left_out": the idle
    rounds taken again because the second core was not free (``idle_samples``)}``;
    ``"bandwidth_gbs"`` the cached calibration."""
    from graphc.linker.c import par_policy

    threads = usable_cpus()
    bw, peak = bandwidth_gbs(), peak_gflops(dtype)
    out: dict = {"n": n, "dtype": dtype, "bandwidth_gbs": bw, "peak_gflops": peak, "exprs": {}}
    refs = references(n, dtype)
    for label in EXPRS:
        loops, loop = candidates(label, n, dtype)
        cands = {**loops, **refs}
        r: dict = {"limits": {}, "split": {}, "intensity": loop.intensity}
        for load in ("idle", "busy"):
            if load == "idle" and threads >= 2:
                r["free_core"] = await_free_core(refs, timeout=wait)
            with Spinner() if load == "busy" else contextlib.nullcontext():
                par_policy.reset_counts()
                if load == "idle" and threads >= 2:
                    samples, left = idle_samples(cands, repeats)
                    r["left_out"] = {k: v for k, v in left.items() if v}
                else:
                    samples = interleaved_samples(cands, repeats, number=5, gc_off=True)
                r[load] = median_spread(samples)
                c = par_policy.counts()
            med = {k: m for k, (m, _) in r[load].items()}
            r["limits"][load] = {} if peak is None else binding_limit(n, dtype, med, threads,
                                                                        loop, peak)  # fmt: skip
            r["split"][load] = c["split"] / max(c["split"] + c["serial"], 1)
        out["exprs"][label] = r
    return out


def render(res: dict) -> str:
    bw = res["bandwidth_gbs"]
    peak = res.get("peak_gflops")
    lines = [f"OpenMP element-wise loops, {res['n']:.0e} {res['dtype']}, calibrated bandwidth "
             + (f"{bw:.1f} GB/s" if bw else "unknown") + ", peak "
             + (f"{peak:.1f} GFLOP/s a core" if peak else "unknown")]  # fmt: skip
    for label, r in res["exprs"].items():
        cells = []
        for load in ("idle", "busy"):
            (s, ss), (p, ps_) = r[load]["serial"], r[load]["openmp"]
            lim = ", ".join(f"{k} {v:.0%} of the {b}" for k, (b, v) in r["limits"][load].items())
            cells.append(f"{load}: serial {s * 1e3:.3f} ms ±{ss:.0%}, openmp {p * 1e3:.3f} ms "
                         f"±{ps_:.0%} ({s / p:.2f}x, {r['split'][load]:.0%} of runs split; "
                         f"{lim})")  # fmt: skip
        free = f" (the triad's speed-up before the idle samples {r['free_core']:.2f}x)" \
            if "free_core" in r else ""  # fmt: skip
        lines.append(f"- {label}{free}: " + "; ".join(cells))
    return "\n".join(lines)


def main() -> None:
    a = size_parser(__doc__).parse_args()
    print(render(run(a.n, a.repeats)))


if __name__ == "__main__":
    main()
