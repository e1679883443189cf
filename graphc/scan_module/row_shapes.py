"""The row shapes of a loop's stacked outputs from its step's input shapes (one walk of the
step graph, ``graphc.opt.shape_walk``): for a loop of no step, whose rows no step gave,
and for ``Scan.infer_shape``. Nothing here compiles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphc.graph.basic import Variable, ancestors, evaluate
from graphc.linker.base import GraphRunningOp
from graphc.opt.shape_walk import infer_shapes, needed_inputs
from graphc.tensor.shape import Shape_i, _i64, shape_tuple

__all__ = ["RowShapes"]


class RowShapes:
    """Each stacked output's row shape as entries over the step inputs' shape entries.

    ``entries[j][d]`` is an int scalar graph whose free values are the step inputs
    themselves (``Shape_i`` of them, or of a node without ``infer_shape``: the fallback).
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.inputs = list(inputs)
        #: per step input, its shape entries (``Shape_i(k)(input)`` or static constants)
        self.input_entries = [shape_tuple(v) for v in self.inputs]
        self.entries = infer_shapes(self.inputs, self.input_entries, outputs)
        self._plan: tuple[list[bool], list[Variable]] | None = None  # see evaluate()

    def evaluate(self, args: Sequence[Any]) -> list[tuple[int, ...] | None]:
        """The row shapes given the step's input values ``args`` (one per step input);
        None for an output whose entries cannot be computed from these values."""
        if self._plan is None:
            # per output: its entries run no Op that compiles a graph of its own (an inner
            # loop's output left to the fallback would compile that loop's step to run it)
            evaluable = [not _runs_a_graph(row) for row in self.entries]
            flat = [e for row in self.entries for e in row]
            self._plan = evaluable, needed_inputs(flat, self.inputs)
        evaluable, needed = self._plan
        values = dict(zip(self.inputs, args))
        feed = {v: values[v] for v in needed}
        if all(evaluable):
            try:
                return [_ints(row) for row in _evaluate_rows(self.entries, feed)]
            except Exception:  # noqa: BLE001 - one output's fallback failed: try each alone
                pass
        out: list[tuple[int, ...] | None] = []
        for row, ok in zip(self.entries, evaluable):
            if not ok:
                out.append(None)
                continue
            try:
                out.append(_ints(_evaluate_rows([row], feed)[0]))
            except Exception:  # noqa: BLE001 - e.g. the fallback computes ``M[i]`` of no row
                out.append(None)
        return out

    def outer(self, outer_shapes: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """The row shapes in terms of the outer graph, given each step input's outer shape
        entries: per axis a constant or one of those entries where the walk found one
        (the common case: a row as long as an input's axis), else None. Larger entries
        are left out on purpose: the outer graph's rewrites would rewrite each of them."""
        where = {v: k for k, v in enumerate(self.inputs)}
        out = []
        for row in self.entries:
            axes: list[Any] = []
            for e in row:
                node = e.owner
                if node is None:
                    axes.append(e)  # a constant
                elif isinstance(node.op, Shape_i) and node.inputs[0] in where:
                    axes.append(_variable(outer_shapes[where[node.inputs[0]]][node.op.i]))
                else:
                    axes.append(None)
            out.append(tuple(axes))
        return out


def _runs_a_graph(row: Sequence[Variable]) -> bool:
    return any(isinstance(v.owner.op, GraphRunningOp) for v in ancestors(row) if v.owner)


def _evaluate_rows(rows: Sequence[Sequence[Variable]], feed: dict) -> list[list[Any]]:
    flat = [e for row in rows for e in row]
    with np.errstate(all="ignore"):
        values = evaluate(flat, feed) if flat else []
    out, pos = [], 0
    for row in rows:
        out.append(values[pos : pos + len(row)])
        pos += len(row)
    return out


def _ints(values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _variable(entry: Any) -> Variable:
    return entry if isinstance(entry, Variable) else _i64(int(entry))
