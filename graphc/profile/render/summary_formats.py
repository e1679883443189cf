"""The printed summaries and the JSON document as export formats: graphc's text summary,
the legacy ProfileMode text, and the profile JSON that ``graphc-prof show`` reads back."""

from __future__ import annotations

from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.render.base import Renderer
from graphc.profile.render.legacy import summary_text
from graphc.profile.render.text import render_summary


class TextRenderer(Renderer):
    """The text summary (``f.profile.summary()``, ``graphc-prof show``)."""

    name = "text"
    extension = ".txt"
    description = "the text summary (Theano's sections)"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return render_summary(stats, options)


class LegacyRenderer(Renderer):
    """The text of Theano's ``ProfileMode.print_summary()``."""

    name = "legacy"
    extension = ".txt"
    description = "the legacy ProfileMode.print_summary() text"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return summary_text(stats, options)


class JsonRenderer(Renderer):
    """The profile JSON (schema_version 1, docs/profile-schema.md), every call counted:
    the format ``graphc-prof show``, ``diff`` and the other commands read."""

    name = "json"
    extension = ".json"
    description = "the profile JSON (read back by show, diff, html, export)"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return stats.to_json()
