"""Graph rewrites: the engine (engine.py), the DestroyHandler (destroy.py), the rewrite
groups (merge, canonicalize, stabilize, specialize, blas, fusion, inplace) and the
optimizers' pass lists (passes.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphc.opt.report import RewriteReport

if TYPE_CHECKING:
    from graphc.opt.passes import rewrite_graph


def __getattr__(name: str) -> Any:
    """``rewrite_graph`` (``passes.rewrite_graph``) imports every rewrite module, so it is
    loaded on first use: ``import graphc`` stays light until something is compiled."""
    if name == "rewrite_graph":
        from graphc.opt.passes import rewrite_graph

        return rewrite_graph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RewriteReport", "rewrite_graph"]
