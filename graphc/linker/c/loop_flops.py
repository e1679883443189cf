"""Floating-point operations per element of graphc's element-wise C loops, as a roofline
counts executed operations: each scalar Op's own count (``ScalarOp.flops_per_element``:
add, sub, mul, div, sqrt, min, max 1, a fused multiply-add 2, so contraction does not
change a count; compares, selects, casts, negation and ``abs`` 0), and for the functions
whose C is graphc's vector math (``graphc.scalar.c_code.VECMATH``: exp, log, tanh...)
that implementation's counted cost, :data:`graphc.linker.c.vecmath.FLOPS`. Integer loops
count 0. A scalar Op with no count raises NotImplementedError naming it.
"""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c.vecmath import FLOPS
from graphc.scalar import basic as ps
from graphc.scalar.c_code import VECMATH
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import ElemwiseSums
from graphc.tensor.shape import Shape, Shape_i

#: Ops with no arithmetic: views and shape reads
_NO_ARITHMETIC = (DimShuffle, Shape, Shape_i)

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
    if dtype not in _FLOAT:
        return 0.0
    if op.flops_per_element is not None:
        return float(op.flops_per_element * (n_inputs - 1 if op.nin == -1 else 1))
    fn = VECMATH.get(type(op))
    if fn is not None and fn in FLOPS.get(dtype, {}):
        return float(FLOPS[dtype][fn])
    raise NotImplementedError(f"flops of the scalar Op {op.name!r} ({dtype}) are not counted")


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
        if isinstance(node.op, _NO_ARITHMETIC):
            continue
        total += node_flops(node)
    return total
