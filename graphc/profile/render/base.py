"""The renderer interface every export implements: a named format that turns profiles into
one document (text or bytes), with its own options given to ``__init__``.

The table of formats by name is ``graphc.profile.render.formats.RENDERERS``; ``graphc-prof``
and ``ProfileStats``' export methods take every format from it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData


class Renderer(ABC):
    """One export format. ``render(stats, options)`` returns the whole document: ``bytes``
    when ``output_is_binary``, else text. ``options`` carries the choices every format shares
    (rows, width, ``all_calls``); a format's own choices are arguments of its ``__init__``."""

    #: The format's name: ``graphc-prof export --format NAME`` and ``run --NAME PATH``.
    name: str
    #: The conventional file suffix, with its dot (``".json"``).
    extension: str
    #: One line for ``--help``.
    description: str
    output_is_binary: bool = False
    #: Whether the format shows node traces (``run`` then turns ``profile_trace`` on).
    needs_trace: bool = False
    #: The ``graphc-prof`` command converting a saved profile (``COMMAND profile.json OUT``)
    #: to this format, if any; formats sharing a command are told apart by OUT's suffix.
    command: str | None = None

    @abstractmethod
    def render(self, stats: ProfileData, options: SummaryOptions) -> str | bytes:
        """The document for ``stats`` (its latest counters: the caller refreshes)."""

    def note(self, stats: ProfileData) -> str:
        """A remark to print after writing ``stats`` (e.g. events a trace dropped), or ""."""
        return ""

    def __call__(self, stats: ProfileData, options: SummaryOptions) -> str | bytes:
        return self.render(stats, options)

    def write(self, stats: ProfileData, path: str | Path, options: SummaryOptions) -> str | bytes:
        """Render ``stats`` (refreshed first) into the file ``path``; returns the document."""
        stats.refresh()
        doc = self.render(stats, options)
        if isinstance(doc, bytes):
            Path(path).write_bytes(doc)
        else:
            Path(path).write_text(doc, encoding="utf-8")
        return doc


def as_text(doc: str | bytes) -> str:
    """``doc`` of a text format, as ``str`` (a TypeError for a binary one)."""
    if not isinstance(doc, str):
        raise TypeError("this format writes bytes, not text")
    return doc
