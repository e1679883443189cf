"""ProfileStats: the profile data with the printing methods users call (Theano's
spellings), each building one :class:`SummaryOptions` for the renderer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Protocol, TextIO

from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.render.base import as_text
from graphc.profile.render.formats import RENDERERS, export


class LiveSource(Protocol):
    """The profiler of a live function: it brings its record up to date on ``pull``."""

    def pull(self) -> None: ...


class ProfileStats(ProfileData):
    """Profiles of one or more compiled functions that can be added, printed and saved.

    Theano's signature: ``ProfileStats(atexit_print=True, flag_time_thunks=None,
    gpu_checks=True, **kwargs)`` (``atexit_print=False`` keeps a shared profile from
    printing at exit; ``message=`` or ``name=`` sets the Message line, ``functions=`` the
    profiles held). graphc's own ``ProfileStats([fp, ...], name)`` works too.
    """

    def __init__(
        self,
        atexit_print: Any = True,
        flag_time_thunks: Any = None,
        gpu_checks: bool = True,
        **kwargs: Any,
    ) -> None:
        self._live: list[LiveSource] = []
        if isinstance(atexit_print, bool):
            super().__init__(atexit_print, flag_time_thunks=flag_time_thunks,
                             gpu_checks=gpu_checks, **kwargs)  # fmt: skip
            return
        # graphc's (functions, name): the profiles given positionally
        name = kwargs.pop("name", flag_time_thunks)
        super().__init__(atexit_print, name, gpu_checks=gpu_checks, **kwargs)

    def add_live(self, record: FunctionProfile, source: LiveSource) -> None:
        """Hold ``record``, which ``source`` (its function's profiler) fills on ``pull``."""
        self.functions.append(record)
        self._live.append(source)

    def refresh(self) -> None:
        """Pull the latest counters of the live functions into their records (also done by
        every printing and export)."""
        for source in self._live:
            source.pull()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its data: the live sources stay in this process."""
        self.refresh()
        state = dict(self.__dict__)
        state["_live"] = []
        return state

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
        wider than ``width`` (None: ``COLUMNS``, the terminal's width, else 100). Every
        section counts every call; ``all_calls=False`` leaves each function's first call
        out of the Class, Ops and Apply tables (None: the ``profiling__all_calls`` flag)."""
        options = SummaryOptions.from_config(
            n_apply_to_print, n_ops_to_print, min_memory_size, memory, optimizer, all_calls, width
        )
        (file or sys.stdout).write(as_text(self.output(RENDERERS["text"], options)))

    def print_summary(self, file: TextIO | None = None, **options: Any) -> None:
        """Theano's name for :meth:`summary`."""
        self.summary(file, **options)

    def to_chrome_trace(self, path: str | Path) -> dict[str, Any]:
        """Write the recorded node traces as Chrome Trace Event JSON (Perfetto,
        chrome://tracing); needs ``config.profile_trace``. Returns the document."""
        doc: dict[str, Any] = json.loads(self.export(path, "trace"))
        return doc

    def to_html(self, path: str | Path) -> None:
        """Write the self-contained HTML report (tables, graph, loops, memory, timeline)."""
        self.export(path, "html")

    def export(
        self, path: str | Path, format: str, options: SummaryOptions | None = None
    ) -> str | bytes:
        """Write the profile to ``path`` in the export format ``format`` (a name of
        ``graphc.profile.render.formats.RENDERERS``: text, json, csv, pstats, pprof...);
        returns the document."""
        return export(self, format, path, options)


def load(path: str | Path) -> ProfileStats:
    """Read a profile written by :meth:`ProfileStats.save`."""
    return ProfileStats.from_json(Path(path).read_text(encoding="utf-8"))
