"""Scalar types and scalar Ops: the element functions that Elemwise maps over arrays.

Each scalar Op knows its numpy implementation (``impl``, applied to whole arrays), its
output dtype (numpy 2 promotion rules, float16 widened to float32), and a C expression
(``c_expr``) the C linker composes into loops; ``Composite`` composes scalar Ops into one.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from graphc.graph.basic import Apply, Constant, Op, Type, Variable, io_toposort

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64",
)  # fmt: skip
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DISCRETE_DTYPES = ("bool", *INT_DTYPES)

C_TYPES = {
    "bool": "npy_bool", "int8": "npy_int8", "int16": "npy_int16", "int32": "npy_int32",
    "int64": "npy_int64", "uint8": "npy_uint8", "uint16": "npy_uint16",
    "uint32": "npy_uint32", "uint64": "npy_uint64", "float32": "npy_float32",
    "float64": "npy_float64",
}  # fmt: skip


def ctype(dtype: str) -> str:
    return C_TYPES[dtype]


def upcast(*dtypes: str) -> str:
    """numpy 2 result dtype of mixing ``dtypes``."""
    return str(np.result_type(*[np.dtype(d) for d in dtypes]))


def _widen(dt: np.dtype) -> str:
    return "float32" if dt == np.float16 else str(dt)


class ScalarType(Type):
    """A 0-d value of one dtype (the element type inside Elemwise and Composite)."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = str(np.dtype(dtype))

    def filter(self, value, strict=False, allow_downcast=None):
        return np.asarray(value, dtype=self.dtype)[()]

    def __str__(self) -> str:
        return self.dtype


class ScalarVariable(Variable):
    __slots__ = ()


class ScalarConstant(Constant):
    __slots__ = ()


ScalarType.variable_type = ScalarVariable
ScalarType.constant_type = ScalarConstant


def as_scalar(x) -> Variable:
    if isinstance(x, Variable):
        if not isinstance(x.type, ScalarType):
            raise TypeError(f"{x} is not a scalar variable (type {x.type})")
        return x
    arr = np.asarray(x)
    return ScalarType(str(arr.dtype)).make_constant(arr[()])


class ScalarOp(Op):
    """An element function. ``nin`` = -1 means variadic (add, mul)."""

    nin: ClassVar[int] = 1
    nout: ClassVar[int] = 1
    ufunc: ClassVar[Callable | None] = None
    c_template: ClassVar[str | None] = None  # e.g. "({0} + {1})" over cast operands
    commutative: ClassVar[bool] = False
    float_only: ClassVar[bool] = False  # output is float even for integer inputs
    identity: ClassVar[float | None] = None

    @property
    def name(self) -> str:
        return type(self).__name__.lower()

    def __str__(self) -> str:
        return self.name

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (_ufunc_dtype(self.ufunc, tuple(in_dtypes)),)

    def impl(self, *args):
        """The numpy implementation over arrays (broadcasting as numpy does)."""
        return self.ufunc(*args)

    def evaluate(self, out_dtype: str, *args):
        """``impl`` computed in the declared output dtype, as the C code does: a float-only
        Op casts integer and bool operands to its float output first (numpy alone would
        compute ``exp`` of int8 in float16 and overflow)."""
        if self.float_only and out_dtype in FLOAT_DTYPES:
            args = tuple(_as_float(a, out_dtype) for a in args)
        return self.impl(*args)

    def c_expr(self, names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
        """A C expression computing the output from input element expressions, or None."""
        if self.c_template is None:
            return None
        ct = ctype(out_dtype)
        args = [f"(({ct}){n})" for n in names]
        return self.c_template.format(*args, ct=ct)

    def make_node(self, *inputs) -> Apply:
        inputs = [as_scalar(i) for i in inputs]
        if self.nin != -1 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        dts = self.output_dtypes(*(i.type.dtype for i in inputs))
        return Apply(self, inputs, [ScalarType(d)() for d in dts])

    def perform(self, node, inputs, output_storage):
        out = self.evaluate(node.outputs[0].type.dtype, *inputs)
        if not isinstance(out, tuple):
            out = (out,)
        for cell, val, var in zip(output_storage, out, node.outputs):
            cell[0] = np.asarray(val, dtype=var.type.dtype)[()]


def _as_float(a, dtype: str):
    a = np.asarray(a)
    return a.astype(dtype) if a.dtype.kind in "biu" else a


@functools.lru_cache(maxsize=4096)
def _ufunc_dtype(ufunc, in_dtypes: tuple[str, ...]) -> str:
    with np.errstate(all="ignore"):
        args = [np.ones((), dtype=d) for d in in_dtypes]
        out = ufunc(*args)
    return _widen(np.asarray(out).dtype)


def _float_out(*in_dtypes: str) -> str:
    dt = upcast(*in_dtypes)
    if dt in FLOAT_DTYPES:
        return dt
    return "float32" if np.dtype(dt).itemsize <= 2 else "float64"


_REGISTRY: dict[str, ScalarOp] = {}


def _define(
    name: str,
    nin: int,
    ufunc,
    c: str | None,
    *,
    commutative=False,
    float_only=False,
    identity=None,
    impl=None,
    dtype_rule=None,
    **extra,
) -> ScalarOp:
    attrs: dict = dict(
        nin=nin,
        ufunc=ufunc,
        c_template=c,
        commutative=commutative,
        float_only=float_only,
        identity=identity,
        __module__=__name__,
        **extra,
    )
    if impl is not None:
        attrs["impl"] = lambda self, *a: impl(*a)
    if dtype_rule is not None:
        attrs["output_dtypes"] = lambda self, *d: (dtype_rule(*d),)
    cls = type(name.capitalize() if name.islower() else name, (ScalarOp,), attrs)
    globals()[cls.__name__] = cls
    op = cls()
    _REGISTRY[name] = op
    return op


def _variadic(ufunc):
    return lambda *a: functools.reduce(ufunc, a)


# Arithmetic (add and mul are variadic so canonicalization can flatten chains)
add = _define("add", -1, np.add, None, commutative=True, identity=0, impl=_variadic(np.add),
              dtype_rule=upcast)  # fmt: skip
mul = _define("mul", -1, np.multiply, None, commutative=True, identity=1,
              impl=_variadic(np.multiply), dtype_rule=upcast)  # fmt: skip
sub = _define("sub", 2, np.subtract, "({0} - {1})")
true_div = _define("true_div", 2, np.true_divide, "({0} / {1})", float_only=True)
int_div = _define("int_div", 2, np.floor_divide, None)
mod = _define("mod", 2, np.remainder, None)
pow = _define("pow", 2, np.power, None)
neg = _define("neg", 1, np.negative, "(-{0})")
abs_ = _define("abs", 1, np.absolute, None)
sgn = _define("sgn", 1, np.sign, "(({0} > 0) - ({0} < 0))")
maximum = _define("maximum", 2, np.maximum, None, commutative=True)
minimum = _define("minimum", 2, np.minimum, None, commutative=True)

# Transcendental (float output; c templates use the double/float libm name chosen in c_expr)
_FLOAT_FUNCS = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
}  # fmt: skip
_C_NAMES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan"}


class _FloatFunc(ScalarOp):
    float_only = True

    def c_expr(self, names, in_dtypes, out_dtype):
        fn = _C_NAMES.get(self.name, self.name)
        if out_dtype == "float32":
            fn += "f"
        ct = ctype(out_dtype)
        return f"{fn}(({ct}){names[0]})"


for _n, _uf in _FLOAT_FUNCS.items():
    _cls = type(_n.capitalize(), (_FloatFunc,), {"nin": 1, "ufunc": _uf, "__module__": __name__})
    globals()[_cls.__name__] = _cls
    _REGISTRY[_n] = _cls()
exp, exp2, expm1, log, log2, log10, log1p, sqrt = (
    _REGISTRY[n] for n in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt")
)
sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh = (
    _REGISTRY[n]
    for n in ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh")
)
arctan2 = _define("arctan2", 2, np.arctan2, None, float_only=True)
sqr = _define("sqr", 1, np.square, "({0} * {0})")


def _sigmoid(x):
    x = np.asarray(x)
    out_dt = _float_out(str(x.dtype))
    x = x.astype(out_dt, copy=False)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(out_dt, copy=False)


def _softplus(x):
    x = np.asarray(x)
    out_dt = _float_out(str(x.dtype))
    x = x.astype(out_dt, copy=False)
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(out_dt, copy=False)


def _erf(x):
    from scipy.special import erf as sp_erf

    x = np.asarray(x)
    return sp_erf(x).astype(_float_out(str(x.dtype)), copy=False)


sigmoid = _define("sigmoid", 1, None, None, float_only=True, impl=_sigmoid,
                  dtype_rule=_float_out)  # fmt: skip
softplus = _define("softplus", 1, None, None, float_only=True, impl=_softplus,
                   dtype_rule=_float_out)  # fmt: skip
erf = _define("erf", 1, None, None, float_only=True, impl=_erf, dtype_rule=_float_out)
floor = _define("floor", 1, np.floor, None)
ceil = _define("ceil", 1, np.ceil, None)
round_half_to_even = _define("round_half_to_even", 1, np.rint, None)


def _clip(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


clip = _define("clip", 3, None, None, impl=_clip, dtype_rule=upcast)

# Comparisons and logic (bool output)
eq = _define("eq", 2, np.equal, "({0} == {1})", commutative=True)
neq = _define("neq", 2, np.not_equal, "({0} != {1})", commutative=True)
lt = _define("lt", 2, np.less, "({0} < {1})")
gt = _define("gt", 2, np.greater, "({0} > {1})")
le = _define("le", 2, np.less_equal, "({0} <= {1})")
ge = _define("ge", 2, np.greater_equal, "({0} >= {1})")
and_ = _define("and", 2, np.bitwise_and, "({0} & {1})", commutative=True)
or_ = _define("or", 2, np.bitwise_or, "({0} | {1})", commutative=True)
xor = _define("xor", 2, np.bitwise_xor, "({0} ^ {1})", commutative=True)
invert = _define("invert", 1, np.invert, None)


def _switch(c, a, b):
    return np.where(c, a, b)


switch = _define("switch", 3, None, None, impl=_switch, dtype_rule=lambda c, a, b: upcast(a, b))
second = _define(
    "second",
    2,
    None,
    None,
    impl=lambda a, b: np.broadcast_to(b, np.broadcast_shapes(np.shape(a), np.shape(b))),
    dtype_rule=lambda a, b: b,
)  # noqa: E501
identity = _define("identity", 1, None, "{0}", impl=lambda a: np.array(a, copy=True),
                   dtype_rule=lambda a: a)  # fmt: skip


class Cast(ScalarOp):
    """Convert to ``dtype`` (numpy ``astype`` semantics)."""

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype: str):
        self.dtype = str(np.dtype(dtype))

    @property
    def name(self) -> str:
        return f"convert_to_{self.dtype}"

    def output_dtypes(self, *in_dtypes):
        return (self.dtype,)

    def impl(self, x):
        return np.asarray(x).astype(self.dtype)

    def c_expr(self, names, in_dtypes, out_dtype):
        if out_dtype == "bool":
            return f"(({names[0]}) != 0)"
        return f"(({ctype(out_dtype)}){names[0]})"


def cast(dtype: str) -> Cast:
    return Cast(dtype)


def get_scalar_op(name: str) -> ScalarOp:
    return _REGISTRY[name]


def all_scalar_ops() -> dict[str, ScalarOp]:
    return dict(_REGISTRY)


# -------------------------------------------------------------------------- Composite


class Composite(ScalarOp):
    """A graph of scalar Ops evaluated as one element function (made by fusion)."""

    __props__ = ("signature",)

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.nodes = io_toposort(self.inputs, self.outputs)
        self.signature = _composite_signature(self.inputs, self.outputs, self.nodes)
        self.nin = len(self.inputs)  # type: ignore[misc]
        self.nout = len(self.outputs)  # type: ignore[misc]
        self._name: str | None = None

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = _composite_name(self.inputs, self.outputs, self.nodes, self.signature)
        return self._name

    def output_dtypes(self, *in_dtypes):
        return tuple(o.type.dtype for o in self.outputs)

    def impl(self, *args):
        values: dict[Variable, object] = dict(zip(self.inputs, args))
        for node in self.nodes:
            ins = [values[i] if i in values else i.data for i in node.inputs]
            dt = node.outputs[0].type.dtype
            with np.errstate(all="ignore"):
                out = node.op.evaluate(dt, *ins)
            values[node.outputs[0]] = np.asarray(out).astype(dt, copy=False)
        outs = tuple(values[o] if o in values else o.data for o in self.outputs)
        return outs if len(outs) > 1 else outs[0]

    def c_expr(self, names, in_dtypes, out_dtype):
        if self.nout != 1:
            return None
        return self.c_body(names)[1][0]

    def c_body(self, names: Sequence[str]) -> tuple[list[str], list[str]] | None:
        """C statements declaring temporaries, and the output expressions; None if any
        scalar Op lacks C code."""
        expr: dict[Variable, str] = dict(zip(self.inputs, names))
        lines: list[str] = []
        for k, node in enumerate(self.nodes):
            ins = []
            for v in node.inputs:
                if v in expr:
                    ins.append(expr[v])
                else:
                    ins.append(_c_literal(v))
            out = node.outputs[0]
            e = node.op.c_expr(ins, [i.type.dtype for i in node.inputs], out.type.dtype)
            if e is None:
                return None
            tmp = f"t{k}"
            lines.append(f"{ctype(out.type.dtype)} {tmp} = {e};")
            expr[out] = tmp
        outs = [expr[o] if o in expr else _c_literal(o) for o in self.outputs]
        return lines, outs


def _c_literal(v: Variable) -> str:
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


def _composite_signature(inputs, outputs, nodes) -> tuple:
    ids: dict[Variable, object] = {v: ("i", k, v.type.dtype) for k, v in enumerate(inputs)}
    sig = []
    for k, node in enumerate(nodes):
        ins = tuple(ids[i] if i in ids else ("c", i.signature()) for i in node.inputs)
        sig.append((node.op, ins))
        for j, o in enumerate(node.outputs):
            ids[o] = ("n", k, j)
    return (
        tuple(sig),
        tuple(ids[o] if o in ids else ("c", o.signature()) for o in outputs),
    )


_INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/"}


NAME_LIMIT = 240  # longer Composite names are cut and tagged with a digest


def _composite_name(inputs, outputs, nodes, signature) -> str:
    """``Composite{<expression>}``, built bottom-up (no recursion: fused chains can be
    thousands of nodes deep); an over-long expression is cut and tagged with a digest of
    the signature so different Composites never print alike."""
    expr: dict[Variable, str] = {v: f"i{k}" for k, v in enumerate(inputs)}
    for node in nodes:
        args = [expr[i] if i in expr else str(i) for i in node.inputs]
        sym = _INFIX.get(node.op.name)
        text = "(" + f" {sym} ".join(args) + ")" if sym else f"{node.op.name}({', '.join(args)})"
        if len(text) > 4 * NAME_LIMIT:
            text = text[: 4 * NAME_LIMIT]
        for o in node.outputs:
            expr[o] = text
    body = ", ".join(expr[o] if o in expr else str(o) for o in outputs)
    if len(body) > NAME_LIMIT:
        digest = hashlib.sha1(repr(signature).encode()).hexdigest()[:8]
        body = f"{body[:NAME_LIMIT]}...#{digest}"
    return "Composite{" + body + "}"


def _joined_c_expr(symbol: str):
    def c_expr(self, names, in_dtypes, out_dtype):
        if out_dtype == "bool":  # numpy: bool add is logical or, bool mul logical and
            joined = (" || " if symbol == "+" else " && ").join(f"({n})" for n in names)
            return f"({joined})"
        ct = ctype(out_dtype)
        return "(" + f" {symbol} ".join(f"(({ct}){n})" for n in names) + ")"

    return c_expr


type(add).c_expr = _joined_c_expr("+")
type(mul).c_expr = _joined_c_expr("*")


# ----------------------------------------------------------- C for the remaining Ops
# Helpers named gc_* are defined by the C linker (graphc/linker/c/gen_elemwise.py).

_FLOATS = ("float32", "float64")


def _libm(fn: str, out_dtype: str) -> str:
    return fn + "f" if out_dtype == "float32" else fn


_FLIPPED = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _cmp_c_expr(symbol: str):
    def c_expr(self, names, in_dtypes, out_dtype):
        kinds = [np.dtype(d).kind for d in in_dtypes]
        if sorted(kinds) == ["i", "u"] and upcast(*in_dtypes) in FLOAT_DTYPES:
            # signed vs unsigned 64-bit: numpy compares exactly, a double would round
            if kinds[0] == "u":
                return _mixed_sign_cmp(_FLIPPED[symbol], names[1], names[0])
            return _mixed_sign_cmp(symbol, names[0], names[1])
        ct = ctype(upcast(*in_dtypes))  # compare in the common type, not in bool
        return f"((({ct}){names[0]}) {symbol} (({ct}){names[1]}))"

    return c_expr


def _mixed_sign_cmp(symbol: str, signed: str, unsigned: str) -> str:
    """``signed <symbol> unsigned`` exactly: a negative value is below every unsigned one."""
    s, u = f"((npy_int64){signed})", f"((npy_uint64){unsigned})"
    exact = f"((npy_uint64){s} {symbol} {u})"
    if symbol in ("==", ">", ">="):
        return f"({s} >= 0 && {exact})"
    return f"({s} < 0 || {exact})"  # !=, <, <=


for _op, _sym in ((eq, "=="), (neq, "!="), (lt, "<"), (gt, ">"), (le, "<="), (ge, ">=")):
    type(_op).c_expr = _cmp_c_expr(_sym)


def _helper_c_expr(helper: str, float_only: bool = False, int_ok: bool = True):
    """``gc_<helper>_<ctype>(args...)`` in the output type."""

    def c_expr(self, names, in_dtypes, out_dtype):
        if out_dtype == "bool" or (not int_ok and out_dtype not in _FLOATS):
            return None
        if float_only and out_dtype not in _FLOATS:
            return None
        ct = ctype(out_dtype)
        return f"gc_{helper}_{ct}(" + ", ".join(f"(({ct}){n})" for n in names) + ")"

    return c_expr


type(int_div).c_expr = _helper_c_expr("floordiv")
type(mod).c_expr = _helper_c_expr("mod")
type(sigmoid).c_expr = _helper_c_expr("sigmoid", float_only=True)
type(softplus).c_expr = _helper_c_expr("softplus", float_only=True)


def _abs_c_expr(self, names, in_dtypes, out_dtype):
    ct = ctype(out_dtype)
    if out_dtype in _FLOATS:
        return f"{_libm('fabs', out_dtype)}(({ct}){names[0]})"
    if out_dtype == "bool" or out_dtype.startswith("uint"):
        return f"(({ct}){names[0]})"
    return f"gc_abs_{ct}(({ct}){names[0]})"


def _minmax_c_expr(kind: str):
    def c_expr(self, names, in_dtypes, out_dtype):
        ct = ctype(out_dtype)
        a, b = (f"(({ct}){n})" for n in names)
        if out_dtype in _FLOATS:
            return f"gc_{kind}_{ct}({a}, {b})"
        return f"({a} {'>=' if kind == 'max' else '<='} {b} ? {a} : {b})"

    return c_expr


type(abs_).c_expr = _abs_c_expr
type(maximum).c_expr = _minmax_c_expr("max")
type(minimum).c_expr = _minmax_c_expr("min")


def _sgn_c_expr(self, names, in_dtypes, out_dtype):
    ct, x = ctype(out_dtype), f"(({ctype(out_dtype)}){names[0]})"
    if out_dtype in _FLOATS:  # sign(nan) is nan
        return f"({x} > 0 ? ({ct})1 : ({x} < 0 ? ({ct})-1 : {x}))"
    if out_dtype == "bool" or out_dtype.startswith("uint"):
        return f"(({ct})({x} > 0))"
    return f"(({ct})(({x} > 0) - ({x} < 0)))"


type(sgn).c_expr = _sgn_c_expr


def _float_fn_c_expr(fn: str):
    """A libm function for float outputs; integer and bool outputs are the input as is."""

    def c_expr(self, names, in_dtypes, out_dtype):
        ct = ctype(out_dtype)
        args = ", ".join(f"(({ct}){n})" for n in names)
        if out_dtype in _FLOATS:
            return f"{_libm(fn, out_dtype)}({args})"
        if len(names) != 1:
            return None
        return args

    return c_expr


type(floor).c_expr = _float_fn_c_expr("floor")
type(ceil).c_expr = _float_fn_c_expr("ceil")
type(round_half_to_even).c_expr = _float_fn_c_expr("rint")
type(arctan2).c_expr = _float_fn_c_expr("atan2")
type(erf).c_expr = _float_fn_c_expr("erf")


def _pow_c_expr(self, names, in_dtypes, out_dtype):
    if out_dtype not in _FLOATS:  # integer powers raise on negative exponents: Python
        return None
    ct = ctype(out_dtype)
    return f"{_libm('pow', out_dtype)}(({ct}){names[0]}, ({ct}){names[1]})"


type(pow).c_expr = _pow_c_expr


def _clip_c_expr(self, names, in_dtypes, out_dtype):
    lo = maximum.c_expr(names[:2], in_dtypes[:2], out_dtype)
    return minimum.c_expr([lo, names[2]], [out_dtype, in_dtypes[2]], out_dtype)


type(clip).c_expr = _clip_c_expr


def _switch_c_expr(self, names, in_dtypes, out_dtype):
    ct = ctype(out_dtype)
    return f"(({names[0]}) != 0 ? ({ct}){names[1]} : ({ct}){names[2]})"


type(switch).c_expr = _switch_c_expr


def _invert_c_expr(self, names, in_dtypes, out_dtype):
    ct = ctype(out_dtype)
    if out_dtype == "bool":
        return f"((npy_bool)!({names[0]}))"
    if out_dtype in _FLOATS:
        return None
    return f"(({ct})~(({ct}){names[0]}))"


type(invert).c_expr = _invert_c_expr


def _second_c_expr(self, names, in_dtypes, out_dtype):
    return f"(({ctype(out_dtype)}){names[1]})"


type(second).c_expr = _second_c_expr
