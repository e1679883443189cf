"""Test helper: the bytes a call allocates at its peak, as tracemalloc sees them."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def peak_growth(call: Callable[[], Any]) -> tuple[Any, int]:
    """``call()``'s result and how far its allocations rose above what was held before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
