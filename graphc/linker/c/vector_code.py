"""AVX-512 code for a float loop body: 16 elements per statement, for the blocks of a
blocked kernel (``gen_elemwise._blocked_kernel``).

gcc vectorizes the scalar vector math well, but cannot emit from C some of the AVX-512
instructions that do its work in fewer operations (a NaN-keeping float clamp, ``vscalefps``
for a scale by 2^n). ``vecmath.py``'s ``gcv16_exp_f32`` and ``gcv16_tanh_f32`` are the
float forms written with them, giving the scalar forms' bits for every input; the fused
``exp(x)*y + tanh(z) - x**2`` loop takes 0.88-0.93x the time with them. Each rule below
gives the scalar C rule's bits too (``c_code.py``: the same IEEE operations in the same
order), so a kernel whose blocks run this code and whose tail runs the scalar loop gives
the plain loop's results. A body with an Op, a dtype or a constant not covered here has no
vector code, and its blocks stay the vectorized scalar loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce

from graphc.flags import config
from graphc.graph.basic import Variable
from graphc.scalar import basic as ps
from graphc.scalar.basic import Composite, ScalarOp
from graphc.scalar.c_code import c_literal

VectorRule = Callable[[Sequence[str]], str]


def _folded(intrinsic: str) -> VectorRule:
    """A variadic operation, left to right as C evaluates ``a + b + c``."""
    return lambda xs: reduce(lambda a, b: f"{intrinsic}({a}, {b})", xs)


def _call(fn: str) -> VectorRule:
    return lambda xs: f"{fn}({', '.join(xs)})"


#: scalar Op class -> its float32 AVX-512 form over 16-lane operands
FLOAT32_RULES: dict[type[ScalarOp], VectorRule] = {
    ps.Add: _folded("_mm512_add_ps"),
    ps.Mul: _folded("_mm512_mul_ps"),
    ps.Sub: _call("_mm512_sub_ps"),
    ps.True_div: _call("_mm512_div_ps"),
    ps.Sqr: lambda xs: f"_mm512_mul_ps({xs[0]}, {xs[0]})",
    ps.Neg: _call("gcv16_neg_f32"),
    ps.Exp: _call("gcv16_exp_f32"),
    ps.Tanh: _call("gcv16_tanh_f32"),
}

LANES = 16
"""float32 elements per statement of the code (one 512-bit vector)."""


def vector_code(
    op: ScalarOp, in_dt: Sequence[str], out_dt: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Statements and output expressions of ``op`` over the vectors ``x0, x1...`` (as
    ``scalar_code`` over elements), or None unless every value is float32, every inner Op
    has a rule and the vector math is graphc's (``config.c_vecmath``)."""
    if not config.c_vecmath or any(d != "float32" for d in (*in_dt, *out_dt)):
        return None
    names = [f"x{k}" for k in range(len(in_dt))]
    if not isinstance(op, Composite):
        rule = FLOAT32_RULES.get(type(op))
        return None if rule is None or len(out_dt) != 1 else ([], [rule(names)])
    values = [*op.inputs, *(v for n in op.nodes for v in (*n.inputs, *n.outputs))]
    if any(v.type.dtype != "float32" for v in values):
        return None
    expr: dict[Variable, str] = dict(zip(op.inputs, names))

    def operand(v: Variable) -> str:
        return expr[v] if v in expr else f"_mm512_set1_ps({c_literal(v)})"

    lines = []
    for k, node in enumerate(op.nodes):
        assert isinstance(node.op, ScalarOp)
        rule = FLOAT32_RULES.get(type(node.op))
        if rule is None:
            return None
        lines.append(f"const __m512 t{k} = {rule([operand(v) for v in node.inputs])};")
        expr[node.outputs[0]] = f"t{k}"
    return lines, [operand(o) for o in op.outputs]
