"""Type stub for the compiled loop driver (graphc/vm/_loop.pyx)."""

from collections.abc import Callable
from typing import Any

def run_steps(
    vm: Callable[[list[Any]], list[Any]],
    n: int,
    readers: list[tuple[Any, int, int]],
    nonseqs: list[Any],
    states: list[Any],
    lags: list[int],
    last_only: list[bool],
    n_nit: int,
    as_while: bool,
    name: str,
    on_step: Callable[[int], None] | None,
    prev_nits: list[Any] | None = None,
) -> tuple[int, list[Any]]: ...
def run_kernel(
    vm: object,
    kernel: object,
    n: int,
    n_elem: int,
    operands: list[tuple[Any, int, int]],
    cond: int,
) -> int: ...
