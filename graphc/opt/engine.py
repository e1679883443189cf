"""The rewrite engine: registered rewrites, passes and the traversal driver.

A node rewrite is ``fn(fgraph, node) -> None | list | dict``: None when it does not apply,
else the replacements for the node's outputs (a list, one per output, None to keep one) or a
``{old: new}`` dict. It declares the Op classes (or, for Elemwise, scalar Op classes) it
``tracks`` so the driver only calls it on candidate nodes. A global rewrite is
``fn(fgraph, ctx)`` and replaces through ``ctx.replace``. Every replacement goes through
``fgraph.replace_all_validate``.
"""

from __future__ import annotations

import importlib
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphc.flags import config
from graphc.graph.fg import InconsistencyError
from graphc.opt.pipeline import PIPELINE
from graphc.tensor.elemwise import Elemwise

if TYPE_CHECKING:
    from typing import Any

    from graphc.graph.basic import Apply, Op
    from graphc.graph.fg import FunctionGraph


class RewriteWarning(UserWarning):
    """A rewrite raised an unexpected error; the graph was left as it was."""


@dataclass(eq=False)
class Rewrite:
    """A named rewrite with the tags that select it."""

    name: str
    fn: Callable
    tracks: tuple = ()
    tags: frozenset = frozenset()
    is_global: bool = False

    def matches(self, node: Apply) -> bool:
        if not self.tracks:
            return True
        op = node.op
        scalar = getattr(op, "scalar_op", None) if _is_elemwise(op) else None
        return any(isinstance(op, t) or (scalar is not None and isinstance(scalar, t))
                   for t in self.tracks)  # fmt: skip


def _is_elemwise(op: Op) -> bool:
    return isinstance(op, Elemwise)


@dataclass(eq=False)
class Pass:
    """An ordered phase: ``equilibrium`` repeats traversals until nothing changes (bounded),
    ``once`` traverses once; global rewrites run once per traversal."""

    name: str
    kind: str = "equilibrium"
    max_iterations: int = 30
    reverse: bool = False
    rewrites: list[Rewrite] = field(default_factory=list)


def _declared_passes() -> dict[str, Pass]:
    """One Pass per PIPELINE entry; a pass declared twice is an error, not a silent choice."""
    out: dict[str, Pass] = {}
    for spec in PIPELINE:
        if spec.name in out:
            raise ValueError(f"pass {spec.name!r} is declared twice in graphc/opt/pipeline.py")
        out[spec.name] = Pass(spec.name, spec.kind, reverse=spec.reverse)
    return out


PASSES: dict[str, Pass] = _declared_passes()
REWRITES: dict[str, Rewrite] = {}


def load_rule_modules() -> None:
    """Import the rule modules of this package that PIPELINE declares (``opt.*``), which
    register their rewrites: the pass table is complete after this call. Modules of later
    layers (``scan_module.rewrites``) register when their package is imported, as a graph
    holding their Ops needs it anyway."""
    for spec in PIPELINE:
        for mod in spec.modules:
            if mod.startswith("opt."):
                importlib.import_module(f"graphc.{mod}")


def register(passes, *tags: str, tracks=(), name: str | None = None, is_global: bool = False):
    """Decorator: register ``fn`` as a rewrite in ``passes`` (a name or several) with ``tags``
    (the rewrite's own name and the pass names are tags too)."""
    pass_names = (passes,) if isinstance(passes, str) else tuple(passes)
    for p in pass_names:
        if p not in PASSES:
            raise ValueError(f"no pass {p!r} in the pipeline (graphc/opt/pipeline.py)")

    def deco(fn: Callable[..., Any]):
        rname = name or fn.__name__
        new = Rewrite(rname, fn, tuple(tracks), frozenset((rname, *tags)), is_global)
        rw = REWRITES.get(rname)
        if rw is None:
            rw = REWRITES[rname] = new
        elif (rw.fn, rw.tracks, rw.tags, rw.is_global) != (fn, new.tracks, new.tags, is_global):
            raise ValueError(
                f"rewrite {rname!r} is already defined (in {rw.fn.__module__}) differently; "
                "give the new one another name"
            )
        for p in pass_names:
            PASSES[p].rewrites.append(rw)
        return fn

    return deco


def all_tags() -> set[str]:
    tags: set[str] = set()
    for rw in REWRITES.values():
        tags |= rw.tags
    return tags


class Context:
    """Per-run state: statistics for the report and the replacement helper."""

    def __init__(self, report):
        self.report = report
        self.stats: dict[str, list] = {}  # name -> [tried, applied, ns]
        self.verbose = bool(config.optimizer_verbose)
        self.current: Rewrite | None = None  # the global rewrite running

    def stat(self, rw: Rewrite) -> list:
        st = self.stats.get(rw.name)
        if st is None:
            st = self.stats[rw.name] = [0, 0, 0]
        return st

    def replace(self, fgraph: FunctionGraph, pairs, rw: Rewrite) -> bool:
        """Replace and validate; False (graph unchanged) if the change is rejected."""
        pairs = [(o, n) for o, n in pairs if n is not None and o is not n and o in fgraph.variables]
        if not pairs:
            return False
        try:
            fgraph.replace_all_validate(pairs, reason=rw.name)
        except (InconsistencyError, TypeError):
            return False
        for old, new in pairs:
            if new.name is None and old.name is not None and new.owner is not None:
                new.name = old.name
            if self.verbose:
                print(f"rewrite {rw.name}: {old} -> {new}")
        self.stat(rw)[1] += 1
        self.report.applied.append(rw.name)
        return True


def _call(rw: Rewrite, *args: Any):
    try:
        return rw.fn(*args)
    except (InconsistencyError, NotImplementedError):
        return None
    except Exception as e:  # noqa: BLE001 - a failing rewrite must not break compilation
        warnings.warn(f"rewrite {rw.name} failed on {args[1]}: {type(e).__name__}: {e}",
                      RewriteWarning, stacklevel=2)  # fmt: skip
        return None


def _apply_node_rewrite(fgraph: FunctionGraph, node: Apply, rw: Rewrite, ctx: Context) -> bool:
    st = ctx.stat(rw)
    st[0] += 1
    t0 = time.perf_counter_ns()
    out = _call(rw, fgraph, node)
    changed = False
    if out:
        pairs = list(out.items()) if isinstance(out, dict) else list(zip(node.outputs, out))
        changed = ctx.replace(fgraph, pairs, rw)
    st[2] += time.perf_counter_ns() - t0
    return changed


def run_pass(fgraph: FunctionGraph, p: Pass, rewrites: list[Rewrite], ctx: Context) -> None:
    """Run the enabled ``rewrites`` of pass ``p`` over ``fgraph``."""
    local = [r for r in rewrites if not r.is_global]
    glob = [r for r in rewrites if r.is_global]
    iterations = 1 if p.kind == "once" else p.max_iterations
    for _ in range(iterations):
        changed = False
        for rw in glob:
            st = ctx.stat(rw)
            st[0] += 1
            t0 = time.perf_counter_ns()
            applied_before = st[1]
            ctx.current = rw
            _call(rw, fgraph, ctx)
            st[2] += time.perf_counter_ns() - t0
            changed = changed or st[1] > applied_before
        if local:
            cache: dict[tuple, list[Rewrite]] = {}
            order = fgraph.toposort()
            if p.reverse:
                order.reverse()
            for node in order:
                key = (type(node.op), type(getattr(node.op, "scalar_op", None)))
                cands = cache.get(key)
                if cands is None:
                    cands = cache[key] = [r for r in local if r.matches(node)]
                for rw in cands:
                    if node not in fgraph.apply_nodes:
                        break
                    if _apply_node_rewrite(fgraph, node, rw, ctx):
                        changed = True
                        break
        if not changed:
            break
