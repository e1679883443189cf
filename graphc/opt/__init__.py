"""Graph rewrites: the engine (engine.py), the DestroyHandler (destroy.py), the rewrite
groups (merge, canonicalize, stabilize, specialize, blas, fusion, inplace) and the
optimizers' pass lists (passes.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RewriteReport:
    """What a rewrite run did: time per pass and per rewrite, and validate time."""

    passes: list = field(default_factory=list)  # (name, ns)
    rewrites: list = field(default_factory=list)  # (name, tried, applied, ns)
    validate_ns: int = 0
    applied: list[str] = field(default_factory=list)


def rewrite_graph(fgraph, optimizer="fast_run", including=(), excluding=(), requiring=()):
    """Rewrite ``fgraph`` in place with the named optimizer; returns a RewriteReport."""
    from graphc.opt.passes import rewrite_graph as run

    return run(fgraph, optimizer, including, excluding, requiring)
