"""One self-contained HTML page of a profile (and optionally of a comparison).

The page embeds the data of ``html_model.page_model`` as JSON, the script ``report.js``
and the style ``report.css`` (both beside this module, written for graphc): it needs no
network. With a comparison (``summaries.compare.Report``), its entries are listed slower
first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphc.flags import config
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.render.base import Renderer
from graphc.profile.render.html_model import page_model
from graphc.profile.summaries.compare import VERDICTS, Report

_HERE = Path(__file__).resolve().parent

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>graphc profile</title>
<style>{css}</style></head>
<body><header><h1>graphc profile</h1><nav></nav></header><main></main>
<script id="profile-data" type="application/json">{data}</script>
<script>{js}</script>
</body></html>
"""


def compare_model(report: Report | dict[str, Any]) -> dict[str, Any]:
    """A comparison's JSON (``Report.to_json()``, as ``graphc-prof diff --json`` writes it)
    with its entries ordered worst verdict first, then by falling ratio."""
    doc = dict(report.to_json() if isinstance(report, Report) else report)
    rank = {v: i for i, v in enumerate(VERDICTS)}
    doc["entries"] = sorted(
        doc["entries"],
        key=lambda e: (rank.get(e["verdict"], len(rank)), -(e["ratio"] or 0.0), e["label"]),
    )
    return doc


def _script_json(doc: Any) -> str:
    """JSON safe inside a <script> element: every ``<`` (only ever inside strings) is
    escaped, so no ``</script>`` or ``<!--`` can end it."""
    return json.dumps(doc, separators=(",", ":")).replace("<", "\\u003c")


def to_html(
    stats: ProfileData | None,
    compare: Report | dict[str, Any] | None = None,
    all_calls: bool | None = None,
) -> str:
    """The page for ``stats`` (None: a comparison alone) and an optional comparison; times
    count every call, the first calls left out of the tables only when ``all_calls`` is
    false (None: ``profiling__all_calls``)."""
    if stats is None and compare is None:
        raise ValueError("to_html: give a profile, a comparison, or both")
    if all_calls is None:
        all_calls = config.profiling__all_calls
    if stats is not None:
        stats.refresh()
        model = page_model(stats, all_calls)
    else:
        model = {"title": "comparison", "functions": []}
    model["compare"] = None if compare is None else compare_model(compare)
    css = (_HERE / "report.css").read_text(encoding="utf-8")
    js = (_HERE / "report.js").read_text(encoding="utf-8")
    return _PAGE.format(css=css, js=js, data=_script_json(model))


def write_html(
    stats: ProfileData | None,
    path: str | Path,
    compare: Report | dict[str, Any] | None = None,
) -> str:
    """Write :func:`to_html` to ``path``; returns the text."""
    text = to_html(stats, compare)
    Path(path).write_text(text, encoding="utf-8")
    return text


class HtmlRenderer(Renderer):
    """The self-contained HTML report; ``compare``: a comparison shown with it (a report
    of ``summaries.compare`` or its JSON), and alone when the profile holds no function."""

    name = "html"
    extension = ".html"
    description = "self-contained HTML report (tables, graph, loops, memory, timeline)"

    def __init__(self, compare: Report | dict[str, Any] | None = None) -> None:
        self.compare = compare

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        alone = self.compare is not None and not stats.functions
        return to_html(None if alone else stats, self.compare, options.all_calls)
