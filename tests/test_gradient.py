"""grad / jacobian / hessian / verify_grad against finite differences and numpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from graph_checks import SameTypeOp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.gradient import (
    DisconnectedInputError,
    GradientError,
    grad,
    hessian,
    jacobian,
    verify_grad,
)
from graphc.tensor.elemwise import DimShuffle
from graphc.tensor.elemwise_grad import _RULES
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)
FLOATS = st.sampled_from(["float32", "float64"])


def _u(rng, shape, lo, hi, dtype, signed=False):
    v = rng.uniform(lo, hi, size=shape)
    if signed:
        v = v * rng.choice([-1.0, 1.0], size=shape)
    return v.astype(dtype)


def _clip_x(rng, shape, dtype):
    v = rng.uniform(-0.8, 0.8, size=shape)
    far = rng.uniform(1.2, 1.8, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return np.where(rng.random(shape) < 0.5, v, far).astype(dtype)


# name -> (number of inputs, generator(rng, shapes, dtype) -> points)
def _domain(name):
    def default(lo=-2.0, hi=2.0, signed=False):
        return lambda r, s, d: [_u(r, sh, lo, hi, d, signed) for sh in s]

    special = {
        "log": default(0.5, 2), "log2": default(0.5, 2), "log10": default(0.5, 2),
        "sqrt": default(0.5, 2), "log1p": default(-0.5, 2), "arcsin": default(-0.8, 0.8),
        "arccos": default(-0.8, 0.8), "tan": default(-1, 1), "abs": default(0.2, 2, True),
        "true_div": lambda r, s, d: [_u(r, s[0], -2, 2, d), _u(r, s[1], 0.5, 2, d, True)],
        "pow": lambda r, s, d: [_u(r, s[0], 0.5, 2, d), _u(r, s[1], -2, 2, d)],
        "mod": lambda r, s, d: [_u(r, s[0], 0.1, 1.3, d), _u(r, s[1], 1.5, 2, d)],
        "arctan2": lambda r, s, d: [_u(r, s[0], -2, 2, d), _u(r, s[1], 0.5, 2, d)],
        "clip": lambda r, s, d: [_clip_x(r, s[0], d), np.full(s[1], -1, d), np.full(s[2], 1, d)],
        "switch": lambda r, s, d: [r.random(s[0]) < 0.5, _u(r, s[1], -2, 2, d),
                                   _u(r, s[2], -2, 2, d)],
    }  # fmt: skip
    return special.get(name, default())


def _maxmin_points(r, s, d):
    a = _u(r, s[0], -2, 2, "float64")
    b = _u(r, s[1], 0.3, 1, "float64", signed=True)
    full = np.broadcast_shapes(s[0], s[1])
    a_full = np.broadcast_to(a, full)
    # b = a + offset where both are full-sized; else a value that differs from every a
    if s[1] == full and s[0] != full:
        b = a_full + b
    elif s[1] == full:
        b = a + b
    else:
        b = np.full(s[1], 5.0) * np.sign(r.random(s[1]) - 0.5)
    return [a.astype(d), np.asarray(b).astype(d)]


NIN = {"add": 3, "mul": 3, "sub": 2, "true_div": 2, "pow": 2, "mod": 2, "arctan2": 2,
       "maximum": 2, "minimum": 2, "clip": 3, "switch": 3, "second": 2}  # fmt: skip
ELEMWISE_NAMES = sorted(cls.__name__.lower() for cls in _RULES)


@st.composite
def broadcast_shapes(draw, nin: int, min_ndim: int = 1, max_size: int = 3):
    ndim = draw(st.integers(min_ndim, 3))
    base = draw(st.lists(st.integers(0, max_size), min_size=ndim, max_size=ndim))
    shapes = []
    for _ in range(nin):
        mask = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
        sh = [1 if m else b for m, b in zip(mask, base)]
        drop = draw(st.integers(0, ndim - min_ndim))
        shapes.append(tuple(sh[drop:]))
    shapes[0] = tuple(base)  # one operand carries the full shape
    return shapes


def _apply(name):
    from graphc.tensor.math import elemwise_op

    return lambda *xs: elemwise_op(name)(*xs)


@pytest.mark.parametrize("name", ELEMWISE_NAMES)
@SETTINGS
@given(data=st.data(), dtype=FLOATS)
def test_elemwise_grad_matches_finite_differences(name, data, dtype):
    nin = NIN.get(name, 1)
    shapes = data.draw(broadcast_shapes(nin, min_ndim=0))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    gen = _maxmin_points if name in ("maximum", "minimum") else _domain(name)
    points = gen(rng, shapes, dtype)
    verify_grad(_apply(name), points, n_tests=1, rng=rng)


def test_every_differentiable_elemwise_op_is_covered():
    from graphc.scalar.basic import all_scalar_ops

    assert set(ELEMWISE_NAMES) <= set(all_scalar_ops())
    assert {"exp", "log", "tanh", "sigmoid", "mul", "pow", "maximum"} <= set(ELEMWISE_NAMES)


def test_elemwise_grad_of_0d_inputs_keeps_0d():
    x = T.dscalar("x")
    g = grad(T.tanh(x), x)
    assert g.type == x.type
    np.testing.assert_allclose(g.eval({x: 0.3}), 1 - np.tanh(0.3) ** 2)


# ------------------------------------------------------------------ reductions


def _axis_and_points(data, positive=False, distinct=False, min_size=0):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(min_size, 3), min_size=ndim, max_size=ndim)))
    axis = data.draw(
        st.one_of(
            st.none(),
            st.integers(-ndim, ndim - 1),
            st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple),
        )
    )
    dtype = data.draw(FLOATS)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = int(np.prod(shape))
    if distinct:
        x = rng.permutation(np.linspace(-2, 2, n)).reshape(shape)
    elif positive:
        x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    else:
        x = rng.uniform(-2, 2, shape)
    return axis, x.astype(dtype), rng


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std"])
@SETTINGS
@given(data=st.data(), keepdims=st.booleans())
def test_reduction_grads(name, data, keepdims):
    axis, x, rng = _axis_and_points(
        data,
        positive=name == "prod",
        distinct=name in ("max", "min"),
        min_size={"max": 1, "min": 1, "mean": 1, "var": 1, "std": 2}.get(name, 0),
    )
    fn = getattr(T, name)
    verify_grad(lambda v: fn(v, axis=axis, keepdims=keepdims), [x], n_tests=1, rng=rng)


@SETTINGS
@given(data=st.data(), dtype=FLOATS)
def test_dimshuffle_grads(data, dtype):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    perm = data.draw(st.permutations(range(ndim)))
    kept = [a for a in perm if shape[a] != 1 or data.draw(st.booleans())]
    order: list = list(kept)
    for _ in range(data.draw(st.integers(0, 2))):
        order.insert(data.draw(st.integers(0, len(order))), "x")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.uniform(-1, 1, shape).astype(dtype)
    verify_grad(lambda v: DimShuffle(ndim, order)(v) * 1.5, [x], n_tests=1, rng=rng)


# ------------------------------------------------------------------ grad() semantics


def test_grad_values_and_accumulation():
    x = T.dvector("x")
    cost = T.sum(x * x) + T.sum(T.exp(x))  # x reaches the cost along three paths
    g = grad(cost, x)
    xv = np.array([0.1, -0.4, 2.0])
    np.testing.assert_allclose(g.eval({x: xv}), 2 * xv + np.exp(xv))


def test_grad_returns_same_structure_and_types():
    x = T.fvector("x")
    r = T.row("r")
    cost = T.sum(T.dot(r, T.cast(x, "float64")))
    gl = grad(cost, [x, r])
    assert isinstance(gl, list) and len(gl) == 2
    assert gl[0].type == x.type and gl[1].type == r.type
    gx = grad(cost, x)
    assert not isinstance(gx, list) and gx.type == x.type
    vals = {x: np.arange(3, dtype="float32"), r: np.ones((1, 3))}
    np.testing.assert_allclose(gl[0].eval(vals), np.ones(3))
    np.testing.assert_allclose(gl[1].eval(vals), np.arange(3)[None, :])


def test_broadcastable_wrt_gets_broadcastable_gradient():
    r = TensorType("float64", (1, None))("r")
    m = T.matrix("m")
    g = grad(T.sum(r * m), r)
    assert g.type == r.type
    np.testing.assert_allclose(
        g.eval({r: np.ones((1, 2)), m: np.arange(6.0).reshape(3, 2)}), [[6.0, 9.0]]
    )


def test_static_shape_of_gradient_matches_wrt():
    x = T.dvector("x")
    c = TensorType("float64", (3,))("c")
    g = grad(T.sum(x * c), x)  # the product has static shape (3,), x does not
    assert g.type == x.type


def test_non_scalar_cost_is_a_type_error_naming_its_type():
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"Vector\(float64\)"):
        grad(x * 2, x)


def test_disconnected_inputs():
    x, y = T.dvector("x"), T.dvector("y")
    cost = T.sum(x)
    with pytest.raises(DisconnectedInputError, match="y"):
        grad(cost, [x, y])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        gx, gy = grad(cost, [x, y], disconnected_inputs="warn")
    assert any("does not depend" in str(m.message) for m in w)
    np.testing.assert_array_equal(gy.eval({y: np.ones(4)}), np.zeros(4))
    assert gy.type == y.type
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gy = grad(cost, y, disconnected_inputs="ignore", return_disconnected="None")
    assert gy is None


def test_consider_constant_stops_gradient():
    x = T.dvector("x")
    stop = x * 3.0
    cost = T.sum(stop * x)
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(cost, x).eval({x: xv}), 6 * xv)
    np.testing.assert_allclose(grad(cost, x, consider_constant=[stop]).eval({x: xv}), 3 * xv)
    with pytest.raises(DisconnectedInputError):
        grad(T.sum(stop), x, consider_constant=[stop])


def test_integers_get_no_gradient():
    x = T.dvector("x")
    i = T.ivector("i")
    cost = T.sum(T.cast(T.argmax(x, keepdims=True), "float64") * x) + T.sum(T.cast(i, "float64"))
    gx, gi = grad(cost, [x, i])
    vals = {x: np.array([0.5, 3.0, 1.0]), i: np.array([1, 2], dtype="int32")}
    np.testing.assert_allclose(gx.eval(vals), [1.0, 1.0, 1.0])
    assert gi.type == i.type
    np.testing.assert_array_equal(gi.eval(vals), [0, 0])


def test_known_grads_without_cost():
    x = T.dvector("x")
    y = T.exp(x)
    gy = T.dvector("gy")
    gx = grad(None, x, known_grads={y: gy})
    xv, gv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(gx.eval({x: xv, gy: gv}), gv * np.exp(xv))


def test_grad_of_cost_wrt_itself_and_options():
    x = T.dvector("x")
    c = T.sum(x)
    assert float(grad(c, c).eval({x: np.ones(2)})) == 1.0
    with pytest.raises(ValueError):
        grad(c, x, disconnected_inputs="maybe")
    with pytest.raises(TypeError):
        grad(c, [x, 3])


class _WrongGrad(SameTypeOp):
    """Identity whose gradient is off by a factor of two."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()

    def grad(self, inputs, gouts):
        return [gouts[0] * 2.0]


def test_verify_grad_detects_a_wrong_gradient():
    x = np.random.default_rng(0).random((2, 3))
    with pytest.raises(GradientError) as info:
        verify_grad(lambda v: _WrongGrad()(v), [x])
    err = info.value
    assert err.arg == 0 and err.abs_err > 0.1 and err.rel_err > 0.1
    assert "input 0" in str(err)
    verify_grad(lambda v: T.identity(v), [x])  # the right one passes


def test_verify_grad_skips_integer_points_and_float32_tolerance():
    rng = np.random.default_rng(1)
    x = rng.random((3,)).astype("float32")
    k = np.array([1, 2, 3], dtype="int64")
    verify_grad(lambda a, b: a * T.cast(b, "float32"), [x, k], rng=rng)


# ------------------------------------------------------------------ jacobian / hessian


def test_jacobian_static_length():
    x = TensorType("float64", (3,))("x")
    A = TensorType("float64", (2, 3))("A")
    a = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
    y = T.dot(A, x) * T.sum(x)
    J = jacobian(y, x)
    xv = np.array([0.5, -1.0, 2.0])
    expect = a * xv.sum() + np.outer(a @ xv, np.ones(3))
    assert J.type.shape == (2, 3)
    np.testing.assert_allclose(J.eval({x: xv, A: a}), expect)
    J0 = jacobian(T.exp(TensorType("float64", (0,))("e")), x, disconnected_inputs="ignore")
    assert J0.eval({x: xv}).shape == (0, 3)


def test_jacobian_of_unknown_length_loops_with_scan():
    x, m = T.dvector("x"), T.dmatrix("m")
    J, Jm = jacobian(T.exp(x) * m.sum(), [x, m])
    f = graphc.function([x, m], [J, Jm])
    for n in (0, 1, 3):
        xv, mv = np.linspace(-1, 1, n), np.ones((2, 2))
        a, b = f(xv, mv)
        np.testing.assert_allclose(a, np.diag(np.exp(xv)) * 4)
        np.testing.assert_allclose(b, np.broadcast_to(np.exp(xv)[:, None, None], (n, 2, 2)))


def test_jacobian_list_and_hessian():
    x = TensorType("float64", (2,))("x")
    m = T.dmatrix("m")
    J = jacobian(T.exp(x), [x, m], disconnected_inputs="ignore")
    xv = np.array([0.3, -0.2])
    np.testing.assert_allclose(J[0].eval({x: xv}), np.diag(np.exp(xv)))
    assert J[1].type.shape[0] == 2 and J[1].ndim == 3
    H = hessian(T.sum(x**3) + T.prod(x), x)
    np.testing.assert_allclose(H.eval({x: xv}), np.diag(6 * xv) + np.array([[0, 1], [1, 0]]))


def test_broadcasting_contract_forward_and_gradient():
    """Forward: run-time broadcasting of an axis of unknown size follows numpy. Gradients
    sum over axes declared broadcastable (static size 1), as Theano's do: declare the size-1
    axis (a row, ``shape=(1, None)``...) to differentiate through the broadcast."""
    x = T.dvector("x")
    v = T.tensor("float64", shape=(None,), name="v")
    f = graphc.function([x, v], x + v)
    np.testing.assert_allclose(f(np.arange(3.0), np.ones(1)), [1.0, 2.0, 3.0])
    b = T.tensor("float64", shape=(1,), name="b")
    g = graphc.function([x, b], graphc.grad((x * b).sum(), b))
    np.testing.assert_allclose(g(np.arange(4.0), np.ones(1)), [6.0])
    assert g(np.arange(4.0), np.ones(1)).shape == (1,)
