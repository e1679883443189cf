"""Time spent importing Python modules for the first time, so compile phases can show it
on a line of its own (a lazily imported scipy.linalg can cost more than the compile).

A leaf utility: it imports nothing from graphc, so any layer may read the clock.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


class _TimedLoader:
    """Delegates to ``loader``; times module creation and execution on every clock that
    was running when the import started (a compile nested in a compile counts it in both)."""

    def __init__(self, loader, clocks: list[ImportClock]):
        self._loader = loader
        self._clocks = clocks

    def _timing(self) -> ExitStack:
        stack = ExitStack()
        for clock in self._clocks:
            stack.enter_context(clock.timing())
        return stack

    def create_module(self, spec):
        with self._timing():
            return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType):
        with self._timing():
            self._loader.exec_module(module)

    def __getattr__(self, name: str):
        return getattr(self._loader, name)


class ImportClock(importlib.abc.MetaPathFinder):
    """While installed, ``ns`` accumulates the time of first-time imports (nested imports
    are counted once, in their outermost import) made by the installing thread."""

    def __init__(self):
        self.ns = 0
        self._depth = 0
        self._thread = threading.get_ident()

    def find_spec(self, name: str, path, target=None):
        if threading.get_ident() != self._thread:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if isinstance(finder, ImportClock) or find is None:
                continue
            spec = find(name, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _TimedLoader(spec.loader, list(getattr(_active, "clocks", [self])))
            return spec
        return None

    @contextmanager
    def timing(self):
        self._depth += 1
        t0 = time.perf_counter_ns()
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.ns += time.perf_counter_ns() - t0


_active = threading.local()  # the clocks installed by this thread, innermost last


@contextmanager
def import_clock():
    """Install an :class:`ImportClock` for the duration of the block."""
    clock = ImportClock()
    sys.meta_path.insert(0, clock)
    stack = _active.__dict__.setdefault("clocks", [])
    stack.append(clock)
    try:
        yield clock
    finally:
        stack.pop()
        sys.meta_path.remove(clock)


def imports_ns() -> int:
    """First-time import time measured so far by this thread's innermost clock (0 when no
    clock runs): a phase subtracts the difference across it to exclude imports."""
    stack = getattr(_active, "clocks", None)
    return stack[-1].ns if stack else 0
