"""DestroyHandler: the FunctionGraph feature that makes in-place Ops safe.

An Op with a ``destroy_map`` overwrites one of its inputs. A variable's *root* is found by
following ``view_map`` back (the output of a destroyer is a new root: it owns the buffer
from then on). The handler rejects, in ``validate``, any graph where

- a root is destroyed by more than one node,
- the destroyed root is a graph input (explicit, protected or a shared variable, updated or
  not: a failing call must leave every shared value as it was) or a constant; only the
  explicit inputs given as ``In(x, mutable=True)`` (the handler's ``mutable``) may be
  destroyed,
- the root or a view of it is a graph output (the caller would see the clobbered value),
- some other reader of the root or of a view of it cannot run before the destroyer (it
  depends on the destroyer's result: the orderings would form a cycle).

``orderings`` makes each destroyer run after every other reader of what it destroys.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from graphc.graph.basic import Constant, io_toposort
from graphc.graph.fg import OUTPUT, Feature, InconsistencyError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from graphc.graph.basic import Apply, Variable
    from graphc.graph.fg import FunctionGraph


class DestroyHandler(Feature):
    """Tracks destroyers; vetoes unsafe changes; orders destroyers after other readers."""

    def __init__(self, mutable: Iterable[Variable] = ()) -> None:
        self.destroyers: set = set()
        self.validate_ns = 0
        self.mutable = frozenset(mutable)  # graph inputs the function may overwrite

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if any(isinstance(f, DestroyHandler) for f in fgraph.features if f is not self):
            raise ValueError("a FunctionGraph can have only one DestroyHandler")
        self.destroyers = {n for n in fgraph.apply_nodes if n.op.destroy_map}

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None:
        if node.op.destroy_map:
            self.destroyers.add(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None:
        self.destroyers.discard(node)

    # ------------------------------------------------------------------ analysis
    @staticmethod
    def root(var):
        """The variable whose buffer ``var`` views (itself when it is not a view)."""
        while var.owner is not None:
            vm = var.owner.op.view_map.get(var.index)
            if not vm:
                break
            var = var.owner.inputs[vm[0]]
        return var

    @staticmethod
    def aliases(fgraph: FunctionGraph, root) -> list:
        """``root`` and every view of it (transitively) in ``fgraph``."""
        out, seen, stack = [], {root}, [root]
        while stack:
            v = stack.pop()
            out.append(v)
            for node, i in fgraph.clients.get(v, ()):
                if node == OUTPUT:
                    continue
                for o, ins in node.op.view_map.items():
                    if i in ins and node.outputs[o] not in seen:
                        seen.add(node.outputs[o])
                        stack.append(node.outputs[o])
        return out

    def _analyse(self, fgraph: FunctionGraph) -> dict:
        """{destroyer: [readers that must run before it]}; raises InconsistencyError."""
        protected = set(fgraph.inputs) - self.mutable
        destroyed_roots: dict = {}
        order: dict = {}
        for node in list(self.destroyers):
            for _o, ins in node.op.destroy_map.items():
                for i in ins:
                    var = node.inputs[i]
                    root = self.root(var)
                    free = root.owner is None and root not in self.mutable
                    if isinstance(root, Constant) or root in protected or free:
                        raise InconsistencyError(
                            f"{node} would destroy {root}, a graph input or constant"
                        )
                    if destroyed_roots.setdefault(root, node) is not node:
                        raise InconsistencyError(f"{root} is destroyed by two nodes")
                    readers = []
                    for alias in self.aliases(fgraph, root):
                        for client, _ in fgraph.clients.get(alias, ()):
                            if client == OUTPUT:
                                raise InconsistencyError(
                                    f"{node} would destroy {alias}, which is a graph output"
                                )
                            if client is not node and client not in readers:
                                readers.append(client)
                    order.setdefault(node, []).extend(readers)
        return order

    def validate(self, fgraph: FunctionGraph) -> None:
        if not self.destroyers:
            return
        t0 = time.perf_counter_ns()
        try:
            order = self._analyse(fgraph)
            try:
                io_toposort(fgraph.inputs, fgraph.outputs, order)
            except ValueError as e:
                raise InconsistencyError(
                    f"a destroyed value would be read after its destroyer ({e})"
                ) from None
        finally:
            self.validate_ns += time.perf_counter_ns() - t0

    def orderings(self, fgraph: FunctionGraph) -> dict:
        if not self.destroyers:
            return {}
        return self._analyse(fgraph)


def get_destroy_handler(fgraph: FunctionGraph) -> DestroyHandler:
    """The fgraph's DestroyHandler, attached on first use."""
    for f in fgraph.features:
        if isinstance(f, DestroyHandler):
            return f
    dh = DestroyHandler()
    fgraph.attach_feature(dh)
    return dh
