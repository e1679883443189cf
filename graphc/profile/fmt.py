"""Number and table formatting shared by the renderers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphc.profile.model import ValueInfo


def seconds(ns: float) -> str:
    """Nanoseconds as ``1.234567e-04s`` (global section precision)."""
    return f"{ns / 1e9:.6e}s"


def short_seconds(ns: float) -> str:
    """Nanoseconds as ``1.23e-04s`` (table precision)."""
    return f"{ns / 1e9:.2e}s"


def below(resolution_ns: int) -> str:
    """Marker for a time under the clock resolution, e.g. ``<1.0e-08s``."""
    return f"<{max(resolution_ns, 1) / 1e9:.1e}s"


def pct(part: float, whole: float) -> float:
    """``part`` as a percentage of ``whole``; 0 when ``whole`` is 0."""
    return 100.0 * part / whole if whole else 0.0


def nbytes(n: int) -> str:
    """Bytes as ``23KB`` (rounded to the nearest KB, like Theano)."""
    return f"{int(round(n / 1024))}KB"


def _is_c_contiguous(v: ValueInfo) -> bool:
    if v.shape is None or v.strides is None or len(v.shape) != len(v.strides):
        return False
    try:
        expected = np.dtype(v.dtype).itemsize
    except TypeError:
        return False
    for dim, stride in zip(reversed(v.shape), reversed(v.strides)):
        if dim > 1 and stride != expected:
            return False
        expected *= dim
    return True


def strides_text(v: ValueInfo) -> str:
    """``c`` for C-contiguous values, else the strides tuple (``?`` when unknown)."""
    if v.strides is None:
        return "?"
    return "c" if _is_c_contiguous(v) else str(tuple(v.strides))


def shape_text(shape: tuple[int, ...] | None) -> str:
    """A shape as a tuple, ``?`` when unknown."""
    return "?" if shape is None else str(tuple(shape))


def value_line(kind: str, i: int, v: ValueInfo) -> str:
    """``    input 0: dtype=float64, shape=(1000,), strides=c``; merged runs that saw several
    shapes list them all (``shape=varied (400, 100) | (401, 100)``)."""
    shape = shape_text(v.shape)
    if len(v.shapes_seen) > 1:
        shape = "varied " + " | ".join(shape_text(s) for s in v.shapes_seen)
    return f"    {kind} {i}: dtype={v.dtype}, shape={shape}, strides={strides_text(v)}"


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = ()
) -> list[str]:
    """Header and rows joined by single spaces, each column right-aligned to its widest
    cell (left-aligned for the columns in ``left``); the last column is never padded."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    last = len(headers) - 1

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            if i == last:
                out.append(cell)
            elif i in left:
                out.append(cell.ljust(widths[i]))
            else:
                out.append(cell.rjust(widths[i]))
        return " ".join(out).rstrip()

    return [line(headers)] + [line(r) for r in rows]
