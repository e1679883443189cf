"""FunctionGraph: a mutable graph between given inputs and outputs.

Rewrites change it only through ``replace``; attached features observe every change
(``on_attach``, ``on_import``, ``on_prune``, ``on_change_input``) and may veto it in
``validate`` (the destroy handler does) or add ordering constraints (``orderings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from graphc.graph.basic import Apply, Constant, Variable, clone_get_equiv, io_toposort


class InconsistencyError(Exception):
    """A change would make the graph invalid (e.g. a destroyed value read later)."""


class Feature:
    """Base class for FunctionGraph observers; every hook is optional."""

    def on_attach(self, fgraph: FunctionGraph) -> None: ...

    def on_detach(self, fgraph: FunctionGraph) -> None: ...

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None: ...

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str) -> None: ...

    def on_change_input(
        self, fgraph: FunctionGraph, node: Any, i: int, old: Variable, new: Variable, reason: str
    ) -> None: ...

    def validate(self, fgraph: FunctionGraph) -> None: ...

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        return {}


OUTPUT = "output"  # client marker for graph outputs: (OUTPUT, position)


class FunctionGraph:
    """The graph a function is compiled from; owns its Apply nodes and their clients."""

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        features: Sequence[Feature] = (),
        clone: bool = True,
    ) -> None:
        if clone:
            equiv = clone_get_equiv(inputs, outputs)
            inputs = [equiv[v] for v in inputs]
            outputs = [equiv[v] for v in outputs]
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = list(outputs)
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        # per variable, its (node, input position) readers in the order they came; a dict
        # used as an ordered set, so a reader is dropped in O(1)
        self.clients: dict[Variable, dict[tuple[Any, int], None]] = {}
        self.features: list[Feature] = []
        self.profile: dict[str, Any] = {}
        for v in inputs:
            if v.owner is not None:
                raise ValueError(f"graph input {v} has an owner ({v.owner}); inputs must be free")
            self.add_input(v)
        for i, out in enumerate(self.outputs):
            self._import_var(out, reason="init")
            self.clients[out][(OUTPUT, i)] = None
        for f in features:
            self.attach_feature(f)

    # ------------------------------------------------------------------ structure
    def add_input(self, var: Variable) -> None:
        if var in self.variables:
            return
        self.inputs.append(var)
        self.variables.add(var)
        self.clients.setdefault(var, {})

    def _import_var(self, var: Variable, reason: str) -> None:
        if var in self.variables:
            return
        if var.owner is None:
            if not isinstance(var, Constant) and var not in self.inputs:
                raise MissingInputError(
                    f"{var} (of type {var.type}) is needed to compute the outputs but is not "
                    "an input of the function"
                )
            self.variables.add(var)
            self.clients.setdefault(var, {})
            return
        self._import_node(var.owner, reason)

    def _new_nodes_up_to(self, node: Apply) -> list[Apply]:
        """Nodes not yet in the graph that ``node`` needs, in topological order."""
        order: list[Apply] = []
        seen: set[Apply] = set()
        stack: list[tuple[Apply, bool]] = [(node, False)]
        while stack:
            n, expanded = stack.pop()
            if expanded:
                order.append(n)
                continue
            if n in seen or n in self.apply_nodes:
                continue
            seen.add(n)
            stack.append((n, True))
            for inp in reversed(n.inputs):
                if inp.owner is not None and inp not in self.variables:
                    stack.append((inp.owner, False))
        return order

    def _import_node(self, node: Apply, reason: str) -> None:
        for new in self._new_nodes_up_to(node):
            for inp in new.inputs:
                if inp not in self.variables:
                    self._import_var(inp, reason)
            self.apply_nodes.add(new)
            for out in new.outputs:
                self.variables.add(out)
                self.clients.setdefault(out, {})
            for i, inp in enumerate(new.inputs):
                self.clients[inp][(new, i)] = None
            self._notify("on_import", new, reason)

    def _prune(self, var: Variable, reason: str) -> None:
        """Remove ``var``'s producer (recursively) if nothing uses it any more."""
        stack = [var]
        while stack:
            v = stack.pop()
            node = v.owner
            if node is None or node not in self.apply_nodes:
                if v.owner is None and not self.clients.get(v) and isinstance(v, Constant):
                    self.variables.discard(v)
                    self.clients.pop(v, None)
                continue
            if any(self.clients.get(o) for o in node.outputs):
                continue
            self.apply_nodes.discard(node)
            for o in node.outputs:
                self.variables.discard(o)
                self.clients.pop(o, None)
            self._notify("on_prune", node, reason)
            for i, inp in enumerate(node.inputs):
                cl = self.clients.get(inp)
                if cl is not None:
                    del cl[(node, i)]
                    stack.append(inp)

    def change_input(self, node: Any, i: int, new: Variable, reason: str = "") -> None:
        """Make input ``i`` of ``node`` (or graph output ``i`` when node is OUTPUT) ``new``."""
        if node == OUTPUT:
            old = self.outputs[i]
            if old is new:
                return
            self._check_type(old, new, reason)
            self.outputs[i] = new
        else:
            old = node.inputs[i]
            if old is new:
                return
            self._check_type(old, new, reason)
            node.inputs[i] = new
        self._import_var(new, reason)
        self.clients[new][(node, i)] = None
        del self.clients[old][(node, i)]
        self._notify("on_change_input", node, i, old, new, reason)
        self._prune(old, reason)

    @staticmethod
    def _check_type(old: Variable, new: Variable, reason: str) -> None:
        if old.type != new.type and old.type.convert_variable(new) is None:
            raise TypeError(
                f"cannot replace {old} of type {old.type} by {new} of type {new.type}"
                + (f" (rewrite {reason})" if reason else "")
            )

    def replace(
        self, var: Variable, new: Variable, reason: str = "", verbose: bool = False
    ) -> None:
        """Redirect every client of ``var`` to ``new``."""
        if var not in self.variables:
            return
        self._check_type(var, new, reason)
        if var.owner is not None and new.owner is not None and not new.owner.origins:
            self._inherit_origins(new.owner, self._replaced_origins(var.owner, new.owner))
        if verbose:
            print(f"rewrite {reason}: {var} -> {new}")
        for node, i in list(self.clients[var]):
            self.change_input(node, i, new, reason)

    def _replaced_origins(self, old: Apply, new: Apply) -> tuple[str, ...]:
        """The lines of ``old`` and of the nodes only it reads that ``new``'s subgraph no
        longer reads (a rewrite absorbed them: the product of a Gemm)."""
        reads = {i for n in self._new_nodes_up_to(new) for i in n.inputs}
        absorbed, stack = [old], [old]
        while stack:
            for inp in stack.pop().inputs:
                p = inp.owner
                if p is None or p in absorbed or inp in reads or p not in self.apply_nodes:
                    continue
                users = [c for out in p.outputs for c, _ in self.clients.get(out, {})]
                if all(u in absorbed for u in users):
                    absorbed.append(p)
                    stack.append(p)
        return tuple(dict.fromkeys(o for n in absorbed for o in n.origins))

    def _inherit_origins(self, node: Apply, origins: tuple[str, ...]) -> None:
        """New nodes a rewrite built (no origins of their own) take the replaced node's."""
        for new in self._new_nodes_up_to(node):
            if not new.origins:
                new.origins = origins

    def replace_all(self, pairs: Sequence[tuple[Variable, Variable]], reason: str = "") -> None:
        for var, new in pairs:
            self.replace(var, new, reason)

    def replace_all_validate(
        self, pairs: Sequence[tuple[Variable, Variable]], reason: str = ""
    ) -> None:
        """Replace, then validate; on a failed validation undo every change and re-raise."""
        history = self.checkpoint()
        try:
            self.replace_all(pairs, reason)
            self.validate()
        except Exception:
            self.revert(history)
            raise
        self.commit(history)

    # ------------------------------------------------------------------ features
    def attach_feature(self, feature: Feature) -> None:
        if feature in self.features:
            return
        self.features.append(feature)
        feature.on_attach(self)

    def remove_feature(self, feature: Feature) -> None:
        self.features.remove(feature)
        feature.on_detach(self)

    def _notify(self, hook: str, *args: Any) -> None:
        for f in self.features:
            getattr(f, hook)(self, *args)

    def validate(self) -> None:
        for f in self.features:
            f.validate(self)

    def orderings(self) -> dict[Apply, list[Apply]]:
        merged: dict[Apply, list[Apply]] = {}
        for f in self.features:
            for node, prereqs in f.orderings(self).items():
                merged.setdefault(node, []).extend(prereqs)
        return merged

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self) -> list:
        """An undo log position; see ``revert``."""
        log: list = []
        feature = _UndoLog(log)
        self.features.insert(0, feature)
        return [feature, log]

    def revert(self, history: list) -> None:
        feature, log = history
        self.features.remove(feature)
        for node, i, old, _new in reversed(log):
            self.change_input(node, i, old, reason="revert")

    def commit(self, history: list) -> None:
        feature, _ = history
        if feature in self.features:
            self.features.remove(feature)

    # ------------------------------------------------------------------ views
    def toposort(self) -> list[Apply]:
        """Apply nodes in a deterministic order respecting features' orderings."""
        return io_toposort(self.inputs, self.outputs, self.orderings())

    def clone(self) -> FunctionGraph:
        return FunctionGraph(self.inputs, self.outputs, clone=True)

    def clone_get_equiv(self) -> tuple[FunctionGraph, dict]:
        equiv = clone_get_equiv(self.inputs, self.outputs)
        fg = FunctionGraph(
            [equiv[v] for v in self.inputs], [equiv[v] for v in self.outputs], clone=False
        )
        return fg, equiv

    def __str__(self) -> str:
        return f"FunctionGraph({', '.join(str(o) for o in self.outputs)})"


class _UndoLog(Feature):
    def __init__(self, log: list) -> None:
        self.log = log

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: Any,
        i: int,
        old: Variable,
        new: Variable,
        reason: str,
    ) -> None:
        if reason != "revert":
            self.log.append((node, i, old, new))


class MissingInputError(ValueError):
    """An output depends on a free Variable that is not an input of the function."""


@runtime_checkable
class HasFunctionGraph(Protocol):
    """Anything built on a FunctionGraph that shows it (a compiled function): what printing
    and the graph exports accept in place of the graph itself."""

    @property
    def fgraph(self) -> FunctionGraph: ...
