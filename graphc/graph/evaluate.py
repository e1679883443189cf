"""The reference evaluator: run ``Op.perform`` over a graph in topological order.

It defines graphc's semantics; the linkers and VMs are tested against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphc.graph.basic import Constant, Variable, graph_inputs, io_toposort


def evaluate(outputs: Sequence[Variable], inputs: dict) -> list:
    """Values of ``outputs`` given ``inputs`` (a dict Variable -> value)."""
    values: dict[Variable, object] = {}
    for var, val in inputs.items():
        values[var] = var.type.filter(val, allow_downcast=True)
    for v in graph_inputs(outputs, blockers=list(inputs)):
        if v in values:
            continue
        if isinstance(v, Constant):
            values[v] = v.data
        elif v.tag.get("shared") is not None:
            values[v] = v.tag["shared"].get_value(borrow=True)
        else:
            raise ValueError(f"no value given for input {v} (of type {v.type})")
    for node in io_toposort(list(values), list(outputs)):
        args = [values[i] for i in node.inputs]
        cells: list[list] = [[None] for _ in node.outputs]
        if node.op.lazy:
            _run_lazy(node, values, cells)
        else:
            node.op.perform(node, args, cells)
        for out, cell in zip(node.outputs, cells):
            if cell[0] is None:
                raise ValueError(f"{node} did not produce output {out.index}")
            values[out] = cell[0]
    return [values[o] for o in outputs]


def _run_lazy(node, values, cells) -> None:
    computed = [True] * len(node.inputs)
    args = [values[i] for i in node.inputs]
    needed = node.op.lazy_perform(node, computed, args, cells)
    if needed:
        raise RuntimeError(f"lazy {node} asked for inputs {needed} that are all computed")
