"""``Rop`` / ``Lop`` against finite differences: ``Rop(f, x, v)`` is the directional derivative
``J v`` and ``Lop(f, x, u)`` its transpose ``u J``, for every Op with an R_op rule."""

from __future__ import annotations

import numpy as np
import pytest
from graph_checks import SameTypeOp
from hypothesis import given, settings
from hypothesis import strategies as st
from rop_cases import CASES

import graphc
import graphc.tensor as T
from graphc.gradient import DisconnectedInputError, Lop, Rop, hessian, jacobian
from graphc.graph.basic import ancestors
from graphc.graph.rop import registered_rop_classes
from graphc.tensor.type import TensorType

PY = graphc.Mode(linker="py", optimizer=None)
C = graphc.Mode(linker="c|py", optimizer="fast_run")


def _input(value, name):
    value = np.asarray(value)
    return TensorType(str(value.dtype), [1 if s == 1 else None for s in value.shape])(name)


def _outputs(out) -> list:
    return list(out) if isinstance(out, list | tuple) else [out]


def check_rop(build, points, rng, mode=PY, atol=1e-6, rtol=1e-5, eps=1e-6):
    """Rop against central differences along random tangents, and the adjoint identity
    ``<u, Rop(v)> == <Lop(u), v>`` against Lop."""
    points = [np.asarray(p) for p in points]
    inputs = [_input(p, f"in{k}") for k, p in enumerate(points)]
    outs = _outputs(build(*inputs))
    fidx = [k for k, p in enumerate(points) if p.dtype.kind == "f"]
    wrt = [inputs[k] for k in fidx]
    tangents = [rng.standard_normal(points[k].shape) for k in fidx]
    vs = [_input(t, f"v{k}") for k, t in zip(fidx, tangents)]
    rs = Rop(outs, wrt, vs)
    assert isinstance(rs, list) and len(rs) == len(outs)
    f = graphc.function(inputs, outs, mode=PY, on_unused_input="ignore")
    f_r = graphc.function(inputs + vs, rs, mode=mode, on_unused_input="ignore")
    got = f_r(*points, *tangents)

    def shifted(sign):
        pts = list(points)
        for k, t in zip(fidx, tangents):
            pts[k] = points[k] + sign * eps * t
        return f(*pts)

    plus, minus = shifted(1), shifted(-1)
    for o, g, p, m in zip(outs, got, plus, minus):
        assert g.shape == p.shape
        if o.dtype not in ("float32", "float64"):
            continue
        numeric = (np.asarray(p, "float64") - np.asarray(m, "float64")) / (2 * eps)
        np.testing.assert_allclose(g, numeric, rtol=rtol, atol=atol * (1 + np.abs(numeric).max(
            initial=0)))  # fmt: skip

    float_outs = [(o, g) for o, g in zip(outs, got) if o.dtype in ("float32", "float64")]
    us_vals = [rng.standard_normal(g.shape) for _, g in float_outs]
    us = [_input(u, f"u{k}") for k, u in enumerate(us_vals)]
    ls = Lop([o for o, _ in float_outs], wrt, us, disconnected_inputs="ignore")
    f_l = graphc.function(inputs + us, ls, mode=PY, on_unused_input="ignore")
    lvals = f_l(*points, *us_vals)
    left = sum(float(np.sum(u * g)) for u, (_, g) in zip(us_vals, float_outs))
    right = sum(float(np.sum(lv * t)) for lv, t in zip(lvals, tangents))
    tol = max(1e-7, atol if atol > 1e-6 else 0)  # float32 cases are exact to float32 only
    assert left == pytest.approx(right, rel=tol, abs=tol)
    return got


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=8, deadline=None)
@given(n=st.integers(2, 4), m=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_rop_matches_finite_differences(name, n, m, seed):
    build, points, *opts = CASES[name]
    rng = np.random.default_rng(seed)
    check_rop(build, points(rng, n, m), rng, **(opts[0] if opts else {}))


@pytest.mark.parametrize("name", ["mlp", "conv2d", "gemm", "softmax", "advanced_inc_subtensor1"])
def test_rop_under_c_and_python_linkers_agree(name):
    build, points, *_ = CASES[name]
    pts = points(np.random.default_rng(1), 3, 4)
    got_c = check_rop(build, pts, np.random.default_rng(2), mode=C)
    got_py = check_rop(build, pts, np.random.default_rng(2), mode=PY)
    for a, b in zip(got_c, got_py):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_every_rule_is_exercised_by_a_case():
    rng = np.random.default_rng(0)
    seen: set[type] = set()
    for build, points, *_ in CASES.values():
        inputs = [_input(p, "x") for p in points(rng, 3, 3)]
        for v in ancestors(_outputs(build(*inputs))):
            if v.owner is not None:
                seen.add(type(v.owner.op))
    missing = [c.__name__ for c in registered_rop_classes() if c not in seen]
    assert not missing, f"R_op rules without a test case: {missing}"


def test_theano_names_and_signatures():
    assert T.Rop is Rop and T.Lop is Lop and graphc.Rop is Rop and graphc.Lop is Lop
    x, v = T.dvector("x"), T.dvector("v")
    y = x**2
    assert isinstance(Rop(y, x, v), T.TensorVariable)  # single in, single out
    assert isinstance(Rop([y], [x], [v]), list) and isinstance(Rop((y,), x, v), tuple)
    assert isinstance(Lop(y, x, v), T.TensorVariable)
    assert isinstance(Lop(y, [x], [v]), list) and isinstance(Lop(y, (x,), v), tuple)
    xv, vv = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    f = graphc.function([x, v], [Rop(y, x, v), Lop(y, x, v)])
    r, lo = f(xv, vv)
    np.testing.assert_allclose(r, 2 * xv * vv)  # J = diag(2x): J v == v J
    np.testing.assert_allclose(lo, 2 * xv * vv)


def test_rop_holds_an_intermediate_wrt_fixed_and_broadcast_tangents_take_the_output_shape():
    x, v = T.dvector("x"), T.dvector("v")
    h = T.exp(x)
    y = h * x
    # with respect to h alone, x is held fixed: d(h x) = x dh
    r = Rop(y, h, v)
    xv, vv = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(r.eval({x: xv, v: vv}), xv * vv)
    # a row's tangent broadcast over a matrix output: the tangent has the output's shape
    row, m, vr = T.row("r", dtype="float64"), T.dmatrix("m"), T.row("vr", dtype="float64")
    out = Rop(row + m, row, vr)
    got = out.eval({row: np.ones((1, 2)), m: np.zeros((3, 2)), vr: np.array([[1.0, 2.0]])})
    np.testing.assert_allclose(got, np.tile([1.0, 2.0], (3, 1)))


def test_rop_of_a_wrt_output_is_its_eval_point_and_disconnected_outputs():
    x, z, v = T.dvector("x"), T.dvector("z"), T.dvector("v")
    assert Rop(x, x, v) is v
    with pytest.raises(DisconnectedInputError, match="does not depend"):
        Rop(z * 2, x, v)
    zero = Rop(z * 2, x, v, disconnected_outputs="ignore")
    np.testing.assert_array_equal(zero.eval({z: np.ones(3)}), np.zeros(3))
    assert Rop(z * 2, x, v, disconnected_outputs="ignore", return_disconnected="None") is None
    with pytest.warns(UserWarning, match="does not depend"):
        Rop(z * 2, x, v, disconnected_outputs="warn")
    with pytest.raises(ValueError, match="mismatched dimensionality"):
        Rop(x * 2, x, T.dmatrix("m"))
    # integer outputs have no tangent
    with pytest.raises(DisconnectedInputError):
        Rop(T.argmax(x), x, v)


class _NoGrad(SameTypeOp):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


class _GradThroughNoGrad(_NoGrad):
    def grad(self, inputs, gouts):
        return [_NoGrad()(gouts[0])]


def test_rop_without_rule_names_the_op():
    x, v = T.dvector("x"), T.dvector("v")
    with pytest.raises(NotImplementedError, match="_NoGrad.*neither an R_op rule nor a grad"):
        Rop(_NoGrad()(x), x, v)
    with pytest.raises(NotImplementedError, match="_GradThroughNoGrad.*cannot be differentiated"):
        Rop(_GradThroughNoGrad()(x), x, v)


def test_rop_of_a_fused_elemwise_names_it():
    from graphc.scalar import basic as ps
    from graphc.tensor.elemwise import Elemwise

    a = ps.ScalarType("float64")("a")
    fused = Elemwise(ps.Composite([a], [ps.mul(ps.add(a, a), a)]))
    x, v = T.dvector("x"), T.dvector("v")
    with pytest.raises(NotImplementedError, match=r"Elemwise\{Composite.*gradient of"):
        Rop(fused(x), x, v)


def test_an_op_r_op_method_takes_precedence():
    class Doubling(_NoGrad):
        def R_op(self, inputs, eval_points):
            return [eval_points[0] * 2]

    x, v = T.dvector("x"), T.dvector("v")
    r = Rop(Doubling()(x), x, v)
    np.testing.assert_allclose(r.eval({x: np.zeros(2), v: np.array([1.0, 2.0])}), [2.0, 4.0])


def test_a_tangent_reads_every_input_of_its_output_as_in_theano():
    """The derivative of x W along V is x V, without W; Theano's tutorial still compiles it
    with W among the inputs (its Rop kept W through zero tangents)."""
    w, big_v, x = T.dmatrix("W"), T.dmatrix("V"), T.dvector("x")
    y = T.dot(x, w)
    jv = Rop(y, w, big_v)
    assert w in ancestors([jv])
    f = graphc.function([w, big_v, x], jv)
    rng = np.random.default_rng(0)
    wv, vv, xv = rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), rng.standard_normal(3)
    np.testing.assert_allclose(f(wv, vv, xv), xv @ vv, rtol=1e-12)
    # a tangent that reads everything already is left alone
    z = T.nnet.softmax(y)
    assert Rop(z, w, big_v).owner.op.scalar_op.name == "mul"  # the softmax rule's product


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_rop_lop_agree_with_known_length_jacobian_and_hessian(n, seed):
    rng = np.random.default_rng(seed)
    x = TensorType("float64", (n,))("x")
    v, u = T.dvector("v"), T.dvector("u")
    a = rng.standard_normal((n, n))
    y = T.tanh(T.dot(T.constant(a), x)) * x
    cost = (y**3).sum() + T.exp(x).sum()
    j, h = jacobian(y, x), hessian(cost, x)
    hv = Rop(graphc.grad(cost, x), x, v)  # the Hessian-vector product
    f = graphc.function([x, v, u], [j, h, Rop(y, x, v), Lop(y, x, u), hv])
    xv, vv, uv = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    jv, hv_, rv, lv, hvv = f(xv, vv, uv)
    assert jv.shape == (n, n) == hv_.shape
    np.testing.assert_allclose(rv, jv @ vv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lv, uv @ jv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hvv, hv_ @ vv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv_, hv_.T, rtol=1e-10, atol=1e-12)


def test_rop_float32():
    x, v = T.fvector("x"), T.fvector("v")
    r = Rop(T.nnet.sigmoid(x) * x, x, v)
    assert r.dtype == "float32"
    xv = np.array([0.5, -1.0], "float32")
    vv = np.array([1.0, 2.0], "float32")
    s = 1 / (1 + np.exp(-xv.astype("float64")))
    want = (s * (1 - s) * xv + s) * vv
    np.testing.assert_allclose(r.eval({x: xv, v: vv}), want, rtol=1e-5)


@pytest.mark.parametrize("name", ["mlp", "advanced_inc_subtensor1", "pool_max"])
def test_rop_graphs_pass_debug_mode(name):
    build, points, *_ = CASES[name]
    check_rop(build, points(np.random.default_rng(3), 3, 4), np.random.default_rng(4),
              mode="DEBUG_MODE")  # fmt: skip
