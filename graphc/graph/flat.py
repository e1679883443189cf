"""A flat, picklable form of a graph: free Variables plus Apply nodes in topological order,
each referring to earlier entries by index.

Pickling Variables directly follows owner -> inputs -> owner ... and recurses once per
level, so a deep graph (a long chain) exceeds Python's recursion limit; this form does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphc.graph.basic import Apply, Tag, Variable, io_toposort


@dataclass(frozen=True)
class VarRef:
    """A reference to entry ``index`` of a flat graph (``out`` for a node's outputs)."""

    index: int
    out: int = -1


def flatten(roots: Sequence[Variable]) -> tuple[list, dict[Variable, VarRef]]:
    """Entries (free Variables, then ``(op, input refs, output (type, name, class))`` per
    node) and the reference of every Variable involved."""
    entries: list = []
    refs: dict[Variable, VarRef] = {}
    nodes = io_toposort([], list(roots))

    def free(v: Variable) -> None:
        if v not in refs:
            refs[v] = VarRef(len(entries))
            entries.append(("var", v))

    for node in nodes:
        for v in node.inputs:
            if v.owner is None:
                free(v)
    for v in roots:
        if v.owner is None:
            free(v)
    for node in nodes:
        k = len(entries)
        outs = [(o.type, o.name, type(o)) for o in node.outputs]
        entries.append(
            ("apply", node.op, [refs[v] for v in node.inputs], outs, node.tag, node.origins)
        )
        for j, o in enumerate(node.outputs):
            refs[o] = VarRef(k, j)
    return entries, refs


def unflatten(entries: list) -> list:
    """Rebuild the graph; entry ``k`` becomes a Variable or the list of a node's outputs."""
    built: list = []

    def get(ref: VarRef) -> Any:
        item = built[ref.index]
        return item if ref.out < 0 else item[ref.out]

    for entry in entries:
        if entry[0] == "var":
            built.append(entry[1])
            continue
        _, op, in_refs, outs, tag, origins = entry
        outputs = [cls(t, None, None, name) for t, name, cls in outs]
        node = Apply(op, [get(r) for r in in_refs], outputs)
        node.tag, node.origins = Tag(tag), tuple(origins)
        built.append(outputs)
    return built


def replace_refs(obj: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every Variable / VarRef inside nested lists, tuples, dicts and
    dataclass-like objects with ``__dict__`` (In, Out); returns the new structure."""
    if isinstance(obj, Variable | VarRef):
        return fn(obj)
    if isinstance(obj, list):
        return [replace_refs(o, fn) for o in obj]
    if isinstance(obj, tuple):
        return tuple(replace_refs(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {replace_refs(k, fn): replace_refs(v, fn) for k, v in obj.items()}
    if hasattr(obj, "__dataclass_fields__"):
        import dataclasses

        changes = {f: replace_refs(getattr(obj, f), fn) for f in obj.__dataclass_fields__}
        return dataclasses.replace(obj, **changes)
    return obj


def collect_vars(obj: Any) -> list[Variable]:
    """Every Variable inside a nested structure (see ``replace_refs``), in order."""
    found: list[Variable] = []

    def keep(v: Variable) -> Variable:
        found.append(v)
        return v

    replace_refs(obj, keep)
    return found
