"""Number and table formatting shared by the renderers."""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from collections.abc import Sequence

import numpy as np

from graphc.profile.data.model import ValueInfo


def short_origin(origin: str) -> str:
    """``/a/b/train.py:12`` as ``train.py:12`` (each frame of a ``" <- "`` call chain)."""
    if " <- " in origin:
        return " <- ".join(short_origin(o) for o in origin.split(" <- "))
    path, _, line = origin.rpartition(":")
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}" if path else origin


def origin_key(origin: str) -> tuple[str, int]:
    path, _, line = origin.split(" <- ", 1)[0].rpartition(":")
    return (path, int(line) if line.isdigit() else 0)


def origins_text(origins: Sequence[str], limit: int = 4) -> str:
    """Sorted short source lines, at most ``limit`` of them then ``+N more``."""
    items = [short_origin(o) for o in sorted(origins, key=origin_key)]
    extra = f", +{len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + extra


def seconds(ns: float) -> str:
    """Nanoseconds as ``1.234567e-04s`` (global section precision)."""
    return f"{ns / 1e9:.6e}s"


def short_seconds(ns: float) -> str:
    """Nanoseconds as ``1.23e-04s`` (table precision)."""
    return f"{ns / 1e9:.2e}s"


def duration(ns: float, ms_digits: int = 2) -> str:
    """Nanoseconds in the largest fitting unit: ``1.23 ms``, ``4.5 us``, ``678 ns``."""
    if ns >= 1e6:
        return f"{ns / 1e6:.{ms_digits}f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.0f} ns"


def below(resolution_ns: int) -> str:
    """Marker for a time under the clock resolution, e.g. ``<1.0e-08s``."""
    return f"<{max(resolution_ns, 1) / 1e9:.1e}s"


DEFAULT_WIDTH = 100
MIN_WIDTH = 60


def report_width() -> int:
    """Columns for the text report: ``COLUMNS``, else the terminal's, else 100."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    cols = shutil.get_terminal_size(fallback=(DEFAULT_WIDTH, 24)).columns
    return max(cols or DEFAULT_WIDTH, MIN_WIDTH)


def middle_ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by replacing its middle with ``...``."""
    if len(text) <= width:
        return text
    if width <= 3:
        return text[:width]
    head = (width - 3 + 1) // 2
    tail = width - 3 - head
    return text[:head] + "..." + (text[-tail:] if tail else "")


def cut_name(text: str, width: int) -> str:
    """A name cut to ``width``: a dotted name (``graphc.tensor.elemwise.Elemwise``) keeps its
    first part and as many whole last parts as fit (``graphc...elemwise.Elemwise``), its last
    part always whole; other names are cut in the middle."""
    if len(text) <= width:
        return text
    parts = text.split(".")
    if len(parts) < 2 or " " in text:
        return middle_ellipsis(text, width)
    tail = parts[-1]
    for part in reversed(parts[1:-1]):
        if len(parts[0]) + 3 + len(part) + 1 + len(tail) > width:
            break
        tail = f"{part}.{tail}"
    if len(parts[0]) + 3 + len(tail) <= width:
        return f"{parts[0]}...{tail}"
    return "..." + tail  # the last part whole, even when that is wider than ``width``


def fit_lines(lines: Sequence[str], width: int) -> list[str]:
    """Every line at most ``width`` wide without cutting a number or a word: lines are
    wrapped under their own indentation (tables cut their names to fit beforehand)."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        hang = indent + ("    " if not body.startswith("- ") else "  ")
        wrapped = textwrap.wrap(body, width, initial_indent=indent, subsequent_indent=hang,
                                break_on_hyphens=False, break_long_words=False)  # fmt: skip
        out += [_cut_word(w, width) for w in wrapped or [line]]
    return out


_NUMBER = re.compile(r"[-+<(\[]*\d[\d.,]*(e[-+]?\d+)?[A-Za-z%~)\]/]*")


def _cut_word(line: str, width: int) -> str:
    """A wrapped line that is one word too wide for ``width``: the word cut, unless it is a
    number (left whole)."""
    word = line.lstrip(" ")
    indent = line[: len(line) - len(word)]
    if len(line) <= width or _NUMBER.fullmatch(word):
        return line
    return indent + cut_name(word, max(width - len(indent), 8))


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


def shape_text(shape: tuple[int, ...] | None) -> str:
    """A shape as a tuple, ``?`` when unknown."""
    return "?" if shape is None else str(tuple(shape))


def values_line(inputs: Sequence[ValueInfo], outputs: Sequence[ValueInfo]) -> str:
    """All of a node's values on one short line: ``    float64 (1000,) (1000, 1000)s ->
    (1000,)``; a dtype is named where it changes (so once when all share it: ``float64
    (400,) (1,) -> bool (400,) float64 () ()`` for a loop with several outputs), ``s``
    marks strided values (not C-contiguous), ``?`` an unknown shape."""
    last: list[str | None] = [None]

    def one(v: ValueInfo) -> str:
        mark = "" if v.strides is None or _is_c_contiguous(v) else "s"
        text = shape_text(v.shape).replace(" ", "") + mark
        if v.dtype == last[0]:
            return text
        last[0] = v.dtype
        return f"{v.dtype} {text}"

    ins = " ".join(one(v) for v in inputs)
    outs = " ".join(one(v) for v in outputs)
    return f"    {ins} -> {outs}"


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    left: Sequence[int] = (),
    width: int | None = None,
) -> list[str]:
    """Header and rows joined by single spaces, each column right-aligned to its widest
    cell (left-aligned for the columns in ``left``); the last column is never padded.
    With ``width``, last-column cells (names) are cut to fit it (``cut_name``)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    last = len(headers) - 1
    if width is not None:
        room = max(width - sum(widths[:last]) - last, 16)
        rows = [[*r[:last], cut_name(r[last], room)] for r in rows]

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
