"""Graph rewrites: the engine (engine.py), the DestroyHandler (destroy.py), the rewrite
groups (merge, canonicalize, stabilize, specialize, blas, fusion, inplace) and the
optimizers' pass lists (passes.py)."""

from __future__ import annotations

from graphc.opt.report import RewriteReport


def rewrite_graph(fgraph, optimizer="fast_run", including=(), excluding=(), requiring=()):
    """Rewrite ``fgraph`` in place with the named optimizer; returns a RewriteReport."""
    from graphc.opt.passes import rewrite_graph as run

    return run(fgraph, optimizer, including, excluding, requiring)


__all__ = ["RewriteReport", "rewrite_graph"]
