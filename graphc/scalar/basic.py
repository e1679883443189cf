"""Scalar types and scalar Ops: the element functions that Elemwise maps over arrays.

Each scalar Op is a class declared here with its facts as class attributes: its numpy
implementation (``impl``, applied to whole arrays), its output dtype (numpy 2 promotion
rules; float16 only from a float16 operand, else widened to float32), its C (``libm`` or
``c_code``; none for float16), its gradient (``gradient``, ``grad_rule``) and what it does
as a reduction (``reducer``...);
``Composite`` composes scalar Ops into one. The C rules of the built-in families, which the
C linker composes into loops, are the table ``code_for_op`` in ``graphc/scalar/c_code.py``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from graphc.graph.basic import Apply, Constant, Op, Type, Variable, io_toposort

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
)  # fmt: skip
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DISCRETE_DTYPES = ("bool", *INT_DTYPES)

C_TYPES = {
    "bool": "npy_bool", "int8": "npy_int8", "int16": "npy_int16", "int32": "npy_int32",
    "int64": "npy_int64", "uint8": "npy_uint8", "uint16": "npy_uint16",
    "uint32": "npy_uint32", "uint64": "npy_uint64", "float32": "npy_float32",
    "float64": "npy_float64",
}  # fmt: skip
# float16 has no C type: generated C never sees it (see ``has_ctype``); such nodes run
# their numpy ``perform`` under the "c|py" linker.


def ctype(dtype: str) -> str:
    return C_TYPES[dtype]


def has_ctype(dtype: object) -> bool:
    """Whether generated C can hold a value of ``dtype`` (every dtype but float16)."""
    return dtype in C_TYPES


@functools.lru_cache(maxsize=4096)
def upcast(*dtypes: str) -> str:
    """numpy 2 result dtype of mixing ``dtypes`` (cached: graph building calls it per node)."""
    return str(np.result_type(*[np.dtype(d) for d in dtypes]))


def _widen(dt: np.dtype, in_dtypes: tuple[str, ...]) -> str:
    """numpy's float16 result of integer operands (exp of int8) becomes float32, as in
    Theano; a float16 operand keeps float16."""
    return "float32" if dt == np.float16 and "float16" not in in_dtypes else str(dt)


class ScalarType(Type):
    """A 0-d value of one dtype (the element type inside Elemwise and Composite)."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        self.dtype = str(np.dtype(dtype))

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        return np.asarray(value, dtype=self.dtype)[()]

    def __str__(self) -> str:
        return self.dtype


class ScalarVariable(Variable):
    __slots__ = ()


class ScalarConstant(Constant):
    __slots__ = ()


ScalarType.variable_type = ScalarVariable
ScalarType.constant_type = ScalarConstant


def as_scalar(x: Any) -> Variable:
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
    commutative: ClassVar[bool] = False
    float_only: ClassVar[bool] = False  # output is float even for integer inputs
    identity: ClassVar[float | None] = None
    # costs tens of instructions per element (polynomials, range reduction): fusion keeps
    # two dependent heavy functions in separate loops (graphc/opt/fusion.py: is_heavy)
    heavy: ClassVar[bool] = False
    # its gradient: "rule" (``grad_rule`` below, or per class in
    # graphc/tensor/elemwise_grad.py), "zero" (piecewise constant: floor, sign...) or
    # "undefined" (a bool or bit result: comparisons, logic)
    gradient: ClassVar[str] = "rule"
    # C: the C library function of a float-only Op (``cbrt`` -> cbrt / cbrtf), used when
    # graphc/scalar/c_code.py's table has no rule for the class; ``c_support`` is top-level
    # C (helper functions) its C expression calls, emitted once per module
    libm: ClassVar[str | None] = None
    c_support: ClassVar[str] = ""
    # printed between the operands in a Composite's name ("+" for add)
    infix: ClassVar[str | None] = None
    # floating-point operations per element, as a roofline counts executed ones (add, sub,
    # mul, div, sqrt, min, max 1; a variadic Op: per operand after the first; compares,
    # selects, casts and bit operations 0); None: not counted here (the vector math's cost
    # is its C implementation's, graphc/linker/c/vecmath.py: FLOPS)
    flops_per_element: ClassVar[float | None] = None
    # as the scalar Op of a reduction (CAReduce in graphc/tensor/math.py): numpy's
    # reduction, the name it prints as, whether it takes Theano's dtype / acc_dtype (sums
    # and products) and a fixed output dtype ("bool" for all / any); ``identity`` is the
    # value of an empty reduction (None: an empty axis is an error, as for max)
    reducer: ClassVar[Callable | None] = None
    reduce_name: ClassVar[str | None] = None
    reduce_accumulates: ClassVar[bool] = False
    reduce_dtype: ClassVar[str | None] = None

    @property
    def name(self) -> str:
        return type(self).__name__.lower()

    def __str__(self) -> str:
        return self.name

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (_ufunc_dtype(self.ufunc, tuple(in_dtypes)),)

    def impl(self, *args: Any) -> Any:
        """The numpy implementation over arrays (broadcasting as numpy does)."""
        if self.ufunc is None:
            raise NotImplementedError(f"{type(self).__name__} has no ufunc: define impl")
        return self.ufunc(*args)

    def evaluate(self, out_dtype: str, *args: Any) -> Any:
        """``impl`` computed in the declared output dtype, as the C code does: a float-only
        Op casts integer and bool operands to its float output first (numpy alone would
        compute ``exp`` of int8 in float16 and overflow)."""
        if self.float_only and out_dtype in FLOAT_DTYPES:
            args = tuple(_as_float(a, out_dtype) for a in args)
        return self.impl(*args)

    def c_code(self, names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str | None:
        """One C expression of an output element from the operand expressions ``names``,
        or None (no C for these dtypes): by default the ``libm`` function for float
        outputs. graphc/scalar/c_code.py's table, when it has a rule for the class, wins."""
        if self.libm is None or out_dtype not in FLOAT_DTYPES or not has_ctype(out_dtype):
            return None
        ct = ctype(out_dtype)
        fn = self.libm + "f" if out_dtype == "float32" else self.libm
        return f"{fn}(" + ", ".join(f"({ct}){n}" for n in names) + ")"

    def grad_rule(self, inputs: list, output: Any, gz: Any) -> list | None:
        """The input gradients of this Op mapped over tensors, written with the tensor
        operators (``+ - * / **``) on ``inputs``, ``output`` (the Op of ``inputs``) and the
        output gradient ``gz``; None: the rule registered in graphc/tensor/elemwise_grad.py."""
        return None

    def make_node(self, *inputs: Any) -> Apply:
        args = [as_scalar(i) for i in inputs]
        if self.nin != -1 and len(args) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(args)}")
        dts = self.output_dtypes(*(i.type.dtype for i in args))
        return Apply(self, args, [ScalarType(d)() for d in dts])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        out = self.evaluate(node.outputs[0].type.dtype, *inputs)
        if not isinstance(out, tuple):
            out = (out,)
        for cell, val, var in zip(output_storage, out, node.outputs):
            cell[0] = np.asarray(val, dtype=var.type.dtype)[()]


def _as_float(a: Any, dtype: str) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(dtype) if a.dtype.kind in "biu" else a


@functools.lru_cache(maxsize=4096)
def _ufunc_dtype(ufunc: Callable | None, in_dtypes: tuple[str, ...]) -> str:
    if ufunc is None:
        raise NotImplementedError("a ScalarOp without a ufunc must define output_dtypes")
    with np.errstate(all="ignore"):
        args = [np.ones((), dtype=d) for d in in_dtypes]
        out = ufunc(*args)
    return _widen(np.asarray(out).dtype, in_dtypes)


def _float_out(*in_dtypes: str) -> str:
    dt = upcast(*in_dtypes)
    if dt in FLOAT_DTYPES:
        return dt
    return "float32" if np.dtype(dt).itemsize <= 2 else "float64"


# ---------------------------------------------------------------- the element functions
# One class per function, one instance each (the Op is stateless, so all instances are equal).
# A class's lowercased name is the Op's ``name`` (``True_div`` -> "true_div"). C expressions
# are the class's ``libm`` function or its rule in ``graphc/scalar/c_code.py`` (``code_for_op``).


class UnaryScalarOp(ScalarOp):
    nin = 1


class BinaryScalarOp(ScalarOp):
    nin = 2


class CommutativeBinaryScalarOp(BinaryScalarOp):
    commutative = True


class VariadicScalarOp(ScalarOp):
    """``ufunc`` folded over any number of inputs (add and mul: canonicalization flattens
    chains into one node); the output dtype is the inputs' common dtype."""

    nin = -1
    commutative = True

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (upcast(*in_dtypes),)

    def impl(self, *args: np.ndarray) -> np.ndarray:
        assert self.ufunc is not None
        return functools.reduce(self.ufunc, args)


class FloatUnaryOp(UnaryScalarOp):
    """A transcendental function: float output, integer operands cast to it first."""

    float_only = True
    heavy = True


class FloatOutUnaryOp(FloatUnaryOp):
    """A float-only function without a ufunc: ``impl`` computes in ``_float_out``."""

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (_float_out(*in_dtypes),)


# Arithmetic


class Add(VariadicScalarOp):
    flops_per_element = 1
    ufunc = np.add
    identity = 0
    infix = "+"
    reducer = staticmethod(np.sum)
    reduce_name = "Sum"
    reduce_accumulates = True


class Mul(VariadicScalarOp):
    flops_per_element = 1
    ufunc = np.multiply
    identity = 1
    infix = "*"
    reducer = staticmethod(np.prod)
    reduce_name = "Prod"
    reduce_accumulates = True


class Sub(BinaryScalarOp):
    flops_per_element = 1
    ufunc = np.subtract
    infix = "-"


class True_div(BinaryScalarOp):  # the lowercased class name is the Op's name
    flops_per_element = 1
    ufunc = np.true_divide
    float_only = True
    infix = "/"


class Int_div(BinaryScalarOp):
    ufunc = np.floor_divide
    gradient = "zero"


class Mod(BinaryScalarOp):
    ufunc = np.remainder


class Pow(BinaryScalarOp):
    ufunc = np.power
    heavy = True


class Neg(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.negative


class Abs(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.absolute


class Sgn(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.sign
    gradient = "zero"


class Maximum(CommutativeBinaryScalarOp):
    flops_per_element = 1
    ufunc = np.maximum
    reducer = staticmethod(np.max)
    reduce_name = "Max"


class Minimum(CommutativeBinaryScalarOp):
    flops_per_element = 1
    ufunc = np.minimum
    reducer = staticmethod(np.min)
    reduce_name = "Min"


add, mul, sub, true_div, int_div = Add(), Mul(), Sub(), True_div(), Int_div()
mod, pow, neg, abs_, sgn = Mod(), Pow(), Neg(), Abs(), Sgn()
maximum, minimum = Maximum(), Minimum()

# Transcendental


class Exp(FloatUnaryOp):
    ufunc = np.exp


class Exp2(FloatUnaryOp):
    ufunc = np.exp2
    libm = "exp2"


class Expm1(FloatUnaryOp):
    ufunc = np.expm1


class Log(FloatUnaryOp):
    ufunc = np.log


class Log2(FloatUnaryOp):
    ufunc = np.log2
    libm = "log2"


class Log10(FloatUnaryOp):
    ufunc = np.log10
    libm = "log10"


class Log1p(FloatUnaryOp):
    ufunc = np.log1p


class Sqrt(FloatUnaryOp):
    flops_per_element = 1
    ufunc = np.sqrt
    libm = "sqrt"
    heavy = False  # one instruction


class Cbrt(FloatUnaryOp):
    """The cube root (negative for a negative operand)."""

    ufunc = np.cbrt
    libm = "cbrt"

    def grad_rule(self, inputs: list, output: Any, gz: Any) -> list:
        return [gz / (3 * output**2)]


class Sin(FloatUnaryOp):
    ufunc = np.sin
    libm = "sin"


class Cos(FloatUnaryOp):
    ufunc = np.cos
    libm = "cos"


class Tan(FloatUnaryOp):
    ufunc = np.tan
    libm = "tan"


class Arcsin(FloatUnaryOp):
    ufunc = np.arcsin
    libm = "asin"


class Arccos(FloatUnaryOp):
    ufunc = np.arccos
    libm = "acos"


class Arctan(FloatUnaryOp):
    ufunc = np.arctan
    libm = "atan"


class Sinh(FloatUnaryOp):
    ufunc = np.sinh
    libm = "sinh"


class Cosh(FloatUnaryOp):
    ufunc = np.cosh
    libm = "cosh"


class Tanh(FloatUnaryOp):
    ufunc = np.tanh


class Arctan2(BinaryScalarOp):
    ufunc = np.arctan2
    float_only = True


class Sqr(UnaryScalarOp):
    flops_per_element = 1
    ufunc = np.square


class Sigmoid(FloatOutUnaryOp):
    def impl(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        out_dt = _float_out(str(x.dtype))
        x = x.astype(out_dt, copy=False)
        with np.errstate(over="ignore"):
            e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(out_dt, copy=False)


class Softplus(FloatOutUnaryOp):
    def impl(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        out_dt = _float_out(str(x.dtype))
        x = x.astype(out_dt, copy=False)
        return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(out_dt, copy=False)


class Erf(FloatOutUnaryOp):
    def impl(self, x: np.ndarray) -> np.ndarray:
        from scipy.special import erf as sp_erf  # scipy loads only when erf is evaluated

        x = np.asarray(x)
        return sp_erf(x).astype(_float_out(str(x.dtype)), copy=False)


class Floor(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.floor
    gradient = "zero"


class Ceil(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.ceil
    gradient = "zero"


class Round_half_to_even(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.rint
    gradient = "zero"


class Clip(ScalarOp):
    flops_per_element = 2
    nin = 3

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (upcast(*in_dtypes),)

    def impl(self, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(x, lo), hi)


exp, exp2, expm1, log, log2 = Exp(), Exp2(), Expm1(), Log(), Log2()
log10, log1p, sqrt, sin, cos = Log10(), Log1p(), Sqrt(), Sin(), Cos()
tan, arcsin, arccos, arctan, sinh = Tan(), Arcsin(), Arccos(), Arctan(), Sinh()
cosh, tanh, arctan2, sqr, sigmoid = Cosh(), Tanh(), Arctan2(), Sqr(), Sigmoid()
cbrt = Cbrt()
softplus, erf, floor, ceil, round_half_to_even = (
    Softplus(),
    Erf(),
    Floor(),
    Ceil(),
    Round_half_to_even(),
)
clip = Clip()

# Comparisons and logic (bool output)


class Eq(CommutativeBinaryScalarOp):
    flops_per_element = 0
    ufunc = np.equal
    gradient = "undefined"


class Neq(CommutativeBinaryScalarOp):
    flops_per_element = 0
    ufunc = np.not_equal
    gradient = "undefined"


class Lt(BinaryScalarOp):
    flops_per_element = 0
    ufunc = np.less
    gradient = "undefined"


class Gt(BinaryScalarOp):
    flops_per_element = 0
    ufunc = np.greater
    gradient = "undefined"


class Le(BinaryScalarOp):
    flops_per_element = 0
    ufunc = np.less_equal
    gradient = "undefined"


class Ge(BinaryScalarOp):
    flops_per_element = 0
    ufunc = np.greater_equal
    gradient = "undefined"


class And(CommutativeBinaryScalarOp):
    flops_per_element = 0
    ufunc = np.bitwise_and
    gradient = "undefined"
    identity = 1
    reducer = staticmethod(np.all)
    reduce_name = "All"
    reduce_dtype = "bool"


class Or(CommutativeBinaryScalarOp):
    flops_per_element = 0
    ufunc = np.bitwise_or
    gradient = "undefined"
    identity = 0
    reducer = staticmethod(np.any)
    reduce_name = "Any"
    reduce_dtype = "bool"


class Xor(CommutativeBinaryScalarOp):
    flops_per_element = 0
    ufunc = np.bitwise_xor
    gradient = "undefined"


class Invert(UnaryScalarOp):
    flops_per_element = 0
    ufunc = np.invert
    gradient = "undefined"


class Switch(ScalarOp):
    """``switch(c, a, b)``: ``a`` where ``c`` is true, else ``b``."""

    flops_per_element = 0

    nin = 3

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (upcast(in_dtypes[1], in_dtypes[2]),)

    def impl(self, c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(c, a, b)


class Second(BinaryScalarOp):
    """``second(a, b)``: ``b`` broadcast to the shape of both."""

    flops_per_element = 0

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (in_dtypes[1],)

    def impl(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.broadcast_to(b, np.broadcast_shapes(np.shape(a), np.shape(b)))


class Identity(UnaryScalarOp):
    flops_per_element = 0

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (in_dtypes[0],)

    def impl(self, a: np.ndarray) -> np.ndarray:
        return np.array(a, copy=True)


eq, neq, lt, gt, le, ge = Eq(), Neq(), Lt(), Gt(), Le(), Ge()
and_, or_, xor, invert = And(), Or(), Xor(), Invert()
switch, second, identity = Switch(), Second(), Identity()

_REGISTRY: dict[str, ScalarOp] = {
    op.name: op
    for op in (
        add, mul, sub, true_div, int_div, mod, pow, neg, abs_, sgn, maximum, minimum,
        exp, exp2, expm1, log, log2, log10, log1p, sqrt, sin, cos, tan, arcsin, arccos,
        arctan, sinh, cosh, tanh, arctan2, sqr, sigmoid, softplus, erf, floor, ceil,
        round_half_to_even, clip, cbrt,
        eq, neq, lt, gt, le, ge, and_, or_, xor, invert, switch, second, identity,
    )
}  # fmt: skip


class Cast(ScalarOp):
    """Convert to ``dtype`` (numpy ``astype`` semantics)."""

    flops_per_element = 0

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype: str) -> None:
        self.dtype = str(np.dtype(dtype))

    @property
    def name(self) -> str:
        return f"convert_to_{self.dtype}"

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (self.dtype,)

    def impl(self, x: Any) -> np.ndarray:
        return np.asarray(x).astype(self.dtype)


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

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
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

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return tuple(o.type.dtype for o in self.outputs)

    @functools.cached_property
    def output_deps(self) -> tuple[tuple[int, ...], ...]:
        """Per output, the (sorted) indices of the inputs it depends on: under numpy
        broadcasting an output has the broadcast shape of these inputs only."""
        pos = {v: k for k, v in enumerate(self.inputs)}
        deps: dict[Variable, frozenset[int]] = {v: frozenset((k,)) for v, k in pos.items()}
        for node in self.nodes:
            d = frozenset().union(*(deps.get(i, frozenset()) for i in node.inputs))
            for o in node.outputs:
                deps[o] = d
        return tuple(tuple(sorted(deps.get(o, ()))) for o in self.outputs)

    def impl(self, *args: Any) -> Any:
        values: dict[Variable, object] = dict(zip(self.inputs, args))
        for node in self.nodes:
            ins = [values[i] if i in values else i.data for i in node.inputs]
            dt = node.outputs[0].type.dtype
            with np.errstate(all="ignore"):
                out = node.op.evaluate(dt, *ins)
            values[node.outputs[0]] = np.asarray(out).astype(dt, copy=False)
        outs = tuple(values[o] if o in values else o.data for o in self.outputs)
        return outs if len(outs) > 1 else outs[0]


def _composite_signature(
    inputs: Sequence[Variable], outputs: Sequence[Variable], nodes: Sequence[Apply]
) -> tuple:
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


NAME_LIMIT = 240  # longer Composite names are cut and tagged with a digest


def _composite_name(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    nodes: Sequence[Apply],
    signature: tuple,
) -> str:
    """``Composite{<expression>}``, built bottom-up (no recursion: fused chains can be
    thousands of nodes deep); an over-long expression is cut and tagged with a digest of
    the signature so different Composites never print alike."""
    expr: dict[Variable, str] = {v: f"i{k}" for k, v in enumerate(inputs)}
    for node in nodes:
        args = [expr[i] if i in expr else str(i) for i in node.inputs]
        sym = node.op.infix
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
