"""Shapes from each Op's ``infer_shape``: asking for the shape of an expression does not
compute the expression (``(x ** 2).shape`` reads ``x``'s shape; the shape of a join of
arrays that do not fit together is the sum of their lengths, the join never runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.opt.canonicalize import CHEAP
from graphc.opt.engine import register
from graphc.opt.utils import fit, make_const
from graphc.tensor.basic import MakeVector, Shape, Shape_i
from graphc.tensor.subtensor import Subtensor

if TYPE_CHECKING:
    from graphc.graph.fg import FunctionGraph


@register("canonicalize", *CHEAP, tracks=(Shape,))
def shape_to_entries(fgraph: FunctionGraph, node):
    # Shape(op(a, b)) -> MakeVector(Shape_i{0}(op(a, b)), ...)   (each entry then lifted
    # through op.infer_shape by shape_i_of_node)
    (v,) = node.inputs
    if v.owner is None or not hasattr(v.owner.op, "infer_shape"):
        return None
    if v.type.ndim == 0:
        return [make_const([], "int64")]
    entries = [Shape_i(k)(v) for k in range(v.type.ndim)]
    return [fit(node.outputs[0], MakeVector("int64")(*entries))]


@register("canonicalize", *CHEAP, tracks=(Subtensor,))
def subtensor_of_make_vector(fgraph: FunctionGraph, node):
    # MakeVector(a, b, c)[1] -> b   (a constant integer index)
    x = node.inputs[0]
    idx = node.op.idx_list
    if x.owner is None or not isinstance(x.owner.op, MakeVector) or len(idx) != 1:
        return None
    if not isinstance(idx[0], int) or not -len(x.owner.inputs) <= idx[0] < len(x.owner.inputs):
        return None
    return [fit(node.outputs[0], x.owner.inputs[idx[0]])]
