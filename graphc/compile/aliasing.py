"""What a call writes back and what it must copy: the update policy (explicit and default
updates of shared variables) and the aliasing policy (which outputs and new shared values
would share memory with something the caller holds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphc.compile.io import Out
from graphc.compile.sharedvalue import SharedVariable
from graphc.graph.basic import Constant, Variable, graph_inputs
from graphc.graph.fg import FunctionGraph
from graphc.tensor.variable import as_tensor_variable


def default_updates(roots: list, skip: set, no_default_updates: Any) -> list[tuple]:
    """``(shared, shared.default_update)`` for every shared variable ``roots`` (and those
    updates) read that has one, is not in ``skip`` and not excluded by
    ``no_default_updates`` (True: all excluded; a list: those)."""
    if no_default_updates is True:
        return []
    excluded = set(no_default_updates or ()) | set(skip)
    found: list[tuple] = []
    seen: set = set()
    todo = list(roots)
    while todo:  # a default update may read further shared variables
        new = []
        for v in graph_inputs(todo):
            upd = getattr(v, "default_update", None) if isinstance(v, SharedVariable) else None
            if upd is None or v in seen or v in excluded:
                continue
            seen.add(v)
            new.append((v, upd))
        found += new
        todo = [u for _, u in new]
    return found


def check_updates(pairs: list[tuple[Any, Any]]) -> list[tuple[SharedVariable, Variable]]:
    """The update pairs with each new value a tensor Variable of its shared variable's type;
    a TypeError / ValueError for a non-shared target, a repeated one or a wrong type."""
    out: list[tuple[SharedVariable, Variable]] = []
    seen = set()
    for var, expr in pairs:
        if not isinstance(var, SharedVariable):
            raise TypeError(f"updates: {var} is not a shared variable")
        if var in seen:
            raise ValueError(f"updates: {var} is updated twice")
        seen.add(var)
        expr = as_tensor_variable(expr)
        if expr.type != var.type and var.type.convert_variable(expr) is None:
            if expr.dtype != var.dtype and expr.ndim == var.ndim:
                raise TypeError(
                    f"updates: the new value of {var} has dtype {expr.dtype} but the "
                    f"shared variable has dtype {var.dtype}; cast it explicitly"
                )
            raise TypeError(
                f"updates: the new value of {var} has type {expr.type}, expected {var.type}"
            )
        out.append((var, expr))
    return out


def outputs_needing_copy(
    fg: FunctionGraph,
    n_in: int,
    outputs: Sequence[Out],
    shared: Sequence[SharedVariable],
    updates: Sequence[tuple[SharedVariable, Variable]],
) -> tuple[list[int], list[int]]:
    """Outputs and updates whose value must be copied so that no two of the caller's arrays
    (returned outputs, new shared values, the caller's inputs) and no constant share memory.

    ``fg`` is the optimized graph: ``n_in`` explicit inputs then ``shared``; the outputs,
    then one output per update. Memory is followed through declared views and in-place
    outputs back to its bases: graph inputs, constants and the outputs of nodes that
    allocate. An update's new value is copied when it may alias anything but its own shared
    variable's old value or the old value of another updated shared variable that no other
    update keeps (so ``a <- b, b <- a`` swaps buffers without copying), or a base an
    earlier update kept. An output is then copied (unless ``Out(borrow=True)``) when it may
    alias a function input, a shared value, a constant or a base of a value already handed
    out (an earlier output, borrowed or not, or a new shared value): ``t`` and ``t.T`` are
    returned as two arrays, and an output viewing an update's value is a copy."""
    alias_roots = _alias_roots(set(fg.inputs))
    external = set(fg.inputs)
    n_out = len(outputs)
    upd_outs = fg.outputs[n_out:]
    upd_vars = [fg.inputs[n_in + shared.index(s)] for s, _ in updates]

    def split(v: Variable) -> tuple[frozenset, frozenset]:
        r = alias_roots(v)
        ext = frozenset(u for u in r if u in external or isinstance(u, Constant))
        return ext, r - ext

    released = {s for s, e in zip(upd_vars, upd_outs) if s not in alias_roots(e)}
    claimed: set[Variable] = set()
    held: set[Variable] = set()  # bases of the values handed out so far
    copy_updates = []
    for k, (s, e) in enumerate(zip(upd_vars, upd_outs)):
        ext, own = split(e)
        if not ext <= {s} | (released - claimed) or own & held:
            copy_updates.append(k)
        else:
            claimed |= ext - {s}
            held |= own
    copy_outputs = []
    for k, out in enumerate(outputs):
        ext, own = split(fg.outputs[k])
        if not out.borrow and (ext or own & held):
            copy_outputs.append(k)
        else:
            held |= own
    return copy_outputs, copy_updates


def _alias_roots(roots: set[Variable]):
    """``alias_roots(v)``: the bases ``v`` may share memory with (graph inputs, constants
    and outputs of nodes that are not views), following declared views and in-place
    outputs (memoized)."""
    memo: dict[Variable, frozenset] = {}

    def sources(v: Variable) -> list[Variable]:
        node = v.owner
        if node is None or v.index is None or v in roots or isinstance(v, Constant):
            return []
        maps = (node.op.view_map, node.op.destroy_map)
        return [node.inputs[i] for mp in maps for i in mp.get(v.index, ())]

    def alias_roots(v: Variable) -> frozenset:
        # Iterative post-order: a chain of thousands of in-place nodes is an ordinary graph.
        stack = [v]
        while stack:
            u = stack[-1]
            if u in memo:
                stack.pop()
                continue
            srcs = sources(u)
            pending = [w for w in srcs if w not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if not srcs:
                memo[u] = frozenset([u])
            else:
                memo[u] = frozenset().union(*(memo[w] for w in srcs))
        return memo[v]

    return alias_roots
