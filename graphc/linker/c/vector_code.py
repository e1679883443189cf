"""AVX-512 code for a float loop body, one vector per statement: the contiguous kernel
of an element-wise node, or the blocks of a blocked one (``gen_elemwise``), compiled
where the CPU has AVX-512 (``#ifdef __AVX512F__``; elsewhere the scalar loop).

gcc vectorizes the scalar vector math well, but cannot emit from C some AVX-512
instructions that do its work in fewer operations (a NaN-keeping float clamp, ``vscalef``
for a scale by 2^n). ``vecmath.py``'s ``gcv16_exp_f32``, ``gcv16_tanh_f32``,
``gcv8_exp_f64`` and ``gcv8_tanh_f64`` are the scalar forms written with them, giving
their bits. Each rule below gives its scalar C rule's bits too (``c_code.py``: the same
IEEE operations in the same order), so these kernels give the scalar loops' results (the
strided kernel and the tail of a blocked one stay scalar). A body with an Op or a dtype
not covered here has no vector code and stays the vectorized scalar loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import NamedTuple

from graphc.flags import config
from graphc.graph.basic import Variable
from graphc.linker.build_env import writes_subnormals_at_full_speed
from graphc.scalar import basic as ps
from graphc.scalar.basic import Composite, ScalarOp, ctype
from graphc.scalar.c_code import c_literal

VectorRule = Callable[[Sequence[str]], str]


@dataclass(frozen=True)
class VectorType:
    """A dtype's 512-bit vector: its C type, intrinsic suffix, lanes and mask type."""

    ctype: str
    suffix: str
    lanes: int
    mask: str

    def op(self, name: str) -> str:
        """The intrinsic ``_mm512_<name>_<suffix>``."""
        return f"_mm512_{name}_{self.suffix}"


class VectorCode(NamedTuple):
    """A loop body over vectors: ``lines`` (statements) and ``outs`` (output expressions)
    over the input vectors ``x0, x1...`` of type ``vtype``."""

    vtype: VectorType
    lines: list[str]
    outs: list[str]


VECTOR_TYPES = {
    "float32": VectorType("__m512", "ps", 16, "__mmask16"),
    "float64": VectorType("__m512d", "pd", 8, "__mmask8"),
}


def _folded(intrinsic: str) -> VectorRule:
    """A variadic operation, left to right as C evaluates ``a + b + c``."""
    return lambda xs: reduce(lambda a, b: f"{intrinsic}({a}, {b})", xs)


def _call(fn: str) -> VectorRule:
    return lambda xs: f"{fn}({', '.join(xs)})"


def _rules(v: VectorType, math: str) -> dict[type[ScalarOp], VectorRule]:
    """Scalar Op class -> its form over ``v``'s vectors; ``math``: the vector math's
    function suffix (``gcv16_exp_f32``)."""
    return {
        ps.Add: _folded(v.op("add")),
        ps.Mul: _folded(v.op("mul")),
        ps.Sub: _call(v.op("sub")),
        ps.True_div: _call(v.op("div")),
        ps.Sqr: lambda xs: f"{v.op('mul')}({xs[0]}, {xs[0]})",
        ps.Neg: _call(f"gcv{v.lanes}_neg_{math}"),
        ps.Exp: _call(f"gcv{v.lanes}_exp_{math}"),
        ps.Tanh: _call(f"gcv{v.lanes}_tanh_{math}"),
    }


#: dtype -> scalar Op class -> its AVX-512 form
RULES = {
    "float32": _rules(VECTOR_TYPES["float32"], "f32"),
    "float64": _rules(VECTOR_TYPES["float64"], "f64"),
}

#: dtype -> the Ops whose vector forms beat gcc's vectorization of the scalar ones; a body
#: without any keeps the scalar loop. Plain arithmetic as intrinsics: x + y 1.01-1.25x the
#: time; double tanh alone 1.02-1.07x (while the fused exp/tanh loop gains with it)
GAINS: dict[str, tuple[type[ScalarOp], ...]] = {
    "float32": (ps.Exp, ps.Tanh),
    "float64": (ps.Exp,),
}


def vector_code(op: ScalarOp, in_dt: Sequence[str], out_dt: Sequence[str]) -> VectorCode | None:
    """``op``'s code over the vectors ``x0, x1...`` (as ``scalar_code`` over elements), or
    None unless every value but the constants has one float dtype of :data:`RULES`, every
    inner Op has a rule, one of them is in the dtype's :data:`GAINS` and the vector math
    is graphc's (``config.c_vecmath``)."""
    dtype = out_dt[0] if out_dt else ""
    rules = RULES.get(dtype)
    if rules is None or not config.c_vecmath or any(d != dtype for d in (*in_dt, *out_dt)):
        return None
    v, gains = VECTOR_TYPES[dtype], GAINS[dtype]
    if not writes_subnormals_at_full_speed():
        # the vector exp writes a subnormal result with vscalef, the scalar form by integer
        # operations: where writing one takes an assist, exp keeps the scalar form
        rules = {cls: r for cls, r in rules.items() if cls is not ps.Exp}
    names = [f"x{k}" for k in range(len(in_dt))]
    if not isinstance(op, Composite):
        rule = rules.get(type(op))
        if rule is None or len(out_dt) != 1 or not isinstance(op, gains):
            return None
        return VectorCode(v, [], [rule(names)])
    if any(x.type.dtype != dtype for x in (*op.inputs, *(n.outputs[0] for n in op.nodes))):
        return None
    if not any(isinstance(n.op, gains) for n in op.nodes):
        return None
    expr: dict[Variable, str] = dict(zip(op.inputs, names))
    ct = ctype(dtype)

    def operand(x: Variable) -> str:
        """A value's vector; a constant of any dtype converted to the float dtype, as each
        scalar rule converts its operands to its float output."""
        return expr[x] if x in expr else f"{v.op('set1')}(({ct}){c_literal(x)})"

    lines = []
    for k, node in enumerate(op.nodes):
        assert isinstance(node.op, ScalarOp)
        rule = rules.get(type(node.op))
        if rule is None:
            return None
        lines.append(f"const {v.ctype} t{k} = {rule([operand(x) for x in node.inputs])};")
        expr[node.outputs[0]] = f"t{k}"
    return VectorCode(v, lines, [operand(o) for o in op.outputs])
