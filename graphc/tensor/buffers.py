"""Output arrays a Python ``perform`` may write into (the Ops with ``reuses_outputs``).

On entry a perform's output cell holds that output's previous array: a buffer the memory
plan lends it, or its last value. The VM moves it into the cell, so the cell is its only
holder in the VM; anything else still holding it (a caller's reference to a returned
value, a view) must keep seeing its contents, which ``take_own_array`` checks by the
reference count, as the C thunks' ``graphc_out_array`` does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["array_for", "take_own_array"]

_OWN = ("C_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED")


def _take(cell: list) -> tuple[Any, int]:
    """Empty ``cell``: its value and that value's reference count as seen here."""
    a = cell[0]
    cell[0] = None
    return a, sys.getrefcount(a)


# The count ``_take`` sees for an array the cell held alone, measured rather than assumed:
# an interpreter may count the local and the call's argument or borrow them (3.14 may).
_ALONE = _take([np.empty(0)])[1]


def take_own_array(cell: list) -> np.ndarray | None:
    """Empty ``cell`` and return the array it held if nothing else holds it (a
    C-contiguous, writeable array owning its data), else None."""
    a, refs = _take(cell)
    if type(a) is np.ndarray and refs == _ALONE and all(a.flags[f] for f in _OWN):
        return a
    return None


def array_for(prev: np.ndarray | None, shape: Sequence[int], dtype) -> np.ndarray:
    """``prev`` when it has this shape and dtype (its contents are garbage), else a new
    uninitialised array."""
    if prev is not None and prev.shape == tuple(shape) and prev.dtype == dtype:
        return prev
    return np.empty(shape, dtype=dtype)
