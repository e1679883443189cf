"""The process's one pool of worker threads for split element-wise runs (``par_pool.c``).

Built once through the compile cache; every element-wise module compiled with
``config.openmp`` looks up its entry points through ``api()`` (a capsule) on its first long
run, so all of them share the same workers.
"""

from __future__ import annotations

import threading
import types
from typing import NamedTuple

from graphc.linker.c.common import c_source

_SOURCE = c_source("par_pool.c")
_LOCK = threading.Lock()
_MODULE: list[types.ModuleType] = []  # the one loaded pool, once built


class PoolStats(NamedTuple):
    """The pool's state: workers started (in this process), workers asleep, how long an
    idle worker polls (ns), and the times a worker went to sleep because its poll ran out,
    because it was descheduled, or because a long run went serially."""

    workers: int
    sleeping: int
    spin_ns: int
    slept_spin: int
    slept_descheduled: int
    slept_rest: int


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
