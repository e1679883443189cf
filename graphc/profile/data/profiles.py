"""ProfileData: the profiles of one or more compiled functions, as plain data that can be
added, saved and handed to a renderer (``output(renderer, options)``).

Nothing here lays out text: the renderers (``graphc.profile.render``) read this data, and
``graphc.profile.stats.ProfileStats`` adds the printing methods users call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from graphc.profile.data import serialize
from graphc.profile.data.merge import merge_all
from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.options import SummaryOptions

_P = TypeVar("_P", bound="ProfileData")
#: A renderer's document: text, or bytes for a binary format.
_Doc = TypeVar("_Doc", bound="str | bytes")


@dataclass(init=False)
class ProfileData:
    """Profiles of one or more compiled functions; ``name`` overrides the Message line.

    ``ProfileData([fp, ...], name)`` holds the given profiles; Theano's spelling
    ``(atexit_print=True, flag_time_thunks=None, gpu_checks=True, **kwargs)``
    works too: ``atexit_print=False`` keeps a shared profile from printing at exit, and
    other keywords are stored as attributes (``message=`` sets the name).
    """

    functions: list[FunctionProfile] = field(default_factory=list)
    name: str | None = None
    atexit_print: bool = True

    def __init__(
        self,
        *args: Any,
        functions: Iterable[FunctionProfile] | None = None,
        name: str | None = None,
        atexit_print: bool = True,
        flag_time_thunks: bool | None = None,
        gpu_checks: bool = True,
        **kwargs: Any,
    ) -> None:
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
        """Bring the profiles up to date: plain data has nothing to pull (a ProfileStats
        pulls the profilers of its live functions here)."""

    def __add__(self: _P, other: object) -> _P:
        if not isinstance(other, ProfileData):
            return NotImplemented
        return type(self).merge([self, other])

    @classmethod
    def merge(cls: type[_P], stats: Iterable[ProfileData], name: str | None = None) -> _P:
        """Sum of ``stats``: equal functions (name and graph) add their counts."""
        stats = list(stats)
        for s in stats:
            s.refresh()
        return cls(merge_all(s.functions for s in stats), name)

    def output(
        self,
        renderer: Callable[[ProfileData, SummaryOptions], _Doc],
        options: SummaryOptions | None = None,
    ) -> _Doc:
        """``renderer``'s document of the latest counters (``options`` None: from the flags)."""
        self.refresh()
        return renderer(self, options or SummaryOptions.from_config())

    def to_json(self) -> str:
        """The JSON document (schema_version 1, see docs/profile-schema.md)."""
        self.refresh()
        return serialize.dumps(self.functions, self.name)

    @classmethod
    def from_json(cls: type[_P], text: str) -> _P:
        """Parse :meth:`to_json` output."""
        functions, name = serialize.loads(text)
        return cls(functions, name)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")


def function_profiles(obj: Any) -> list[FunctionProfile]:
    """The function profiles of a ProfileData (refreshed), a FunctionProfile, or an iterable
    of them (e.g. the profiles sent back by several worker processes)."""
    if isinstance(obj, FunctionProfile):
        return [obj]
    if isinstance(obj, ProfileData):
        obj.refresh()
        return list(obj.functions)
    out: list[FunctionProfile] = []
    for s in obj:
        out += function_profiles(s)
    return out
