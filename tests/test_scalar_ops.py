"""The scalar Op table: declared classes, one C rule per Op, and the extension point."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.scalar import basic as ps
from graphc.scalar.c_code import c_expr, code_for_op, composite_c_body, register_c_expr


def test_every_op_is_a_declared_class_named_after_it():
    for name, op in ps.all_scalar_ops().items():
        cls = type(op)
        assert op.name == name == cls.__name__.lower()
        assert getattr(ps, cls.__name__) is cls
        # a class made with type() has no source to find
        assert inspect.getsource(cls).startswith(f"class {cls.__name__}(")


def _has_c(op: ps.ScalarOp) -> bool:
    """Whether ``op`` has a C expression for float64 or for int64 operands."""
    nin = 2 if op.nin == -1 else op.nin
    for dt in ("float64", "int64"):
        ins = [dt] * nin
        try:
            out = op.output_dtypes(*ins)[0]
        except TypeError:  # bitwise Ops take no floats
            continue
        if c_expr(op, [f"x{k}" for k in range(nin)], ins, out) is not None:
            return True
    return False


def test_every_op_has_c_code():
    missing = [n for n, op in ps.all_scalar_ops().items() if not _has_c(op)]
    assert missing == []
    # a libm function declared on the class: cbrt / cbrtf, with no table entry
    assert ps.Cbrt not in code_for_op
    assert c_expr(ps.cbrt, ["a"], ["float32"], "float32") == "cbrtf((npy_float32)a)"
    assert c_expr(ps.cbrt, ["a"], ["int8"], "float32") == "cbrtf((npy_float32)a)"
    assert c_expr(ps.cast("int8"), ["x"], ["float64"], "int8") == "((npy_int8)x)"
    assert c_expr(ps.true_div, ["a", "b"], ["float32", "float32"], "float32") == (
        "(((npy_float32)a) / ((npy_float32)b))"
    )
    assert c_expr(ps.arcsin, ["a"], ["float32"], "float32") == "asinf((npy_float32)a)"
    assert c_expr(ps.pow, ["a", "b"], ["int32", "int32"], "int32") is None


def test_an_op_without_a_rule_has_no_c_and_neither_has_its_composite():
    class Cube(ps.UnaryScalarOp):
        def output_dtypes(self, *in_dtypes):
            return (in_dtypes[0],)

        def impl(self, x):
            return np.asarray(x) ** 3

    x = ps.ScalarType("float64")()
    comp = ps.Composite([x], [ps.exp(Cube()(x))])
    assert c_expr(Cube(), ["a"], ["float64"], "float64") is None
    assert composite_c_body(comp, ["a"]) is None
    assert c_expr(comp, ["a"], ["float64"], "float64") is None

    rule = register_c_expr(Cube)(
        lambda names, in_dtypes, out: f"({names[0]} * {names[0]} * {names[0]})"
    )
    try:
        assert composite_c_body(comp, ["a"]) == (
            [
                "npy_float64 t0 = (a * a * a);",
                "npy_float64 t1 = gc_vm_exp_npy_float64((npy_float64)t0);",
            ],
            ["t1"],
        )
    finally:
        assert code_for_op.get(Cube) is rule
        del code_for_op[Cube]


def test_rule_tables_hold_one_rule_per_class_and_inherit_along_the_mro():
    from graphc.graph.rules import RuleTable

    class Base:
        pass

    class Child(Base):
        pass

    table: RuleTable[str] = RuleTable("test")
    table.add(Base, "base rule")
    assert table.get(Child()) == "base rule" and table[Child] == "base rule"
    assert Base in table and Child not in table
    with pytest.raises(ValueError, match="already registered for Base"):
        table.add(Base, "another")
    del table[Base]
    with pytest.raises(NotImplementedError, match="no test rule is registered for Child"):
        table[Child()]


def test_heavy_and_gradient_kind_are_facts_of_the_scalar_op_class():
    from graphc.opt.fusion import is_heavy

    x = T.dvector("x")
    assert is_heavy(T.exp(x).owner) and is_heavy(T.tanh(x).owner)
    assert not is_heavy(T.sqrt(x).owner) and not is_heavy((x + 1).owner)
    # every scalar Op whose gradient comes from a rule has one registered
    from graphc.tensor.elemwise_grad import rule_of

    ruled = [n for n, op in ps.all_scalar_ops().items()
             if op.gradient == "rule" and not isinstance(op, (ps.Cast, ps.Composite))]  # fmt: skip
    assert [n for n in ruled if rule_of(ps.all_scalar_ops()[n]) is None] == []
    xs = np.array([0.3, -1.7])
    zero = T.sum(T.floor(x)) + T.sum(T.sgn(x))  # piecewise constant: zero gradient
    undefined = T.sum(T.switch(T.lt(x, 0), -x, x))  # no gradient flows into the comparison
    f = graphc.function([x], [graphc.grad(zero + T.sum(x), x), graphc.grad(undefined, x)],
                        mode=graphc.Mode(linker="py", optimizer=None))  # fmt: skip
    g_zero, g_abs = f(xs)
    np.testing.assert_array_equal(g_zero, [1.0, 1.0])
    np.testing.assert_array_equal(g_abs, np.sign(xs))


def test_every_scalar_op_class_has_its_instance_in_the_registry():
    bases = {
        ps.ScalarOp, ps.UnaryScalarOp, ps.BinaryScalarOp, ps.CommutativeBinaryScalarOp,
        ps.VariadicScalarOp, ps.FloatUnaryOp, ps.FloatOutUnaryOp, ps.Cast, ps.Composite,
    }  # fmt: skip
    declared = {
        cls
        for cls in vars(ps).values()
        if isinstance(cls, type) and issubclass(cls, ps.ScalarOp) and cls not in bases
    }
    assert ps.Cbrt in declared
    assert declared == {type(op) for op in ps.all_scalar_ops().values()}
    # and each has its Elemwise and its tensor function
    for name, op in ps.all_scalar_ops().items():
        assert T.elemwise_op(name).scalar_op is op
    assert T.cbrt(T.dvector()).owner.op.scalar_op is ps.cbrt
