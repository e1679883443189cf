"""C expressions for the scalar Ops: one table, ``code_for_op``, from Op class to a rule,
and the C helpers those expressions call, next to them (``c_support``).

A rule ``rule(names, in_dtypes, out_dtype) -> str | None`` returns one C expression
computing an element of the output (in ``out_dtype``) from the input element expressions
``names``, or None when that combination of dtypes has no C code (the node then runs its
numpy ``impl``). The element-wise generator (``graphc/linker/c/gen_elemwise.py``) composes
these expressions into loops and emits the helpers of the Ops a loop computes; fusion
(``graphc/opt/fusion.py``) only fuses Ops that have one. The table lives with the scalar
Ops, below both of them, so that each can ask it without importing the other.

A class without a rule here gets its C from the Op itself (``ScalarOp.c_code``: its
``libm`` function, or an override) and its helpers from ``ScalarOp.c_support``, so a new
element-wise Op needs no entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Constant, Variable
from graphc.graph.rules import RuleTable
from graphc.scalar import basic as ps
from graphc.scalar.basic import (
    FLOAT_DTYPES,
    INT_DTYPES,
    Composite,
    ScalarOp,
    ctype,
    has_ctype,
    upcast,
)

CExprRule = Callable[[Sequence[str], Sequence[str], str], str | None]


def _cast_all(names: Sequence[str], ct: str) -> list[str]:
    return [f"(({ct}){n})" for n in names]


def _template(text: str) -> CExprRule:
    """``text.format(*operands)`` with every operand cast to the output's C type first."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        ct = ctype(out_dtype)
        return text.format(*_cast_all(names, ct), ct=ct)

    return rule


def _joined(symbol: str) -> CExprRule:
    """A variadic ``a + b + c``; over bools numpy's add is a logical or, mul a logical and."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        if out_dtype == "bool":
            joined = (" || " if symbol == "+" else " && ").join(f"({n})" for n in names)
            return f"({joined})"
        return "(" + f" {symbol} ".join(_cast_all(names, ctype(out_dtype))) + ")"

    return rule


_FLIPPED = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _compare(symbol: str) -> CExprRule:
    """Compare in the operands' common type (not in the bool output type)."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        kinds = [np.dtype(d).kind for d in in_dtypes]
        if sorted(kinds) == ["i", "u"] and upcast(*in_dtypes) in FLOAT_DTYPES:
            # signed vs unsigned 64-bit: numpy compares exactly, a double would round
            if kinds[0] == "u":
                return _mixed_sign_compare(_FLIPPED[symbol], names[1], names[0])
            return _mixed_sign_compare(symbol, names[0], names[1])
        ct = ctype(upcast(*in_dtypes))
        return f"((({ct}){names[0]}) {symbol} (({ct}){names[1]}))"

    return rule


def _mixed_sign_compare(symbol: str, signed: str, unsigned: str) -> str:
    """``signed <symbol> unsigned`` exactly: a negative value is below every unsigned one."""
    s, u = f"((npy_int64){signed})", f"((npy_uint64){unsigned})"
    exact = f"((npy_uint64){s} {symbol} {u})"
    if symbol in ("==", ">", ">="):
        return f"({s} >= 0 && {exact})"
    return f"({s} < 0 || {exact})"  # !=, <, <=


def _libm(fn: str, out_dtype: str) -> str:
    return fn + "f" if out_dtype == "float32" else fn


def _helper(helper: str, float_only: bool = False) -> CExprRule:
    """``gc_<helper>_<ctype>(args...)`` in the output type; none for bool outputs."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
        if out_dtype == "bool" or (float_only and out_dtype not in FLOAT_DTYPES):
            return None
        ct = ctype(out_dtype)
        return f"gc_{helper}_{ct}(" + ", ".join(_cast_all(names, ct)) + ")"

    return rule


def _vecmath(fn: str, fallback: CExprRule) -> CExprRule:
    """``gc_vm_<fn>_<ctype>(x)``, graphc's vector math (``graphc/linker/c/vecmath.py``) for
    float outputs; ``fallback`` (the C library's) with ``config.c_vecmath`` off."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
        if not config.c_vecmath or out_dtype not in FLOAT_DTYPES:
            return fallback(names, in_dtypes, out_dtype)
        ct = ctype(out_dtype)
        return f"gc_vm_{fn}_{ct}(({ct}){names[0]})"

    return rule


def _float_function(fn: str) -> CExprRule:
    """A libm function of a float-only Op (its output is always float)."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        return f"{_libm(fn, out_dtype)}(({ctype(out_dtype)}){names[0]})"

    return rule


def _float_or_same(fn: str) -> CExprRule:
    """A libm function for float outputs; a unary one of an integer or bool is the input."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
        args = ", ".join(_cast_all(names, ctype(out_dtype)))
        if out_dtype in FLOAT_DTYPES:
            return f"{_libm(fn, out_dtype)}({args})"
        if len(names) != 1:
            return None
        return args

    return rule


def _abs(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    ct = ctype(out_dtype)
    if out_dtype in FLOAT_DTYPES:
        return f"{_libm('fabs', out_dtype)}(({ct}){names[0]})"
    if out_dtype == "bool" or out_dtype.startswith("uint"):
        return f"(({ct}){names[0]})"
    return f"gc_abs_{ct}(({ct}){names[0]})"


def _min_max(kind: str) -> Callable[[Sequence[str], Sequence[str], str], str]:
    """Floats go through ``gc_max_*``/``gc_min_*`` (which propagate nan as numpy does)."""

    def rule(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        ct = ctype(out_dtype)
        a, b = _cast_all(names, ct)
        if out_dtype in FLOAT_DTYPES:
            return f"gc_{kind}_{ct}({a}, {b})"
        return f"({a} {'>=' if kind == 'max' else '<='} {b} ? {a} : {b})"

    return rule


_max, _min = _min_max("max"), _min_max("min")


def _sgn(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    ct = ctype(out_dtype)
    x = f"(({ct}){names[0]})"
    if out_dtype in FLOAT_DTYPES:  # sign(nan) is nan
        return f"({x} > 0 ? ({ct})1 : ({x} < 0 ? ({ct})-1 : {x}))"
    if out_dtype == "bool" or out_dtype.startswith("uint"):
        return f"(({ct})({x} > 0))"
    return f"(({ct})(({x} > 0) - ({x} < 0)))"


def _pow(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
    if out_dtype not in FLOAT_DTYPES:  # integer powers raise on negative exponents: numpy
        return None
    ct = ctype(out_dtype)
    return f"{_libm('pow', out_dtype)}(({ct}){names[0]}, ({ct}){names[1]})"


def _clip(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    lo = _max(names[:2], in_dtypes[:2], out_dtype)
    return _min([lo, names[2]], [out_dtype, in_dtypes[2]], out_dtype)


def _switch(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    ct = ctype(out_dtype)
    return f"(({names[0]}) != 0 ? ({ct}){names[1]} : ({ct}){names[2]})"


def _invert(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
    if out_dtype == "bool":
        return f"((npy_bool)!({names[0]}))"
    if out_dtype in FLOAT_DTYPES:
        return None
    ct = ctype(out_dtype)
    return f"(({ct})~(({ct}){names[0]}))"


def _second(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    return f"(({ctype(out_dtype)}){names[1]})"


def _cast(names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
    if out_dtype == "bool":
        return f"(({names[0]}) != 0)"
    return f"(({ctype(out_dtype)}){names[0]})"


_C_EXPRS: dict[type[ScalarOp], CExprRule] = {
    # arithmetic
    ps.Add: _joined("+"),
    ps.Mul: _joined("*"),
    ps.Sub: _template("({0} - {1})"),
    ps.True_div: _template("({0} / {1})"),
    ps.Int_div: _helper("floordiv"),
    ps.Mod: _helper("mod"),
    ps.Pow: _pow,
    ps.Neg: _template("(-{0})"),
    ps.Abs: _abs,
    ps.Sgn: _sgn,
    ps.Maximum: _max,
    ps.Minimum: _min,
    # transcendental
    ps.Exp: _vecmath("exp", _float_function("exp")),
    ps.Expm1: _vecmath("expm1", _float_function("expm1")),
    ps.Log: _vecmath("log", _float_function("log")),
    ps.Log1p: _vecmath("log1p", _float_function("log1p")),
    ps.Tanh: _vecmath("tanh", _float_function("tanh")),
    ps.Arctan2: _float_or_same("atan2"),
    ps.Sqr: _template("({0} * {0})"),
    ps.Sigmoid: _vecmath("sigmoid", _helper("sigmoid", float_only=True)),
    ps.Softplus: _vecmath("softplus", _helper("softplus", float_only=True)),
    ps.Erf: _float_or_same("erf"),
    ps.Floor: _float_or_same("floor"),
    ps.Ceil: _float_or_same("ceil"),
    ps.Round_half_to_even: _float_or_same("rint"),
    ps.Clip: _clip,
    # comparisons and logic
    ps.Eq: _compare("=="),
    ps.Neq: _compare("!="),
    ps.Lt: _compare("<"),
    ps.Gt: _compare(">"),
    ps.Le: _compare("<="),
    ps.Ge: _compare(">="),
    ps.And: _template("({0} & {1})"),
    ps.Or: _template("({0} | {1})"),
    ps.Xor: _template("({0} ^ {1})"),
    ps.Invert: _invert,
    ps.Switch: _switch,
    ps.Second: _second,
    ps.Identity: _template("{0}"),
    ps.Cast: _cast,
}


# ------------------------------------------------------------------ C helpers
# Top-level C the expressions above call, per Op class (``c_support``): the element-wise
# and reduction generators emit the helpers of the Ops a node computes, once per module.

_INT_CTYPES = tuple(ctype(dt) for dt in (*INT_DTYPES, "bool"))
_FLOAT_CTYPES = (("npy_float64", ""), ("npy_float32", "f"))


def _per_int(template: str) -> str:
    """``template`` once per integer and bool C type ``$T``."""
    return "".join(template.replace("$T", t) for t in _INT_CTYPES)


def _per_float(template: str) -> str:
    """``template`` once per float C type ``$T`` (``$F``: the libm suffix, f for float)."""
    return "".join(template.replace("$T", t).replace("$F", f) for t, f in _FLOAT_CTYPES)


# Python-semantics floor division and modulo; x // 0 == x % 0 == 0 as numpy
_FLOORDIV = _per_int(
    """static inline $T gc_floordiv_$T($T a, $T b) {
    if (b == 0) return 0;
    if (($T)-1 < 0 && b == ($T)-1) return ($T)(0 - (npy_uint64)a);
    $T q = a / b;
    if ((a % b) != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}
"""
) + _per_float(
    """static inline $T gc_floordiv_$T($T a, $T b) {
    if (b == 0) return a / b;
    $T mod = fmod$F(a, b);
    $T div = (a - mod) / b;
    if (mod != 0) { if ((b < 0) != (mod < 0)) div -= 1; }
    if (div != 0) {
        $T fl = floor$F(div);
        if (div - fl > ($T)0.5) fl += 1;
        return fl;
    }
    return copysign$F(($T)0, a / b);
}
"""
)

_MOD = _per_int(
    """static inline $T gc_mod_$T($T a, $T b) {
    if (b == 0) return 0;
    if (($T)-1 < 0 && b == ($T)-1) return 0;
    $T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
"""
) + _per_float(
    """static inline $T gc_mod_$T($T a, $T b) {
    if (b == 0) return fmod$F(a, b);
    $T mod = fmod$F(a, b);
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }
    else mod = copysign$F(($T)0, b);
    return mod;
}
"""
)

_ABS = _per_int(
    "static inline $T gc_abs_$T($T a) { return a < 0 ? ($T)(0 - (npy_uint64)a) : a; }\n"
)

_SIGMOID = _per_float(
    """static inline $T gc_sigmoid_$T($T x) {
    $T e = exp$F(-fabs$F(x));
    return x >= 0 ? ($T)1 / (($T)1 + e) : e / (($T)1 + e);
}
"""
)

_SOFTPLUS = _per_float(
    """static inline $T gc_softplus_$T($T x) {
    return (x > 0 ? x : ($T)0) + log1p$F(exp$F(-fabs$F(x)));
}
"""
)

# maximum and minimum of floats: nan propagates, as in numpy
_MAX_MIN = _per_float(
    "static inline $T gc_max_$T($T a, $T b) { return (a >= b || a != a) ? a : b; }\n"
    "static inline $T gc_min_$T($T a, $T b) { return (a <= b || a != a) ? a : b; }\n"
)

_C_SUPPORT: dict[type[ScalarOp], str] = {
    ps.Int_div: _FLOORDIV,
    ps.Mod: _MOD,
    ps.Abs: _ABS,
    ps.Sigmoid: _SIGMOID,
    ps.Softplus: _SOFTPLUS,
    ps.Maximum: _MAX_MIN,
    ps.Minimum: _MAX_MIN,
    ps.Clip: _MAX_MIN,
}

support_for_op: RuleTable[str] = RuleTable("C support", _C_SUPPORT)
"""Op class -> the top-level C its expression calls (looked up along the MRO)."""


def c_support(op: ScalarOp) -> tuple[str, ...]:
    """The C helpers ``op``'s expressions call (a Composite: its inner Ops'), each once, in
    first-use order; the table's entry for the class, else the Op's ``c_support``."""
    ops = [n.op for n in op.nodes] if isinstance(op, Composite) else [op]
    out: list[str] = []
    for o in ops:
        if isinstance(o, Composite):
            texts: tuple[str, ...] = c_support(o)
        else:
            text = support_for_op.get(o) or getattr(o, "c_support", "")
            texts = (text,) if text else ()
        out.extend(t for t in texts if t not in out)
    return tuple(out)


code_for_op: RuleTable[CExprRule] = RuleTable("C expression", _C_EXPRS)
"""Op class -> its C expression rule. Ops not listed (and their subclasses) have none."""


def register_c_expr(*op_classes: type[ScalarOp]) -> Callable[[CExprRule], CExprRule]:
    """Decorator: ``@register_c_expr(MyOp) def rule(names, in_dtypes, out_dtype)``."""

    return code_for_op.register(*op_classes)


def c_expr(
    op: ScalarOp, names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str
) -> str | None:
    """The C expression for one output element of ``op``, or None if it has none (no C
    for it, or a dtype C cannot hold: float16)."""
    if not all(has_ctype(d) for d in (*in_dtypes, out_dtype)):
        return None
    if isinstance(op, Composite):
        if op.nout != 1:
            return None
        body = composite_c_body(op, names)
        return None if body is None else body[1][0]
    rule = code_for_op.get(op)
    if rule is None:
        return op.c_code(names, in_dtypes, out_dtype)
    return rule(names, in_dtypes, out_dtype)


def composite_c_body(op: Composite, names: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """C statements declaring one temporary per inner node, and the output expressions;
    None if any inner Op lacks C code or any value is float16."""
    values = [*op.inputs, *(o for n in op.nodes for o in (*n.inputs, *n.outputs))]
    if not all(has_ctype(v.type.dtype) for v in values):
        return None
    expr: dict[Variable, str] = dict(zip(op.inputs, names))
    lines: list[str] = []
    for k, node in enumerate(op.nodes):
        ins = [expr[v] if v in expr else c_literal(v) for v in node.inputs]
        out = node.outputs[0]
        assert isinstance(node.op, ScalarOp)
        e = c_expr(node.op, ins, [i.type.dtype for i in node.inputs], out.type.dtype)
        if e is None:
            return None
        tmp = f"t{k}"
        lines.append(f"{ctype(out.type.dtype)} {tmp} = {e};")
        expr[out] = tmp
    outs = [expr[o] if o in expr else c_literal(o) for o in op.outputs]
    return lines, outs


def c_literal(v: Variable) -> str:
    """A scalar constant as a C literal of its own type."""
    if not isinstance(v, Constant):
        raise ValueError(f"free variable {v} in a Composite")
    val = np.asarray(v.data)
    ct = ctype(str(val.dtype))
    if val.dtype.kind == "f":
        f = float(val)
        if f != f:
            return f"(({ct})NAN)"
        if f in (float("inf"), float("-inf")):
            return f"(({ct}){'-' if f < 0 else ''}INFINITY)"
        return f"(({ct}){f!r})"
    if val.dtype.kind == "b":
        return "1" if bool(val) else "0"
    return f"(({ct}){int(val)})"
