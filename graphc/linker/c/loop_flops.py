"""Floating-point operations per element of graphc's element-wise C loops, as a roofline
counts executed operations: add, sub, mul, div, sqrt, min, max 1 (a fused multiply-add
2, so contraction does not change a count); compares, selects, casts, negation and ``abs``
(bit operations), and integer arithmetic 0; the vector math (exp, log, tanh...) its
counted cost, :data:`graphc.linker.c.vecmath.FLOPS`. A scalar Op with no count raises
NotImplementedError naming it.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.vecmath import FLOPS
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums

#: scalar Op name -> flops per element (variadic add/mul: one per operand after the first)
ARITHMETIC: dict[str, int] = {
    "add": -1, "mul": -1, "sub": 1, "true_div": 1, "sqr": 1, "sqrt": 1,
    "maximum": 1, "minimum": 1, "clip": 2,
}  # fmt: skip
#: scalar Ops that do no floating-point arithmetic
FREE = frozenset({
    "neg", "abs", "sgn", "identity", "second", "switch", "cast", "eq", "neq", "lt", "gt",
    "le", "ge", "and", "or", "xor", "invert", "floor", "ceil", "round_half_to_even",
})  # fmt: skip

_FLOAT = frozenset({"float32", "float64"})


def scalar_flops(op: ps.ScalarOp, n_inputs: int, dtype: str) -> float:
    """Flops of one element of ``op`` applied to ``n_inputs`` operands, with result
    ``dtype`` (a Composite: the sum over its nodes)."""
    if isinstance(op, ps.Composite):
        total = 0.0
        for node in op.nodes:
            assert isinstance(node.op, ps.ScalarOp)
            total += scalar_flops(node.op, len(node.inputs), node.outputs[0].type.dtype)
        return total
    name = op.name.split("{")[0]
    if name in FREE or isinstance(op, ps.Cast) or dtype not in _FLOAT:
        return 0.0
    if name in ARITHMETIC:
        per = ARITHMETIC[name]
        return float(n_inputs - 1 if per < 0 else per)
    if dtype in FLOPS and name in FLOPS[dtype]:
        return float(FLOPS[dtype][name])
    raise NotImplementedError(f"flops of the scalar Op {name!r} ({dtype}) are not counted")


def node_flops(node: Apply) -> float:
    """Flops per element of an Elemwise or ElemwiseSums node's loop (a sum: one add per
    element); NotImplementedError for any other Op."""
    op = node.op
    if isinstance(op, Elemwise):
        return scalar_flops(op.scalar_op, len(node.inputs), node.outputs[0].type.dtype)
    if isinstance(op, ElemwiseSums):
        n = len(node.inputs)
        return scalar_flops(op.inner, n, node.outputs[0].type.dtype) + len(op.summed)
    raise NotImplementedError(f"flops per element of {type(op).__name__} are not counted")


def loops_flops(nodes: list[Apply]) -> float:
    """Flops per element of the element-wise loops among ``nodes`` (an optimized graph's
    nodes; others, such as a DimShuffle, do no arithmetic or raise NotImplementedError)."""
    total = 0.0
    for node in nodes:
        if type(node.op).__name__ in ("DimShuffle", "Shape", "Shape_i"):
            continue
        total += node_flops(node)
    return total
