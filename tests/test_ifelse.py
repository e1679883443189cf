"""ifelse: values, the lazy-thunk protocol, errors and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from graph_checks import SameTypeOp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.gradient import grad, verify_grad
from graphc.graph.evaluate import evaluate
from graphc.ifelse import IfElse, ifelse
from graphc.tensor.basic import shape_tuple
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)


class Boom(SameTypeOp):
    """Fails when computed: marks inputs that must never be requested."""

    def perform(self, node, inputs, output_storage):
        raise RuntimeError("the untaken branch was computed")


def _drive(node, values: dict):
    """Run ``node`` as a VM does: compute only the inputs its lazy thunk asks for."""
    n = len(node.inputs)
    computed, inputs, requests = [False] * n, [None] * n, []
    cells = [[None] for _ in node.outputs]
    for _ in range(n + 2):
        need = node.op.lazy_perform(node, computed, inputs, cells)
        if not need:
            return [c[0] for c in cells], requests
        requests.append(tuple(need))
        for i in need:
            assert not computed[i], f"input {i} requested twice"
            inputs[i] = evaluate([node.inputs[i]], values)[0]
            computed[i] = True
    raise AssertionError("lazy thunk never finished")


def _var(value, name):
    return TensorType(str(value.dtype), [1 if s == 1 else None for s in value.shape])(name)


@SETTINGS
@given(
    cond=st.sampled_from([True, False, 0, 3, 0.0, -1.5]),
    n_outs=st.integers(1, 3),
    dtype=st.sampled_from(["float16", "float32", "float64", "int32", "bool"]),
    shape=st.lists(st.integers(0, 3), max_size=3).map(tuple),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_values_and_lazy_protocol(cond, n_outs, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    cval = np.asarray(cond)
    c = TensorType(str(cval.dtype), ())("c")
    tv = [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(n_outs)]
    ev = [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(n_outs)]
    ts = [_var(v, f"t{k}") for k, v in enumerate(tv)]
    es = [_var(v, f"e{k}") for k, v in enumerate(ev)]
    outs = ifelse(c, ts, es)
    assert isinstance(outs, list) and len(outs) == n_outs
    node = outs[0].owner
    values = {c: cval, **dict(zip(ts, tv)), **dict(zip(es, ev))}
    got, requests = _drive(node, values)
    want = tv if cond else ev
    taken = range(1, n_outs + 1) if cond else range(n_outs + 1, 2 * n_outs + 1)
    assert requests[0] == (0,)  # the condition first
    assert sorted(i for r in requests[1:] for i in r) == list(taken)  # then only that branch
    for g, w, src in zip(got, want, want):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        assert not np.shares_memory(g, src) or g.size == 0
    # the plain perform (reference evaluator) agrees
    for g, w in zip(evaluate(outs, values), want):
        np.testing.assert_array_equal(g, w)
    # infer_shape
    shapes = [shape_tuple(i) for i in node.inputs]
    for inferred, w in zip(node.op.infer_shape(None, node, shapes), want):
        assert tuple(int(np.asarray(evaluate([s], values)[0])) for s in inferred) == w.shape


def test_untaken_branch_inputs_are_never_requested():
    c, a = T.bscalar("c"), T.dvector("a")
    out = ifelse(c, a * 2, Boom()(a))
    got, requests = _drive(out.owner, {c: np.int8(1), a: np.ones(2)})
    np.testing.assert_array_equal(got[0], [2.0, 2.0])
    assert requests == [(0,), (1,)]
    with pytest.raises(RuntimeError, match="untaken"):
        _drive(out.owner, {c: np.int8(0), a: np.ones(2)})


def test_compiled_function_skips_the_untaken_branch():
    c, a = T.bscalar("c"), T.dvector("a")
    f = graphc.function([c, a], ifelse(c, a * 2, Boom()(a)))
    np.testing.assert_array_equal(f(1, np.ones(3)), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="untaken"):
        f(0, np.ones(3))


def test_single_variable_structure_and_static_shapes():
    c = T.bscalar("c")
    a = TensorType("float64", (2, 3))("a")
    b = TensorType("float64", (2, None))("b")
    out = ifelse(c, a, b, name="pick")
    assert not isinstance(out, list)
    assert out.type == TensorType("float64", (2, None))
    assert str(out.owner.op) == "if{pick}"
    assert out.owner.op == IfElse(1, "pick")
    assert ifelse(c, 1.0, 2.0).eval({c: np.int8(0)}) == 2.0


def test_type_errors_name_both_types():
    c = T.bscalar("c")
    with pytest.raises(TypeError, match=r"Vector\(float64\).*Matrix\(float64\)"):
        ifelse(c, T.dvector("a"), T.dmatrix("b"))
    with pytest.raises(TypeError, match=r"Vector\(float64\).*Vector\(float32\)"):
        ifelse(c, T.dvector("a"), T.fvector("b"))
    with pytest.raises(TypeError, match="2 values"):
        ifelse(c, [T.dvector(), T.dvector()], [T.dvector()])
    with pytest.raises(TypeError, match="scalar"):
        ifelse(T.bvector("v"), T.dvector(), T.dvector())


@pytest.mark.parametrize("cond", [0, 1])
def test_gradient(cond):
    rng = np.random.default_rng(cond)
    pts = [np.int8(cond), rng.random((2, 3)), rng.random((2, 3)) + 0.5]
    verify_grad(lambda c, a, b: ifelse(c, T.tanh(a) * b, T.log(b) * a), pts, rng=rng)

    def two(c, a, b):
        o1, o2 = ifelse(c, [a * 2.0, b], [b, T.exp(a)])
        return o1 * o2

    verify_grad(two, pts, rng=rng)


def test_gradient_is_zero_for_the_untaken_branch():
    c, a, b = T.bscalar("c"), T.dvector("a"), T.dvector("b")
    ga, gb = grad(T.sum(ifelse(c, a * 3.0, b)), [a, b])
    vals = {c: np.int8(1), a: np.ones(2), b: np.ones(2)}
    np.testing.assert_array_equal(ga.eval(vals), [3.0, 3.0])
    np.testing.assert_array_equal(gb.eval(vals), [0.0, 0.0])
    vals[c] = np.int8(0)
    np.testing.assert_array_equal(ga.eval(vals), [0.0, 0.0])
    np.testing.assert_array_equal(gb.eval(vals), [1.0, 1.0])
