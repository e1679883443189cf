"""The one rule deciding whether a compiled function is profiled, shared by the function
maker and the profiler hookup (so neither imports the other for it)."""

from __future__ import annotations

from typing import Any

from graphc.flags import config


def profiling_requested(profile: Any, mode: Any) -> bool:
    """True when ``profile`` (None: unset, False, True or a ProfileStats) or ``mode``
    (a profiling mode, or ``config.profile``) asks for a profile."""
    if getattr(mode, "profile_stats", None) is not None:
        return True
    if profile is None:
        return bool(config.profile or getattr(mode, "profile", False))
    return profile is not False
