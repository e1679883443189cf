"""The scalar Op table: declared classes, one C rule per Op, and the extension point."""

from __future__ import annotations

import inspect

import numpy as np

from graphc.scalar import basic as ps
from graphc.scalar.c_code import c_expr, code_for_op, composite_c_body, register_c_expr


def test_every_op_is_a_declared_class_named_after_it():
    for name, op in ps.all_scalar_ops().items():
        cls = type(op)
        assert op.name == name == cls.__name__.lower()
        assert getattr(ps, cls.__name__) is cls
        # a class made with type() has no source to find
        assert inspect.getsource(cls).startswith(f"class {cls.__name__}(")


def test_every_op_has_a_c_rule():
    missing = [n for n, op in ps.all_scalar_ops().items() if type(op) not in code_for_op]
    assert missing == []
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
        assert code_for_op.pop(Cube) is rule
