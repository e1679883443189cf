"""Coordinating the process's BLAS thread pools (numpy's and scipy's OpenBLAS).

numpy's ``dot``/``@`` call numpy's own copy of OpenBLAS; graphc's C code calls the same one
where it can (``blas_lib``), else scipy's. Each library keeps a pool of threads that spin
for a while after every call, so a program mixing numpy products and products in a second
pool runs up to twice as many busy threads as there are cores and every product waits for
threads the other pool holds (a 7.9 ms step took 30-50 ms).

Through threadpoolctl (a dependency of graphc; the code still runs where it is missing),
the first function graphc links with a BLAS node applies the ``blas_threads`` flag once:

- ``auto`` (default): when graphc calls a pool other than numpy's and two or more BLAS pools
  together have more threads than the process may use cores, each gets
  ``max(1, cores // pools)`` threads; else nothing changes (graphc adds no pool);
- ``off``: the pools are left alone;
- an integer ``N``: every BLAS pool gets ``N`` threads.

Without threadpoolctl nothing is changed and a warning says so once; set
``OPENBLAS_NUM_THREADS`` (read when the libraries load, so before Python starts) instead.
``set_blas_threads(n)`` and ``pools()`` are available for explicit control.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Sequence

from graphc.flags import config
from graphc.linker.blas_lib import blas_library

__all__ = ["coordinate", "plan_threads", "pools", "set_blas_threads", "usable_cpus"]

_lock = threading.Lock()
_done = False
_warned = False


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity; what libgomp's thread count
    defaults to)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def pools() -> list[dict]:
    """The BLAS pools loaded in this process (threadpoolctl's description of each: its
    ``filepath``, ``internal_api``, ``num_threads``...), or ``[]`` without threadpoolctl."""
    ctl = _controller()
    if ctl is None:
        return []
    return [lib.info() for lib in ctl.lib_controllers if lib.user_api == "blas"]


def plan_threads(counts: Sequence[int], cpus: int, setting: str) -> list[int] | None:
    """Thread counts for BLAS pools now at ``counts`` under the flag value ``setting``, or
    None when nothing should change."""
    s = str(setting).strip().lower()
    if s == "off" or not counts:
        return None
    if s == "auto":
        if len(counts) < 2 or sum(counts) <= cpus:
            return None
        share = max(1, cpus // len(counts))
        return [min(c, share) for c in counts]
    try:
        n = int(s)
    except ValueError:
        msg = f"blas_threads must be auto, off or a thread count, not {setting!r}"
        raise ValueError(msg) from None
    if n < 1:
        raise ValueError(f"blas_threads must be at least 1, not {n}")
    return [n] * len(counts)


def _warn_missing() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "graphc cannot coordinate the BLAS thread pools of numpy and scipy without "
            "threadpoolctl (pip install threadpoolctl); set OPENBLAS_NUM_THREADS before "
            "starting Python instead, or blas_threads=off to silence this",
            RuntimeWarning,
            stacklevel=3,
        )


def set_blas_threads(n: int) -> dict[str, int]:
    """Give every BLAS pool in the process ``n`` threads; returns the previous count per
    library path (``{}`` without threadpoolctl, after a warning)."""
    if n < 1:
        raise ValueError(f"set_blas_threads: n must be at least 1, not {n}")
    ctl = _controller()
    if ctl is None:
        _warn_missing()
        return {}
    before = {}
    for lib in ctl.lib_controllers:
        if lib.user_api == "blas":
            before[lib.filepath] = lib.num_threads
            lib.set_num_threads(n)
    return before


def coordinate() -> dict[str, int]:
    """Apply the ``blas_threads`` flag once per process (the linker calls this when it links
    a node that calls BLAS); returns the new count per library path (``{}`` if unchanged)."""
    global _done
    with _lock:
        if _done:
            return {}
        _done = True
        setting = config.blas_threads  # "auto", "off" or a count (normalized by the flag)
        if setting == "off" or (setting == "auto" and blas_library().source == "numpy"):
            return {}  # (auto: graphc's products run in numpy's pool, adding none)
        ctl = _controller()
        if ctl is None:
            if setting != "auto":
                _warn_missing()
            return {}
        libs = [lib for lib in ctl.lib_controllers if lib.user_api == "blas"]
        plan = plan_threads([lib.num_threads for lib in libs], usable_cpus(), setting)
        if plan is None:
            return {}
        for lib, n in zip(libs, plan):
            lib.set_num_threads(n)
        return {lib.filepath: n for lib, n in zip(libs, plan)}


def _reset_for_tests() -> None:
    global _done, _warned
    with _lock:
        _done = False
        _warned = False
