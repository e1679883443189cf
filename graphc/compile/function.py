"""graphc.function: compile a graph into a callable.

Pipeline, one module per job: ``compile/io.py`` (In, Out) and ``compile/fgraph.py`` turn
the arguments into a FunctionGraph (givens substituted, shared variables as implicit
inputs, updates as extra outputs, with the update policy of ``compile/aliasing.py``);
``compile/maker.py`` rewrites it (graphc.opt), links it (graphc.linker) and picks the VM
(graphc.vm); ``compile/callable.py`` is the resulting ``Function``. Profiling reads what
the VM records (graphc.compile.profiling).
"""

from __future__ import annotations

import gc
import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from graphc.compile.aliasing import default_updates
from graphc.compile.callable import Function
from graphc.compile.io import In, Out, UnusedInputError
from graphc.compile.maker import CompileOptions, FunctionMaker, rebuild_function, replace_refs_back
from graphc.compile.mode import Mode, ModeProvider

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CompileOptions", "Function", "FunctionMaker", "In", "Out", "UnusedInputError",
    "default_updates", "function", "replace_refs_back",
]  # fmt: skip

# Functions pickled before the maker had its own module name this as their loader.
_rebuild_function = rebuild_function


def function(
    inputs: Sequence,
    outputs: Any = None,
    mode: Mode | ModeProvider | str | None = None,
    updates: Any = None,
    givens: Any = None,
    name: str | None = None,
    profile=None,
    on_unused_input: str = "raise",
    allow_input_downcast: bool | None = None,
    trust_input: bool = False,
    no_default_updates: bool = False,
) -> Function:
    """Compile ``outputs`` as a function of ``inputs``.

    ``updates``: pairs (shared variable, new expression) applied after the outputs are
    computed, all from the values before the call. ``givens``: pairs (variable, replacement)
    substituted before compiling. ``profile``: True, a ``ProfileStats`` to accumulate into,
    or None for ``config.profile``. A shared variable the graph reads that has a
    ``default_update`` and no explicit update is updated with it, unless
    ``no_default_updates`` is True or a list holding it.
    """
    if name is None:
        name = _caller_location()
    with cyclic_gc_paused():
        options = CompileOptions(updates, givens, name, profile, on_unused_input,
                                 allow_input_downcast, no_default_updates)  # fmt: skip
        fn = FunctionMaker(inputs, outputs, mode, options).create()
    fn.trust_input = trust_input
    return fn


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Run the body with Python's cyclic garbage collector off (and back on after, if it
    was on). Compiling allocates many objects that stay alive, so each automatic collection
    walks a larger heap: on a long graph they took about half of the compile time, growing
    faster than the graph. Cycles dropped meanwhile (replaced nodes) are collected later."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _caller_location() -> str:
    frame = inspect.currentframe()
    try:
        f = frame.f_back.f_back if frame and frame.f_back else None
        return f"{f.f_code.co_filename}:{f.f_lineno}" if f else "<unknown>"
    finally:
        del frame
