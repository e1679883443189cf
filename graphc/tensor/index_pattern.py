"""The static index pattern of the indexing Ops (``idx_list``) and what follows from it.

An Op's ``idx_list`` has one entry per index item:

- an ``int``: a constant integer index;
- a dtype name (``"int64"``): a symbolic integer scalar, taken from the Op's extra inputs;
- a ``SliceIdx(start, stop, step)`` whose parts are each None, an int or a dtype name;
- ``None``: a new axis (advanced indexing only; basic indexing adds new axes with DimShuffle);
- an ``ArrayIdx(dtype, ndim)``: an integer array index (advanced indexing only).

Symbolic parts become extra inputs after ``x`` (after ``x, y`` for the increment Ops), in
the order they appear. This module reads a pattern: its text, its numpy index at run time,
the inputs it expects, and the lengths of its slices (static and symbolic).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor.shape import _i64

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.graph.basic import Op
    from graphc.tensor.variable import TensorLike

INT_DTYPES = ps.INT_DTYPES


@dataclass(frozen=True)
class SliceIdx:
    """A slice whose parts are None, a constant int, or the dtype name of a symbolic input."""

    start: int | str | None = None
    stop: int | str | None = None
    step: int | str | None = None

    def __str__(self) -> str:
        def s(v):
            return "" if v is None else str(v)

        if self.step is not None:
            return f"{s(self.start)}:{s(self.stop)}:{s(self.step)}"
        if self.stop is not None:
            return f"{s(self.start)}:{s(self.stop)}"
        if self.start is not None:
            return f"{s(self.start)}:"
        return ":"


@dataclass(frozen=True)
class ArrayIdx:
    """An integer array index input of the given dtype and ndim."""

    dtype: str
    ndim: int

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join([':'] * self.ndim)}]"


def _entry_str(e) -> str:
    return "newaxis" if e is None else str(e)


def format_index(idx_list: Sequence[Any], input_strs) -> str:
    """``idx_list`` as Python index text, symbolic parts replaced by ``input_strs``."""
    it = iter(input_strs)

    def part(v):
        if v is None:
            return ""
        return str(next(it)) if isinstance(v, str) else str(v)

    items = []
    for e in idx_list:
        if e is None:
            items.append("None")
        elif isinstance(e, SliceIdx):
            start, stop, step = part(e.start), part(e.stop), part(e.step)
            items.append(f"{start}:{stop}" + (f":{step}" if e.step is not None else ""))
        elif isinstance(e, str | ArrayIdx):
            items.append(str(next(it)))
        else:
            items.append(str(e))
    return ", ".join(items)


def _n_inputs(idx_list: Sequence[Any]) -> int:
    n = 0
    for e in idx_list:
        if isinstance(e, SliceIdx):
            n += sum(isinstance(p, str) for p in (e.start, e.stop, e.step))
        elif isinstance(e, str | ArrayIdx):
            n += 1
    return n


def _np_index(idx_list: Sequence[Any], inputs) -> tuple:
    """The numpy index tuple for ``idx_list`` given the runtime values of its inputs."""
    it = iter(inputs)

    def part(v):
        if isinstance(v, str):
            return int(next(it))
        return v

    out: list = []
    for e in idx_list:
        if isinstance(e, SliceIdx):
            out.append(slice(part(e.start), part(e.stop), part(e.step)))
        elif isinstance(e, str):
            out.append(int(next(it)))
        elif isinstance(e, ArrayIdx):
            out.append(next(it))
        else:
            out.append(e)
    return tuple(out)


def _check_inputs(op: Op, idx_list: Sequence[Any], inputs) -> None:
    if len(inputs) != _n_inputs(idx_list):
        raise TypeError(f"{op}: expected {_n_inputs(idx_list)} index inputs, got {len(inputs)}")
    it = iter(inputs)

    def check_scalar(what):
        v = next(it)
        if v.ndim != 0 or v.dtype not in INT_DTYPES:
            raise TypeError(f"{op}: {what} must be an integer scalar, got {v} of type {v.type}")

    for e in idx_list:
        if isinstance(e, SliceIdx):
            for p in (e.start, e.stop, e.step):
                if isinstance(p, str):
                    check_scalar("a slice bound")
        elif isinstance(e, str):
            check_scalar("an index")
        elif isinstance(e, ArrayIdx):
            v = next(it)
            if v.dtype not in INT_DTYPES or v.ndim < 1:
                raise TypeError(f"{op}: array index {v} ({v.type}) must be an integer array")


def _consumed(idx_list: Sequence[Any]) -> int:
    return sum(e is not None for e in idx_list)


def _static_slice_len(e: SliceIdx, n: int | None) -> int | None:
    if e == SliceIdx():
        return n
    if n is None or any(isinstance(p, str) for p in (e.start, e.stop, e.step)):
        return None
    return len(range(*slice(e.start, e.stop, e.step).indices(n)))


def _slice_len(e: SliceIdx, n, parts: list):
    """Symbolic length of slice ``e`` of an axis of size ``n`` (int64 scalar Variable)."""
    it = iter(parts)

    def val(p):
        if p is None:
            return None
        return tm.cast(next(it), "int64") if isinstance(p, str) else int(p)

    start, stop, step = val(e.start), val(e.stop), val(e.step)
    if e == SliceIdx():
        return n
    zero, one = _i64(0), _i64(1)

    def norm(v: TensorLike, lo, hi):
        if isinstance(v, int):
            v = _i64(v) + n if v < 0 else _i64(v)
        else:
            v = tm.switch(tm.lt(v, _i64(0)), v + n, v)
        return tm.minimum(tm.maximum(v, lo), hi)

    def forward(st: Sequence[int] | None):
        s = zero if start is None else norm(start, zero, n)
        t = n if stop is None else norm(stop, zero, n)
        return tm.maximum(tm.int_div(t - s + st - one, st), zero)

    def backward(st: Sequence[int] | None):
        s = n - one if start is None else norm(start, -one, n - one)
        t = -one if stop is None else norm(stop, -one, n - one)
        return tm.maximum(tm.int_div(s - t - st - one, -st), zero)

    if step is None:
        out = forward(one)
    elif isinstance(step, int):
        if step == 0:
            raise ValueError("slice step cannot be zero")
        out = forward(_i64(step)) if step > 0 else backward(_i64(step))
    else:
        out = tm.switch(tm.gt(step, _i64(0)), forward(step), backward(step))
    return tm.cast(out, "int64")
