"""The process's one pool of worker threads for split element-wise runs (``par_pool.c``).

Built once through the compile cache; every element-wise module compiled with
``config.openmp`` looks up its entry points through ``api()`` (a capsule) on its first long
run, so all of them share the same workers.
"""

from __future__ import annotations

import threading
import types
from typing import NamedTuple

import numpy as np

from graphc.linker.c.common import c_source

_SOURCE = c_source("par_pool.c")
_LOCK = threading.Lock()
_MODULE: list[types.ModuleType] = []  # the one loaded pool, once built


class PoolStats(NamedTuple):
    """The pool's state: workers started (in this process), workers asleep, how long an
    idle worker polls (ns), and the times a worker went to sleep because its poll ran out,
    because it was descheduled, or because a long run went serially; the times a worker
    moved off the CPU of the thread that split the run, and the blocks a worker ran on
    that CPU all the same."""

    workers: int
    sleeping: int
    spin_ns: int
    slept_spin: int
    slept_descheduled: int
    slept_rest: int
    moved_off_caller: int
    blocks_on_caller: int


def module() -> types.ModuleType:
    """The pool's extension module, built (or found in the cache) on the first call."""
    with _LOCK:
        if not _MODULE:
            from graphc.linker.cache import get_cache

            _MODULE.append(get_cache().load(_SOURCE, extra_cflags=["-pthread"],
                                            name_hint="par_pool"))  # fmt: skip
        return _MODULE[0]


def api() -> object:
    """The capsule of the pool's entry points (``gc_pool_api`` in ``par_pool.c``)."""
    return module().api()


def stats() -> PoolStats:
    """The pool's state now (see ``PoolStats``)."""
    return PoolStats(*module().stats())


def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray, threads: int) -> int:
    """``a[:] = b + 3 c`` (float64, contiguous) split across the pool as an element-wise
    run on up to ``threads`` threads: the memory bandwidth on all threads as graphc's loops
    get it, beside the pool's own wake-ups. Returns 0 when the caller ran it all (one
    thread, or the pool taken), 1 when it was split, 2 when a worker had to be woken (or
    started) for it."""
    for name, v in (("a", a), ("b", b), ("c", c)):
        if v.dtype != np.float64 or not v.flags.c_contiguous:
            raise ValueError(f"triad: {name} must be a contiguous float64 array")
    if not a.flags.writeable:
        raise ValueError("triad: a must be writeable")
    if b.size < a.size or c.size < a.size:
        raise ValueError("triad: b and c must be as long as a")
    return int(module().triad(a, b, c, threads))


def rest() -> None:
    """Tell the idle workers to sleep now, as a module whose run goes serially does."""
    module().rest()
