"""Printing every profile when the process exits, then their sum."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.render.text import render_summary


@contextmanager
def _open(destination: str) -> Iterator[TextIO]:
    if destination == "stdout":
        yield sys.stdout
    elif destination == "stderr":
        yield sys.stderr
    else:
        with open(destination, "a", encoding="utf-8") as fh:
            yield fh


def _label(stats: ProfileData) -> str:
    return stats.name or ", ".join(f.name for f in stats.functions) or "<empty profile>"


def print_at_exit(
    stats_list: Sequence[ProfileData],
    destination: str = "stderr",
    options: SummaryOptions | None = None,
    **summary_kwargs: Any,
) -> None:
    """Print each profile's summary, then ``Sum of all(N) printed profiles at exit``.

    ``destination`` is ``"stdout"``, ``"stderr"`` or a file path (appended to). The layout is
    ``options``, or else built from ``summary_kwargs`` as ``ProfileStats.summary`` builds it.
    A profile that fails to print gets a one-line error and is left out of the sum.
    """
    if options is None:
        options = SummaryOptions.from_config(**summary_kwargs)
    elif summary_kwargs:
        raise TypeError("print_at_exit: give options or summary keywords, not both")
    with _open(destination) as out:
        printed: list[ProfileData] = []
        for stats in stats_list:
            try:
                out.write(stats.output(render_summary, options))
            except Exception as exc:  # one broken profile must not hide the others
                out.write(f"graphc profile of {_label(stats)} could not be printed: {exc!r}\n")
                continue
            printed.append(stats)
        if len(printed) > 1:
            try:
                total = ProfileData.merge(
                    printed, f"Sum of all({len(printed)}) printed profiles at exit"
                )
                out.write(total.output(render_summary, options))
            except Exception as exc:
                out.write(f"graphc sum of printed profiles could not be printed: {exc!r}\n")
