"""Theano's ``theano.compile.ops``: ``ViewOp`` (the identity, as a view of its input)."""

from __future__ import annotations

from typing import Any

from graphc.graph.basic import Apply, Op, Variable

__all__ = ["ViewOp", "view_op"]


class ViewOp(Op):
    """Returns its input unchanged (the output is a view of it); the gradient passes through.

    Subclasses change only the gradient (``GradClip``)."""

    view_map = {0: [0]}

    def make_node(self, *inputs: Variable) -> Apply:
        (x,) = inputs
        if not isinstance(x, Variable):
            from graphc.tensor.variable import as_tensor_variable

            x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [shapes[0]]

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        return list(gouts)


view_op = ViewOp()
