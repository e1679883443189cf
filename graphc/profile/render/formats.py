"""The table of export formats by name: what ``graphc-prof`` offers (``export --format``,
``run --NAME PATH``, the converting commands) and what ``ProfileStats``' export methods use.

Adding a format is a renderer module (a :class:`Renderer` subclass) plus its line below:
nothing else needs to change.
"""

from __future__ import annotations

from pathlib import Path

from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.render.base import Renderer
from graphc.profile.render.csv_table import CsvRenderer
from graphc.profile.render.graphviz import DotRenderer, PictureRenderer
from graphc.profile.render.html import HtmlRenderer
from graphc.profile.render.pprof import PprofRenderer
from graphc.profile.render.pstats_file import PstatsRenderer
from graphc.profile.render.speedscope import SpeedscopeRenderer
from graphc.profile.render.summary_formats import JsonRenderer, LegacyRenderer, TextRenderer
from graphc.profile.render.trace import TraceRenderer

RENDERERS: dict[str, Renderer] = {}


def register(renderer: Renderer) -> Renderer:
    """Add ``renderer`` under its name (a name registered twice is an error)."""
    if renderer.name in RENDERERS:
        raise ValueError(f"an export format named {renderer.name!r} is already registered")
    RENDERERS[renderer.name] = renderer
    return renderer


for _renderer in (
    TextRenderer(),
    LegacyRenderer(),
    JsonRenderer(),
    TraceRenderer(),
    SpeedscopeRenderer(),
    DotRenderer(),
    PictureRenderer("svg", binary=False),
    PictureRenderer("png", binary=True),
    PictureRenderer("pdf", binary=True),
    HtmlRenderer(),
    PprofRenderer(),
    CsvRenderer(),
    PstatsRenderer(),
):
    register(_renderer)


def renderer(name: str) -> Renderer:
    """The format called ``name``; a ValueError listing the formats when there is none."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ValueError(
            f"no export format {name!r}: the formats are {', '.join(RENDERERS)}"
        ) from None


def export(
    stats: ProfileData, name: str, path: str | Path, options: SummaryOptions | None = None
) -> str | bytes:
    """Write ``stats`` in the format ``name`` to ``path`` (``options`` None: from the flags);
    returns the document."""
    return renderer(name).write(stats, path, options or SummaryOptions.from_config())
