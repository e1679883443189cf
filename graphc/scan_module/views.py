"""``map``, ``reduce``, ``foldl`` and ``foldr``: the common loops, written with ``scan``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from graphc.scan_module.build import scan

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.compile.mode import Mode
    from graphc.graph.basic import Variable

__all__ = ["foldl", "foldr", "map", "reduce"]


def map(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None,
    non_sequences: Variable | Sequence[Variable] | None = None,
    truncate_gradient: int = -1,  # noqa: A001
    go_backwards: bool = False,
    mode: Mode | str | None = None,
    name: str | None = None,
):
    """``fn`` applied to each row of ``sequences``; returns ``(outputs, updates)``."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)  # fmt: skip


def reduce(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None,
    outputs_info: Any,
    non_sequences: Variable | Sequence[Variable] | None = None,  # noqa: A001
    go_backwards: bool = False,
    mode: Mode | str | None = None,
    name: str | None = None,
):
    """Like ``scan``, returning only the last value of each output."""
    outs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                         non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                         name=name)  # fmt: skip
    if isinstance(outs, list):
        return [o[-1] for o in outs], updates
    return outs[-1], updates


def foldl(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None,
    outputs_info: Any,
    non_sequences: Variable | Sequence[Variable] | None = None,
    mode: Mode | str | None = None,
    name: str | None = None,
):
    """``reduce`` from the first row to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(
    fn: Callable,
    sequences: Variable | Sequence[Any] | None,
    outputs_info: Any,
    non_sequences: Variable | Sequence[Variable] | None = None,
    mode: Mode | str | None = None,
    name: str | None = None,
):
    """``reduce`` from the last row to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)
