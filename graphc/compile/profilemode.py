"""The legacy ``ProfileMode`` interface: a Mode that profiles every function compiled with
it and prints Theano's old summary layout. New code should use ``profile=True``."""

from __future__ import annotations

import sys
import warnings
from typing import TextIO

from graphc.compile.mode import Mode, ModeProvider
from graphc.flags import config
from graphc.profile.data.options import SummaryOptions
from graphc.profile.render.legacy import diff_text, summary_text
from graphc.profile.stats import ProfileStats

_LINKER_ALIASES = {"c|py": "c|py", "py": "py", "PerformLinker": "py", "OpWiseCLinker": "c|py",
                   "CLinker": "c|py", "VM_Linker": "cvm"}  # fmt: skip
_warned = False


class ProfileMode(ModeProvider):
    """``ProfileMode(optimizer="fast_run", linker="c|py")``: pass it as ``mode=`` to
    ``graphc.function``; then ``print_summary()`` / ``print_diff_summary(other)``."""

    def __init__(self, optimizer: str | None = "fast_run", linker: str = "c|py"):
        global _warned
        if not _warned:
            _warned = True
            warnings.warn(
                "ProfileMode is the legacy profiling interface; use graphc.function(..., "
                "profile=True) or the flag profile=True instead",
                DeprecationWarning,
                stacklevel=2,
            )
        name = getattr(linker, "name", None) or getattr(type(linker), "__name__", None)
        linker_name = linker if isinstance(linker, str) else _LINKER_ALIASES.get(name, name)
        self.mode = Mode(linker=linker_name, optimizer=optimizer, name="ProfileMode")
        self.stats = ProfileStats()
        self.n_apply_to_print = config.ProfileMode__n_apply_to_print
        self.n_ops_to_print = config.ProfileMode__n_ops_to_print

    def as_mode(self) -> Mode:
        """The Mode functions are compiled with."""
        return self.mode

    def profile_target(self) -> ProfileStats:
        """Every function compiled with this ProfileMode adds to ``self.stats``."""
        return self.stats

    def summary_options(
        self, n_apply_to_print: int | None = None, n_ops_to_print: int | None = None
    ) -> SummaryOptions:
        """The row counts asked for, this ProfileMode's (the ``ProfileMode__*`` flags) for
        those left None."""
        return SummaryOptions(
            n_apply=self.n_apply_to_print if n_apply_to_print is None else n_apply_to_print,
            n_ops=self.n_ops_to_print if n_ops_to_print is None else n_ops_to_print,
        )

    def print_summary(
        self,
        n_apply_to_print: int | None = None,
        n_ops_to_print: int | None = None,
        file: TextIO | None = None,
    ) -> None:
        """Theano's ProfileMode summary of every function compiled with this mode."""
        options = self.summary_options(n_apply_to_print, n_ops_to_print)
        (file or sys.stdout).write(self.stats.output(summary_text, options))

    def print_diff_summary(
        self,
        other: ProfileMode,
        n_apply_to_print: int | None = None,
        n_ops_to_print: int | None = None,
        file: TextIO | None = None,
    ) -> None:
        """Differences between this ProfileMode's functions and ``other``'s."""
        self.stats.refresh()
        other.stats.refresh()
        options = self.summary_options(n_apply_to_print, n_ops_to_print)
        (file or sys.stdout).write(diff_text(self.stats, other.stats, options))
