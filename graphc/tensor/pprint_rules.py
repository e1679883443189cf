"""How ``graphc.printing.pprint`` renders the tensor Ops: one rule per Op class."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.printing import atom, register_pprint
from graphc.scalar import basic as ps
from graphc.tensor import subtensor as ts
from graphc.tensor.basic import MakeVector, Reshape, Shape, Shape_i
from graphc.tensor.blas import Dot
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import CAReduce

if TYPE_CHECKING:
    from graphc.graph.basic import Apply, Op, Variable

BINARY = {
    ps.add: "+", ps.sub: "-", ps.mul: "*", ps.true_div: "/", ps.int_div: "//", ps.mod: "%",
    ps.pow: "**", ps.eq: "==", ps.neq: "!=", ps.lt: "<", ps.gt: ">", ps.le: "<=",
    ps.ge: ">=", ps.and_: "&", ps.or_: "|", ps.xor: "^",
}  # fmt: skip
UNARY = {ps.neg: "-", ps.invert: "~"}
REDUCE = {ps.add: "sum", ps.mul: "prod", ps.maximum: "max", ps.minimum: "min", ps.and_: "all",
          ps.or_: "any"}  # fmt: skip
RENAMED = {ps.round_half_to_even: "round"}


@register_pprint(Elemwise)
def _elemwise(op: Op, node: Apply, v: Variable, args: list[str]):
    sop = op.scalar_op
    if sop in BINARY and len(args) >= 2:
        return "(" + f" {BINARY[sop]} ".join(args) + ")"
    if sop in UNARY:
        return f"{UNARY[sop]}{args[0]}"
    if isinstance(sop, ps.Cast):
        return f"cast({args[0]}, {sop.dtype!r})"
    return f"{RENAMED.get(sop, sop.name)}({', '.join(args)})"


@register_pprint(CAReduce)
def _careduce(op: Op, node: Apply, v: Variable, args: list[str]):
    fn = REDUCE.get(op.scalar_op, op.scalar_op.name)
    return f"{fn}({args[0]}, axis={list(op.axis)})"


@register_pprint(DimShuffle)
def _dimshuffle(op: Op, node: Apply, v: Variable, args: list[str]):
    inp = node.inputs[0]
    n_lead = len(op.new_order) - inp.ndim
    if n_lead >= 0 and list(op.new_order) == ["x"] * n_lead + list(range(inp.ndim)):
        return args[0]  # leading broadcast axes only: implicit in the math form
    if op.is_transpose and inp.ndim == 2 and op.new_order == (1, 0):
        return f"{atom(args[0])}.T"
    order = ", ".join(repr(o) if o == "x" else str(o) for o in op.new_order)
    return f"{atom(args[0])}.dimshuffle({order})"


@register_pprint(ts.Subtensor, ts.AdvancedSubtensor)
def _subtensor(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"{atom(args[0])}[{ts.format_index(op.idx_list, args[1:])}]"


@register_pprint(ts.AdvancedSubtensor1)
def _take1(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"{atom(args[0])}[{args[1]}]"


@register_pprint(ts.IncSubtensor, ts.AdvancedIncSubtensor, ts.AdvancedIncSubtensor1)
def _inc_subtensor(op: Op, node: Apply, v: Variable, args: list[str]):
    fn = "set_subtensor" if op.set_instead_of_inc else "inc_subtensor"
    if isinstance(op, ts.AdvancedIncSubtensor1):
        idx = args[2]
    else:
        idx = ts.format_index(op.idx_list, args[2:])
    return f"{fn}({atom(args[0])}[{idx}], {args[1]})"


@register_pprint(Shape)
def _shape(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"{atom(args[0])}.shape"


@register_pprint(Shape_i)
def _shape_i(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"{atom(args[0])}.shape[{op.i}]"


@register_pprint(Reshape)
def _reshape(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"reshape({args[0]}, {args[1]})"


@register_pprint(MakeVector)
def _make_vector(op: Op, node: Apply, v: Variable, args: list[str]):
    return "[" + ", ".join(args) + "]"


@register_pprint(Dot)
def _dot(op: Op, node: Apply, v: Variable, args: list[str]):
    return f"({args[0]} @ {args[1]})"
