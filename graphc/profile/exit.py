"""Printing every profile when the process exits, then their sum."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

from graphc.profile.stats import ProfileStats


@contextmanager
def _open(destination: str) -> Iterator[TextIO]:
    if destination == "stdout":
        yield sys.stdout
    elif destination == "stderr":
        yield sys.stderr
    else:
        with open(destination, "a", encoding="utf-8") as fh:
            yield fh


def _label(stats: ProfileStats) -> str:
    return stats.name or ", ".join(f.name for f in stats.functions) or "<empty profile>"


def print_at_exit(
    stats_list: Sequence[ProfileStats], destination: str = "stderr", **summary_kwargs
) -> None:
    """Print each profile's summary, then ``Sum of all(N) printed profiles at exit``.

    ``destination`` is ``"stdout"``, ``"stderr"`` or a file path (appended to). A profile
    that fails to print gets a one-line error and is left out of the sum.
    """
    with _open(destination) as out:
        printed: list[ProfileStats] = []
        for stats in stats_list:
            try:
                stats.summary(file=out, **summary_kwargs)
            except Exception as exc:  # one broken profile must not hide the others
                out.write(f"graphc profile of {_label(stats)} could not be printed: {exc!r}\n")
                continue
            printed.append(stats)
        if len(printed) > 1:
            try:
                total = ProfileStats.merge(printed)
                total.name = f"Sum of all({len(printed)}) printed profiles at exit"
                total.summary(file=out, **summary_kwargs)
            except Exception as exc:
                out.write(f"graphc sum of printed profiles could not be printed: {exc!r}\n")
