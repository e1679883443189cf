"""SummaryOptions: what a printed profile shows, decided once and handed to a renderer.

The public spellings (``ProfileStats.summary(n_apply_to_print=...)``,
``ProfileMode.print_summary(...)``, the flags ``profiling__n_apply``...) all build one of these;
the renderers read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphc.flags import config


@dataclass(frozen=True)
class SummaryOptions:
    """How much of a profile to print.

    ``n_apply``: rows of the Apply tables (and of the memory section's largest outputs);
    ``n_ops``: rows of the Class, Op and source-line tables; ``min_memory_size``: outputs
    (and constants) smaller than this many bytes are summed, not listed; ``memory`` and
    ``optimizer``: show those sections (None: when they were recorded); ``all_calls``: count
    each function's first call in every table, as Theano did (False: leave it out of the
    Class, Ops and Apply tables; it is reported on its own line either way); ``width``: no
    line wider (None: the terminal's width when the text is laid out).
    """

    n_apply: int
    n_ops: int
    min_memory_size: int = 1024
    memory: bool | None = None
    optimizer: bool | None = None
    all_calls: bool = True
    width: int | None = None

    @classmethod
    def from_config(
        cls,
        n_apply_to_print: int | None = None,
        n_ops_to_print: int | None = None,
        min_memory_size: int = 1024,
        memory: bool | None = None,
        optimizer: bool | None = None,
        all_calls: bool | None = None,
        width: int | None = None,
    ) -> SummaryOptions:
        """The options a summary call spells out, the flags for those left None: row counts
        ``profiling__n_apply`` and ``profiling__n_ops``, ``all_calls``
        ``profiling__all_calls``."""
        return cls(
            n_apply=config.profiling__n_apply if n_apply_to_print is None else n_apply_to_print,
            n_ops=config.profiling__n_ops if n_ops_to_print is None else n_ops_to_print,
            min_memory_size=min_memory_size,
            memory=memory,
            optimizer=optimizer,
            all_calls=config.profiling__all_calls if all_calls is None else all_calls,
            width=width,
        )

    @classmethod
    def at_exit(cls) -> SummaryOptions:
        """The options of the profiles printed when the process exits: every field from the
        flags (``profiling__min_memory_size``; the memory and optimizer sections when
        ``profile_memory`` / ``profile_optimizer`` are on, else when recorded)."""
        return cls.from_config(
            min_memory_size=config.profiling__min_memory_size,
            memory=config.profile_memory or None,
            optimizer=config.profile_optimizer or None,
        )
