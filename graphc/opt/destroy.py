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

The cycle check is incremental: the handler keeps an order key per node that is a
topological order of the graph it last accepted (data edges and orderings), and a
``validate`` looks only at the edges added since (inputs changed by a replacement, new
orderings). An edge that agrees with the keys needs nothing; one that does not is checked
and the keys around it repaired by a search bounded by the two keys (Pearce and Kelly's
dynamic topological order), so a candidate costs the size of the region it reorders, not
of the whole graph. Imported nodes get a key just after their latest input.
"""

from __future__ import annotations

import time
from collections import deque
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
        self._reset_order()

    def _reset_order(self) -> None:
        # ``_key[n]`` (unique tuples) is a topological order of the graph as last
        # validated, but for the data edges in ``_pending`` (inputs changed since) and the
        # orderings not in ``_accepted`` or touching a node in ``_fresh`` (imported since,
        # with a new key). Set up by the first validate with destroyers, kept from then on.
        self._ordered = False
        self._key: dict = {}
        self._seq = 0
        self._pending: list = []
        self._accepted: set = set()
        self._fresh: set = set()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if any(isinstance(f, DestroyHandler) for f in fgraph.features if f is not self):
            raise ValueError("a FunctionGraph can have only one DestroyHandler")
        self.destroyers = {n for n in fgraph.apply_nodes if n.op.destroy_map}
        self._reset_order()

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None:
        if node.op.destroy_map:
            self.destroyers.add(node)
        if self._ordered:
            # just after its latest input (its inputs are in the graph, so they have keys;
            # a larger sequence number than any in use keeps the keys unique)
            key = self._key
            first = max((key[i.owner][0] for i in node.inputs if i.owner is not None), default=-1)
            self._seq += 1
            key[node] = (first, self._seq)
            self._fresh.add(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None:
        self.destroyers.discard(node)
        self._key.pop(node, None)

    def on_change_input(
        self, fgraph: FunctionGraph, node, i: int, old: Variable, new: Variable, reason: str
    ) -> None:
        if self._ordered and node != OUTPUT and new.owner is not None:
            self._pending.append((new.owner, node))

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
            return  # no orderings: a FunctionGraph alone has no cycle
        t0 = time.perf_counter_ns()
        try:
            order = self._analyse(fgraph)
            if not self._ordered:
                # keys from the data edges alone; every ordering is then a new edge
                nodes = io_toposort(fgraph.inputs, fgraph.outputs)
                self._key = {n: (k, 0) for k, n in enumerate(nodes)}
                self._seq = 0
                self._pending = []
                self._accepted = set()
                self._fresh = set()
                self._ordered = True
            self._check_new_edges(fgraph, order)
        finally:
            self.validate_ns += time.perf_counter_ns() - t0

    def _check_new_edges(self, fgraph: FunctionGraph, order: dict) -> None:
        """Raise if an edge added since the last accepted graph closes a cycle; else
        repair the keys so they order the graph as it is now."""
        current = {(r, d) for d, rs in order.items() for r in rs}
        accepted, fresh = self._accepted, self._fresh
        edges = self._pending + [
            e for e in current if e not in accepted or e[0] in fresh or e[1] in fresh
        ]
        self._fresh = set()
        todo = set(edges)  # edges not yet part of the ordered graph: searches skip them
        after: dict = {}
        for d, rs in order.items():
            for r in rs:
                after.setdefault(r, []).append(d)
        key = self._key
        nodes = fgraph.apply_nodes
        for u, v in edges:  # u must run before v
            if (
                u in nodes
                and v in nodes
                and not key[u] < key[v]
                # (else the edge was removed again)
                and ((u, v) in current or any(i.owner is u for i in v.inputs))
            ):
                try:
                    self._reorder(fgraph, u, v, order, after, todo)
                except InconsistencyError:
                    # the edges not ordered yet, this one included, stay to be checked
                    self._pending = [e for e in edges if e in todo]
                    self._accepted = current - todo
                    raise
            todo.discard((u, v))
        self._pending = []
        self._accepted = current

    def _reorder(self, fgraph, u, v, order: dict, after: dict, todo: set) -> None:
        """Add the edge u -> v (``key[u] > key[v]``) to the ordered graph: raise if v
        already reaches u, else move u's ancestors keyed after v before v's descendants
        keyed before u (Pearce and Kelly)."""
        key = self._key
        ku, kv = key[u], key[v]
        back = {u}  # ancestors of u keyed after v: v among them means a cycle
        queue = deque([u])
        while queue:
            x = queue.popleft()
            preds = [i.owner for i in x.inputs if i.owner is not None]
            preds.extend(order.get(x, ()))
            for p in preds:
                if p in back or key[p] < kv or (p, x) in todo:
                    continue
                if p is v:
                    raise InconsistencyError(
                        f"a destroyed value would be read after its destroyer ({u} must "
                        f"run before {v} but depends on it)"
                    )
                back.add(p)
                queue.append(p)
        fwd = {v}  # descendants of v keyed before u
        stack = [v]
        clients = fgraph.clients
        while stack:
            x = stack.pop()
            succs = [c for o in x.outputs for c, _ in clients.get(o, ()) if c != OUTPUT]
            succs.extend(after.get(x, ()))
            for c in succs:
                if c in fwd or key[c] > ku or (x, c) in todo:
                    continue
                fwd.add(c)
                stack.append(c)
        moved = sorted(back, key=key.__getitem__) + sorted(fwd, key=key.__getitem__)
        for n, k in zip(moved, sorted(key[n] for n in moved)):
            key[n] = k

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
