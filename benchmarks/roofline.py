"""The roofline share of an element-wise workload: its time against the limit that binds it,
memory bandwidth or the peak floating-point rate.

``attainable = min(peak, intensity * bandwidth)`` with ``intensity = flops / bytes``, so
the fastest a loop can run is ``max(bytes / bandwidth, flops / peak)``: the share is that
time over the time measured, and the binding limit is the larger of the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BANDWIDTH, PEAK = "bandwidth", "peak FLOP rate"


@dataclass(frozen=True)
class Loop:
    """What one call of a workload does: bytes moved (reads and writes, no write-allocate,
    as STREAM counts them) and flops (as ``graphc.linker.c.loop_flops`` counts them)."""

    nbytes: float
    flops: float

    @property
    def intensity(self) -> float:
        """Flops per byte moved."""
        return self.flops / self.nbytes


def share(
    seconds: float, loop: Loop, peak_gflops: float, bandwidth_gbs: float
) -> tuple[str, float]:
    """``(bound, share)``: the limit that binds ``loop`` (``BANDWIDTH`` or ``PEAK``) and
    the share of it a call taking ``seconds`` reaches (1.0: at the limit)."""
    t_mem = loop.nbytes / (bandwidth_gbs * 1e9)
    t_flop = loop.flops / (peak_gflops * 1e9)
    return (BANDWIDTH, t_mem / seconds) if t_mem >= t_flop else (PEAK, t_flop / seconds)


def peak_gflops(dtype: str) -> float | None:
    """One core's peak FLOP rate in ``dtype`` (``graphc.linker.machine.fma_limits``,
    cached), or None where it cannot be measured (no C compiler)."""
    from graphc.linker.machine import fma_limits

    try:
        limits = fma_limits()
    except Exception:  # noqa: BLE001 - no compiler: no flop limit
        return None
    return None if limits is None else float(limits[dtype])


def loop_of(function: object, n: int, dtype: str, arrays: int = 4) -> Loop:
    """The Loop of a compiled graphc ``function`` over ``n`` elements of ``dtype`` moving
    ``arrays`` arrays: flops summed over its optimized graph's element-wise loops."""
    from graphc.linker.c.loop_flops import loops_flops

    per_element = loops_flops(function.maker.fgraph.toposort())  # type: ignore[attr-defined]
    return Loop(arrays * n * np.dtype(dtype).itemsize, per_element * n)


def candidate_shares(med: dict[str, float], loop: Loop, peak: float, triad_bytes: float,
                     threads: int | None = None) -> dict[str, tuple[str, float]]:  # fmt: skip
    """Candidate -> ``share(...)`` for the candidates of ``med`` beside the references
    ``triad`` and ``triad openmp`` (the bandwidth on one thread and on all); an OpenMP
    candidate's peak is one core's ``peak`` times the threads."""
    from graphc.linker.blas_threads import usable_cpus

    threads = threads or usable_cpus()
    out = {}
    for k, t in med.items():
        if k.startswith("triad"):
            continue
        par = "openmp" in k
        bw = triad_bytes / med["triad openmp" if par else "triad"] / 1e9
        out[k] = share(t, loop, peak * (threads if par else 1), bw)
    return out


def bound_label(bounds: dict[str, str]) -> str:
    """The binding limit, or per candidate where they differ."""
    kinds = sorted(set(bounds.values()))
    return kinds[0] if len(kinds) == 1 else ", ".join(f"{k}: {b}" for k, b in bounds.items())


def shares(med: dict[str, float], loop: Loop, dtype: str, triad_bytes: float,
           threads: int | None = None) -> dict:  # fmt: skip
    """Result fields ``roofline`` (candidate -> share) and ``bound`` (``candidate_shares``
    at this machine's peak in ``dtype``); empty without the triad or the peak."""
    peak = peak_gflops(dtype)
    if "triad" not in med or peak is None:
        return {}
    got = candidate_shares(med, loop, peak, triad_bytes, threads)
    return {"roofline": {k: v for k, (_, v) in got.items()},
            "bound": bound_label({k: b for k, (b, _) in got.items()})}  # fmt: skip
