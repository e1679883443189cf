"""The optimizer names and the rewrite tags each enables: the one place they are checked
(a Mode on construction, ``rewrite_graph`` on use). Imports nothing, so a Mode can check
its optimizer without loading the rewrites."""

from __future__ import annotations

# Which rewrite tags each optimizer enables by default.
OPTIMIZER_TAGS = {
    "None": frozenset(),
    "merge": frozenset({"merge"}),
    "fast_compile": frozenset({"fast_compile"}),
    "fast_run": frozenset({"fast_run"}),
}


def check_optimizer(optimizer: object, source: str = "") -> str:
    """``optimizer`` as the passes name it (None -> ``"None"``), or a ValueError naming it
    (and ``source``, e.g. the flag it came from)."""
    opt = "None" if optimizer is None else str(optimizer)
    if opt not in OPTIMIZER_TAGS:
        raise ValueError(
            f"unknown optimizer {opt!r}{source}; expected one of {', '.join(OPTIMIZER_TAGS)}"
        )
    return opt
