"""From what the user passed to ``function()`` (inputs, outputs, updates, givens) to the
FunctionGraph that is compiled: one function, used by ``FunctionMaker`` for every mode
(DEBUG_MODE checks its rewrites on a copy of the same graph).

The graph's inputs are the explicit inputs then the shared variables it reads (implicit
inputs); its outputs are the function's outputs then one new value per update; givens are
substituted first.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from graphc.compile.aliasing import check_updates, default_updates
from graphc.compile.io import In, Out, UnusedInputError, as_input_var, pairs
from graphc.compile.sharedvalue import SharedVariable
from graphc.graph.basic import Constant, Variable, ancestors, clone_replace, graph_inputs
from graphc.graph.fg import FunctionGraph, MissingInputError
from graphc.opt.destroy import DestroyHandler
from graphc.tensor.variable import as_tensor_variable


class FunctionSpec(NamedTuple):
    """The checked parts of a function and the (not yet rewritten) graph computing it."""

    inputs: list[In]
    outputs: list[Out]
    return_list: bool  # ``outputs`` was given as a list: the call returns a list
    updates: list[tuple[SharedVariable, Variable]]
    shared: list[SharedVariable]  # implicit inputs, in the graph after the explicit ones
    fgraph: FunctionGraph


def build_function_graph(
    inputs: Sequence,
    outputs: Any,
    *,
    updates: Any = None,
    givens: Any = None,
    on_unused_input: str = "raise",
    no_default_updates: Any = False,
) -> FunctionSpec:
    """Check ``function()``'s arguments and build the FunctionGraph to compile (a clone:
    the user's graph is never modified)."""
    ins = [i if isinstance(i, In) else In(as_input_var(i)) for i in inputs]
    return_list = isinstance(outputs, list | tuple)
    out_list = list(outputs) if return_list else ([] if outputs is None else [outputs])
    outs = [o if isinstance(o, Out) else Out(as_tensor_variable(o)) for o in out_list]
    explicit = pairs(updates)
    explicit += default_updates(
        [o.variable for o in outs] + [as_tensor_variable(e) for _, e in explicit],
        {v for v, _ in explicit} | {a for a, _ in pairs(givens)},
        no_default_updates,
    )
    upd = check_updates(explicit)
    in_vars = [i.variable for i in ins]
    seen = _distinct_inputs(in_vars)
    targets = _substitute_givens([o.variable for o in outs] + [u for _, u in upd], givens)
    shared = _implicit_inputs(targets, seen, upd)
    _check_unused(on_unused_input, ins, targets)
    fgraph = FunctionGraph(in_vars + shared, targets, clone=True)
    mutable = [v for v, i in zip(fgraph.inputs, ins) if i.mutable]
    if mutable:  # in-place rewrites may overwrite these inputs' buffers
        fgraph.attach_feature(DestroyHandler(mutable))
    return FunctionSpec(ins, outs, return_list, upd, shared, fgraph)


def _distinct_inputs(in_vars: list[Variable]) -> set[Variable]:
    seen: set[Variable] = set()
    for v in in_vars:
        if v in seen:
            raise ValueError(f"input {v} appears twice in the inputs of the function")
        if isinstance(v, SharedVariable):
            raise TypeError(
                f"shared variable {v} cannot be an explicit input; it is an implicit one"
            )
        seen.add(v)
    return seen


def _substitute_givens(targets: list[Variable], givens: Any) -> list[Variable]:
    """``targets`` with each ``(a, b)`` of ``givens`` replaced (a clone when any)."""
    givens_pairs = [(a, as_tensor_variable(b)) for a, b in pairs(givens)]
    for a, b in givens_pairs:
        if a.type.convert_variable(b) is None:
            raise TypeError(f"givens: {b} of type {b.type} cannot replace {a} ({a.type})")
    if givens_pairs:
        targets = clone_replace(targets, dict(givens_pairs))
    return targets


def _implicit_inputs(targets: list[Variable], explicit: set[Variable], updates: list) -> list:
    """The shared variables the graph reads or updates; a MissingInputError for any other
    free variable that is not an explicit input."""
    free = [
        v for v in graph_inputs(targets)
        if not isinstance(v, Constant) and v not in explicit
    ]  # fmt: skip
    shared = [v for v in free if isinstance(v, SharedVariable)]
    for v, _ in updates:
        if v not in shared:
            shared.append(v)
    missing = [v for v in free if not isinstance(v, SharedVariable)]
    if missing:
        raise MissingInputError(
            f"the outputs depend on {missing[0]} (of type {missing[0].type}), which is "
            "neither an input nor a shared variable of the function"
        )
    return shared


def _check_unused(policy: str, inputs: list[In], targets: list[Variable]) -> None:
    if policy not in ("raise", "warn", "ignore"):
        raise ValueError(f"on_unused_input must be raise, warn or ignore, not {policy!r}")
    used = set(ancestors(targets))
    for k, i in enumerate(inputs):
        if i.variable not in used:
            msg = (
                f"input {k} ({i.variable}) of the function is not used to compute any "
                "output; pass on_unused_input='warn' or 'ignore' to allow it"
            )
            if policy == "raise":
                raise UnusedInputError(msg)
            if policy == "warn":
                warnings.warn(msg, stacklevel=5)
