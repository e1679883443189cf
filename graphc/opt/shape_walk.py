"""Shapes of a graph's outputs from its inputs' shapes, by one walk in topological order:
each node's output shapes come from its Op's ``infer_shape``, no rewrite pass runs and
nothing is compiled. The entries are small graphs of their own, evaluated where needed
(``graphc.graph.basic.evaluate``).

An Op without ``infer_shape`` (or one that cannot give a node's shapes) leaves
``Shape_i(k)(output)``: computing that entry computes the output, the last resort.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphc.graph.basic import Constant, Variable, graph_inputs, io_toposort
from graphc.tensor.basic import MakeVector
from graphc.tensor.math import cast
from graphc.tensor.shape import Shape, Shape_i, _i64, shape_tuple

__all__ = ["infer_shapes", "needed_inputs", "substitute"]

Entries = tuple[Variable, ...]


def infer_shapes(
    inputs: Sequence[Variable],
    input_shapes: Sequence[Sequence[Any]],
    outputs: Sequence[Variable],
) -> list[Entries]:
    """One tuple of int scalar Variables per output of ``outputs``: its shape, given each of
    ``inputs``' shapes (tuples of int scalar Variables or ints) and walking only the nodes
    between them."""
    shapes: dict[Variable, Entries] = {
        v: tuple(_variable(e) for e in s) for v, s in zip(inputs, input_shapes)
    }
    sizes: dict[Variable, Variable] = {}  # Shape_i(k)(v) in the graph -> v's entry k
    for node in io_toposort(list(inputs), list(outputs)):
        given = [_shape_of(i, shapes) for i in node.inputs]
        if isinstance(node.op, (Shape, Shape_i)) and given[0] is not None:
            _record_size(node, given[0], sizes)
        inferred = _node_shapes(node, given)
        for k, out in enumerate(node.outputs):
            ndim = getattr(out.type, "ndim", None)
            if ndim is None:
                continue
            row = inferred[k] if inferred is not None else None
            shapes[out] = _entries(out, row)
    rows = [_shape_of(o, shapes) or () for o in outputs]
    flat = substitute([e for row in rows for e in row], sizes)
    result: list[Entries] = []
    pos = 0
    for row in rows:
        result.append(tuple(flat[pos : pos + len(row)]))
        pos += len(row)
    return result


def substitute(outputs: Sequence[Variable], subst: dict[Variable, Variable]) -> list[Variable]:
    """``outputs`` rebuilt with each Variable of ``subst`` replaced by its value there, the
    values themselves substituted in turn (one pass over the graph, no recursion)."""
    memo: dict[Variable, Variable] = {}
    active: set[Variable] = set()  # keys whose value is being resolved (met again: a cycle,
    # the key then stays itself)
    for root in outputs:
        stack = [root]
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            target = subst.get(v)
            if target is not None and target in memo:
                memo[v] = memo[target]
                stack.pop()
                continue
            if target is not None and v not in active:
                active.add(v)
                stack.append(target)
                continue
            node = v.owner
            pending = [] if node is None else [i for i in node.inputs if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            if node is not None and any(memo[i] is not i for i in node.inputs):
                new = node.clone_with_new_inputs([memo[i] for i in node.inputs], strict=False)
                memo[v] = new.outputs[v.index or 0]
            else:
                memo[v] = v
            stack.pop()
    return [memo[o] for o in outputs]


def _record_size(node: Any, entries: Entries, sizes: dict[Variable, Variable]) -> None:
    """The value of ``Shape_i(k)(v)`` or ``Shape(v)`` from ``v``'s entries (not when the
    entry is the fallback: that is the node itself)."""
    v, out = node.inputs[0], node.outputs[0]
    if isinstance(node.op, Shape_i):
        k = node.op.i
        if not _is_shape_i_of(entries[k], v, k):
            sizes[out] = entries[k]
    elif entries and not all(_is_shape_i_of(e, v, k) for k, e in enumerate(entries)):
        sizes[out] = MakeVector("int64")(*(_int64(e) for e in entries))


def _int64(e: Variable) -> Variable:
    return e if e.type.dtype == "int64" else cast(e, "int64")  # type: ignore[attr-defined]


def _is_shape_i_of(entry: Variable, v: Variable, k: int) -> bool:
    node = entry.owner
    return node is not None and node.op == Shape_i(k) and node.inputs[0] is v


def needed_inputs(entries: Sequence[Variable], inputs: Sequence[Variable]) -> list[Variable]:
    """Those of ``inputs`` that ``entries`` depend on (what evaluating them needs)."""
    used = set(graph_inputs(entries, blockers=inputs))
    return [v for v in inputs if v in used]


def _node_shapes(node: Any, given: list) -> list | None:
    """The node's output shapes from its Op's ``infer_shape``, or None."""
    infer = getattr(node.op, "infer_shape", None)
    if infer is None:
        return None
    try:  # no Op's infer_shape reads its fgraph argument
        return list(infer(None, node, given))
    except Exception:  # noqa: BLE001 - an infer_shape that cannot give this node's shapes
        return None  # (e.g. NotImplementedError): the fallback, the output's own sizes


def _entries(out: Variable, row: Sequence[Any] | None) -> Entries:
    """``out``'s entries: static sizes as constants, then the inferred ones, then
    ``Shape_i(k)(out)``."""
    static: Sequence[Any] = out.type.shape  # type: ignore[attr-defined]
    entries: list[Variable] = []
    for k, size in enumerate(static):
        if size is not None:
            entries.append(_i64(size))
        elif row is not None and k < len(row) and row[k] is not None:
            entries.append(_variable(row[k]))
        else:
            entries.append(Shape_i(k)(out))
    return tuple(entries)


def _shape_of(v: Variable, shapes: dict[Variable, Entries]) -> Entries | None:
    """The entries found for ``v``; a constant's or a free variable's from its type; None
    for a value without a shape (not a tensor)."""
    got = shapes.get(v)
    if got is not None:
        return got
    if getattr(v.type, "ndim", None) is None:
        return None
    if isinstance(v, Constant):
        entries: Entries = tuple(_i64(s) for s in np.shape(v.data))
    else:
        entries = shape_tuple(v)
    shapes[v] = entries
    return entries


def _variable(entry: Any) -> Variable:
    return entry if isinstance(entry, Variable) else _i64(int(entry))
