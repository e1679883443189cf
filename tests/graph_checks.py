"""Test helpers: evaluating a graph's output, checking its static and inferred shapes, and a
base for one-input test Ops."""

from __future__ import annotations

import graphc.tensor as T
from graphc.graph.basic import Apply, Constant, Op, graph_inputs
from graphc.tensor.basic import shape_tuple


class SameTypeOp(Op):
    """A test Op of one tensor input whose one output has the input's type (subclasses give
    ``perform`` and, as the test needs, ``grad``)."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])


def run(out, inputs: dict):
    free = [v for v in graph_inputs([out]) if not isinstance(v, Constant)]
    return out.eval({v: inputs[v] for v in free})


def check_static(var, value):
    assert value.ndim == var.ndim
    for s, v in zip(var.type.shape, value.shape):
        assert s is None or s == v, (var.type, value.shape)


def check_infer_shape(out, inputs: dict):
    """The node's infer_shape, evaluated on the same inputs, equals the actual shape."""
    node = out.owner
    shapes = [shape_tuple(i) for i in node.inputs]
    (sym,) = node.op.infer_shape(None, node, shapes)
    actual = run(out, inputs).shape
    got = tuple(int(run(s, inputs)) for s in sym)
    assert got == actual, (node.op, got, actual)
