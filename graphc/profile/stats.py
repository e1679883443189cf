"""ProfileStats: a container of function profiles that can be added, printed and saved."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from graphc.flags import config
from graphc.profile import serialize
from graphc.profile.merge import merge_all
from graphc.profile.model import FunctionProfile
from graphc.profile.text import render_summary


@dataclass(init=False)
class ProfileStats:
    """Profiles of one or more compiled functions; ``name`` overrides the Message line.

    ``ProfileStats([fp, ...], name)`` holds the given profiles; Theano's spelling
    ``ProfileStats(atexit_print=True, flag_time_thunks=None, gpu_checks=True, **kwargs)``
    works too: ``atexit_print=False`` keeps a shared profile from printing at exit, and
    other keywords are stored as attributes (``message=`` sets the name).
    """

    functions: list[FunctionProfile] = field(default_factory=list)
    name: str | None = None
    atexit_print: bool = True

    def __init__(self, *args, functions=None, name=None, atexit_print=True,
                 flag_time_thunks=None, gpu_checks=True, **kwargs):  # fmt: skip
        if args and isinstance(args[0], bool):  # Theano: (atexit_print, flag_time_thunks, ...)
            atexit_print = args[0]
        elif args:
            functions = args[0]
            name = args[1] if len(args) > 1 else name
        self.functions = list(functions or [])
        self.name = kwargs.pop("message", name)
        self.atexit_print = bool(atexit_print)
        self.flag_time_thunks = flag_time_thunks
        self.gpu_checks = gpu_checks
        for key, value in kwargs.items():
            setattr(self, key, value)

    def refresh(self) -> None:
        """Pull the latest counters from the functions that own live profiles."""
        for f in self.functions:
            if f.refresh is not None:
                f.refresh()

    def __add__(self, other: ProfileStats) -> ProfileStats:
        if not isinstance(other, ProfileStats):
            return NotImplemented
        return ProfileStats.merge([self, other])

    @staticmethod
    def merge(stats: list[ProfileStats], name: str | None = None) -> ProfileStats:
        """Sum of ``stats``: equal functions (name and graph) add their counts."""
        for s in stats:
            s.refresh()
        return ProfileStats(merge_all(s.functions for s in stats), name)

    def summary(
        self,
        file: TextIO | None = None,
        n_apply_to_print: int | None = None,
        n_ops_to_print: int | None = None,
        min_memory_size: int = 1024,
        memory: bool | None = None,
        optimizer: bool | None = None,
        all_calls: bool | None = None,
        width: int | None = None,
    ) -> None:
        """Print every section (memory/optimizer: None shows them when recorded; row counts
        None: the ``profiling__n_apply`` and ``profiling__n_ops`` flags), no line
        wider than ``width`` (None: ``COLUMNS``, the terminal's width, else 100). The times
        leave each function's first call out unless ``all_calls`` (None: the
        ``profiling__all_calls`` flag)."""
        self.refresh()
        if all_calls is None:
            all_calls = config.profiling__all_calls
        text = render_summary(
            self.functions,
            self.name,
            n_apply_to_print=n_apply_to_print,
            n_ops_to_print=n_ops_to_print,
            min_memory_size=min_memory_size,
            memory=memory,
            optimizer=optimizer,
            all_calls=all_calls,
            width=width,
        )
        (file or sys.stdout).write(text)

    def print_summary(self, file: TextIO | None = None, **options) -> None:
        """Theano's name for :meth:`summary`."""
        self.summary(file, **options)

    def to_json(self) -> str:
        """The JSON document (schema_version 1, see docs/profile-schema.md)."""
        self.refresh()
        return serialize.dumps(self.functions, self.name)

    @classmethod
    def from_json(cls, text: str) -> ProfileStats:
        """Parse :meth:`to_json` output."""
        functions, name = serialize.loads(text)
        return cls(functions, name)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")

    def to_chrome_trace(self, path: str | Path) -> dict:
        """Write the recorded node traces as Chrome Trace Event JSON (Perfetto,
        chrome://tracing); needs ``config.profile_trace``. Returns the document."""
        from graphc.profile.trace import write_chrome_trace

        return write_chrome_trace(self, path)


def load(path: str | Path) -> ProfileStats:
    """Read a profile written by :meth:`ProfileStats.save`."""
    return ProfileStats.from_json(Path(path).read_text(encoding="utf-8"))
