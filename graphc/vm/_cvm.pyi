"""Type stub for the compiled Cython VM (graphc/vm/_cvm.pyx)."""

from collections.abc import Sequence
from typing import Any, Literal

from graphc.linker.program import Program

C_RING: int
#: a capsule of the C entry points graphc.vm._loop calls a CVM through
step_api: Any

class CVM:
    """Runs a Program; same API and semantics as graphc.vm.pyvm.PyVM."""

    program: Program  # the Program being run (read-only)
    allow_gc: bool  # whether intermediates are freed after their last reader (read-only)
    failed_node: int | None  # index of the node that raised in the last call, else None
    @property
    def kind(self) -> Literal["cvm"]: ...
    def __init__(self, program: Program, allow_gc: bool = True) -> None: ...
    def __call__(self, args: Sequence[Any]) -> list[Any]: ...
    def set_profiling(
        self,
        timing: bool = False,
        memory: bool = False,
        shapes: bool = False,
        trace_capacity: int = 0,
    ) -> None: ...
    def held_bytes(self) -> int: ...
    def plan_bytes(self) -> int: ...
    def recycle(self, k: int, value: Any) -> None: ...
    def step_counts(self) -> tuple[int, int]: ...
    def reset_stats(self) -> None: ...
    def stats(self) -> dict[str, Any]: ...
