"""The recipe of docs/architecture.md ("Adding an element-wise Op") holds: one ScalarOp class,
defined here and registered nowhere, gets numpy and C loops, a gradient, an R_op, fusion
with other element-wise Ops and printing."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import clinker
from graphc.printing import debugprint, pprint
from graphc.scalar import basic as ps
from graphc.scalar.c_code import c_expr, code_for_op, support_for_op
from graphc.tensor.elemwise_grad import _RULES
from graphc.testing import verify_grad

needs_c = pytest.mark.skipif(not clinker.available(), reason="no C compiler")
PY = graphc.Mode(linker="py", optimizer=None)
CPY = graphc.Mode(linker="c|py", optimizer=None)


class Cubeplus(ps.UnaryScalarOp):
    """``x ** 3 + x``: its C calls a helper of its own, and its gradient is ``3 x^2 + 1``."""

    c_support = "".join(
        f"static inline {t} gc_cubeplus_{t}({t} x) {{ return x * x * x + x; }}\n"
        for t in ("npy_float32", "npy_float64")
    )

    def output_dtypes(self, *in_dtypes: str) -> tuple[str, ...]:
        return (in_dtypes[0] if in_dtypes[0] in ps.FLOAT_DTYPES else "float64",)

    def impl(self, x):
        x = np.asarray(x, dtype=self.output_dtypes(str(np.asarray(x).dtype))[0])
        return x * x * x + x

    def c_code(self, names: Sequence[str], in_dtypes: Sequence[str], out_dtype: str) -> str:
        ct = ps.ctype(out_dtype)
        return f"gc_cubeplus_{ct}(({ct}){names[0]})"

    def grad_rule(self, inputs, output, gz):
        (x,) = inputs
        return [gz * (3 * x * x + 1)]


cubeplus_op = Cubeplus()


def cubeplus(x):
    return T.Elemwise(cubeplus_op)(x)


def _want(x: np.ndarray) -> np.ndarray:
    return x**3 + x


def test_nothing_is_registered_for_the_class():
    assert Cubeplus not in code_for_op and Cubeplus not in support_for_op
    assert _RULES.get(cubeplus_op) is None
    assert "cubeplus" not in ps.all_scalar_ops()
    assert c_expr(cubeplus_op, ["a"], ["float32"], "float32") == (
        "gc_cubeplus_npy_float32((npy_float32)a)"
    )


@pytest.mark.parametrize("linker", ["py", "c|py"])
def test_values_in_numpy_and_in_c(linker):
    if linker == "c|py" and not clinker.available():
        pytest.skip("no C compiler")
    x = T.dmatrix("x")
    f = graphc.function([x], cubeplus(x), mode=graphc.Mode(linker=linker, optimizer=None))
    assert all(i.is_c for i in f.linked.impls) == (linker == "c|py")
    xs = np.linspace(-2, 2, 12).reshape(3, 4)
    np.testing.assert_allclose(f(xs), _want(xs), rtol=1e-15)


def test_gradient_and_r_op():
    verify_grad(cubeplus, [np.linspace(-2, 2, 6)])
    x, v = T.dvector("x"), T.dvector("v")
    g = graphc.grad(cubeplus(x).sum(), x)
    r = T.Rop(cubeplus(x), x, v)
    f = graphc.function([x, v], [g, r], mode=PY)
    xs, vs = np.array([-1.5, 0.0, 2.0]), np.array([1.0, -2.0, 0.5])
    gv, rv = f(xs, vs)
    np.testing.assert_allclose(gv, 3 * xs**2 + 1)
    np.testing.assert_allclose(rv, (3 * xs**2 + 1) * vs)


@needs_c
def test_fused_with_other_elementwise_ops_into_one_c_loop():
    x = T.dvector("x")
    f = graphc.function([x], cubeplus(x * 2.0) - T.sqrt(T.abs(x)))
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 1
    comp = nodes[0].op.scalar_op
    assert isinstance(comp, ps.Composite)
    assert cubeplus_op in [n.op for n in comp.nodes]
    assert "cubeplus(" in comp.name
    assert all(i.is_c for i in f.linked.impls)
    xs = np.array([-1.5, 0.0, 0.25, 2.0])
    np.testing.assert_allclose(f(xs), _want(xs * 2.0) - np.sqrt(np.abs(xs)), rtol=1e-15)


def test_printing():
    x = T.dvector("x")
    y = cubeplus(x)
    assert pprint(y) == "cubeplus(x)"
    assert "Elemwise{cubeplus,no_inplace}" in debugprint(y, file="str")
