"""Graph rewrites: the engine (engine.py), the DestroyHandler (destroy.py), the rewrite
groups (merge, canonicalize, stabilize, specialize, blas, fusion, inplace) and the
optimizers' pass lists (passes.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.opt.report import RewriteReport

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphc.graph.fg import FunctionGraph


def rewrite_graph(
    fgraph: FunctionGraph,
    optimizer: str = "fast_run",
    including: Sequence[str] = (),
    excluding: Sequence[str] = (),
    requiring: Sequence[str] = (),
):
    """Rewrite ``fgraph`` in place with the named optimizer; returns a RewriteReport."""
    from graphc.opt.passes import rewrite_graph as run

    return run(fgraph, optimizer, including, excluding, requiring)


__all__ = ["RewriteReport", "rewrite_graph"]
