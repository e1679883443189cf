"""Optimizers as ordered pass lists, tag selection, and the ``rewrite_graph`` entry point."""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

from graphc.opt.destroy import get_destroy_handler
from graphc.opt.engine import PASSES, REWRITES, Context, all_tags, load_rule_modules, run_pass
from graphc.opt.optimizers import OPTIMIZER_TAGS, check_optimizer
from graphc.opt.report import RewriteReport

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphc.graph.fg import FunctionGraph

# the rule modules PIPELINE declares register their rewrites: the tables below are complete
load_rule_modules()

_warned: set[str] = set()


def _warn_once(msg: str, key: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, UserWarning, stacklevel=4)


def enabled_rewrites(
    optimizer: str,
    including: Sequence[str] = (),
    excluding: Sequence[str] = (),
    requiring: Sequence[str] = (),
) -> set[str]:
    """Names of the rewrites ``optimizer`` runs with the given tag flags."""
    opt = check_optimizer(optimizer)
    known = all_tags()
    for tag in requiring:
        if tag not in known:
            raise ValueError(f"required rewrite tag {tag!r} does not exist")
        if tag in excluding:
            raise ValueError(f"rewrite tag {tag!r} is both required and excluded")
    for tag in (*including, *excluding):
        if tag not in known:
            _warn_once(f"optimizer flag {tag!r} matches no rewrite; it has no effect", tag)
    on = OPTIMIZER_TAGS[opt] | set(including) | set(requiring)
    off = set(excluding)
    return {
        name for name, rw in REWRITES.items() if rw.tags & on and not rw.tags & off
    }  # fmt: skip


def rewrite_graph(
    fgraph: FunctionGraph,
    optimizer: str = "fast_run",
    including: Sequence[str] = (),
    excluding: Sequence[str] = (),
    requiring: Sequence[str] = (),
):
    """Rewrite ``fgraph`` in place with the named optimizer; returns a RewriteReport."""
    report = RewriteReport()
    enabled = enabled_rewrites(optimizer, including, excluding, requiring)
    dh = get_destroy_handler(fgraph)
    validate0 = dh.validate_ns
    ctx = Context(report)
    if enabled:
        for p in PASSES.values():
            rws = [r for r in p.rewrites if r.name in enabled]
            if not rws:
                continue
            t0 = time.perf_counter_ns()
            run_pass(fgraph, p, rws, ctx)
            report.passes.append((p.name, time.perf_counter_ns() - t0))
    report.rewrites = [(name, *st) for name, st in ctx.stats.items()]
    report.validate_ns = dh.validate_ns - validate0
    return report
