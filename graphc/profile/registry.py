"""Where compiled functions hand their profiles to the profile package: the profiles to
print at exit and, for ``allocated()``, a memory probe per live profiled function.

The compile layer pushes into this registry; the profile package never imports compile.
"""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Callable
from typing import Any

from graphc.flags import config
from graphc.profile.data.options import SummaryOptions
from graphc.profile.exit import print_at_exit
from graphc.profile.stats import ProfileStats

MemoryProbe = Callable[[Any], tuple[int, int]]  # function -> (held bytes, peak bytes)


class ProfileRegistry:
    """Profiles printed when the process exits, and live functions' memory probes (held
    weakly: the registry never keeps a function alive)."""

    def __init__(self) -> None:
        self._at_exit: list[ProfileStats] = []
        self._live: weakref.WeakKeyDictionary[Any, MemoryProbe] = weakref.WeakKeyDictionary()
        self._hook_installed = False

    def register_at_exit(self, stats: ProfileStats) -> None:
        """Print ``stats`` with the others when the process exits."""
        if not any(s is stats for s in self._at_exit):
            self._at_exit.append(stats)
        if not self._hook_installed:
            self._hook_installed = True
            atexit.register(self.print_all)

    def registered(self) -> list[ProfileStats]:
        """The profiles registered for printing at exit, oldest first."""
        return list(self._at_exit)

    def print_all(self) -> None:
        """Print every registered profile to ``config.profiling__destination``, laid out
        by the flags (``SummaryOptions.at_exit``)."""
        if self._at_exit:
            print_at_exit(
                list(self._at_exit), config.profiling__destination, SummaryOptions.at_exit()
            )
            if config.profile_html:
                self.write_html(config.profile_html)

    def write_html(self, path: str) -> None:
        """Write the registered profiles, merged, as one HTML report (``profile_html``)."""
        try:
            ProfileStats.merge(self._at_exit).to_html(path)
        except Exception as exc:  # at exit: say why, never hide the printed profiles
            print(f"graphc: the HTML profile report could not be written: {exc!r}",
                  file=sys.stderr)  # fmt: skip
            return
        print(f"graphc: wrote the HTML profile report {path}", file=sys.stderr)

    def track(self, fn: Any, probe: MemoryProbe) -> None:
        """Count ``fn``'s storage in :meth:`allocated` while it is alive."""
        self._live[fn] = probe

    def allocated(self) -> tuple[int, int]:
        """``(current, peak)`` bytes held by live profiled functions. ``peak`` adds, for the
        function with the highest call peak, that peak to what the others hold (calls run
        one at a time)."""
        held: dict[int, int] = {}
        peaks: dict[int, int] = {}
        for i, (fn, probe) in enumerate(list(self._live.items())):
            held[i], peaks[i] = probe(fn)
        current = sum(held.values())
        peak = max((current - held[i] + max(peaks[i], held[i]) for i in held), default=0)
        return current, max(peak, current)


REGISTRY = ProfileRegistry()
