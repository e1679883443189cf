"""The record of one rewrite run (kept apart so passes.py need not import its package)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RewriteReport:
    """What a rewrite run did: time per pass and per rewrite, and validate time."""

    passes: list = field(default_factory=list)  # (name, ns)
    rewrites: list = field(default_factory=list)  # (name, tried, applied, ns)
    validate_ns: int = 0
    applied: list[str] = field(default_factory=list)
