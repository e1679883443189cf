"""Theano names graphc adds for Theano's users: gradient helpers, ViewOp, graph comparisons,
``gof.utils`` and ``xlogx``, each checked against numpy, finite differences or a hand count."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.special

import graphc
import graphc.tensor as T
from graphc.compile.ops import ViewOp, view_op
from graphc.gradient import NullTypeGradError, grad_clip, grad_not_implemented, grad_undefined
from graphc.graph.basic import Apply, Op
from graphc.graph.compare import equal_computations, is_same_graph
from graphc.graph.utils import difference, flatten, hash_from_code, uniq
from graphc.tensor.xlogx import xlogx, xlogy0


def _fd(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar function ``f`` at ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_grad_clip_is_identity_forward_and_clips_the_gradient():
    x = T.dvector("x")
    u = grad_clip(x**2, -1.0, 1.5)
    cost = T.sin(3 * u).sum()
    f = graphc.function([x], [u, T.grad(cost, x)])
    xv = np.array([-1.3, -0.4, 0.0, 0.2, 0.9, 1.4])
    out, g = f(xv)
    np.testing.assert_array_equal(out, xv**2)
    # reference: dcost/du by finite differences at u = x**2, clipped, times d(x**2)/dx by FD
    upstream = _fd(lambda u_: np.sin(3 * u_).sum(), xv**2)
    inner = np.array([_fd(lambda t: (t**2).sum(), np.array([v]))[0] for v in xv])
    expected = np.clip(upstream, -1.0, 1.5) * inner
    assert np.any(np.abs(upstream) > 1.5)  # the clipping matters here
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


def test_grad_clip_refuses_bounds_in_the_wrong_order():
    with pytest.raises(ValueError, match="below lower bound"):
        grad_clip(T.dvector(), 1.0, -1.0)


class _NoGrad(Op):
    """x * y whose gradient for y nobody wrote."""

    def make_node(self, *inputs):
        x, y = (T.as_tensor_variable(i) for i in inputs)
        return Apply(self, [x, y], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * inputs[1]

    def grad(self, inputs, gouts):
        x, y = inputs
        return [gouts[0] * y, grad_not_implemented(self, 1, y, "no formula")]


def test_grad_not_implemented_raises_only_when_that_gradient_is_needed():
    x, y = T.dscalar("x"), T.dscalar("y")
    out = _NoGrad()(x, y)
    gx = graphc.function([y], T.grad(out, x))(5.0)
    assert gx == pytest.approx(5.0)
    with pytest.raises(NullTypeGradError, match=r"input 1 .* not implemented\. no formula"):
        T.grad(out, y)
    assert issubclass(NullTypeGradError, TypeError)
    null = grad_undefined(_NoGrad(), 0, x)
    assert "mathematically undefined" in null.type.why_null


def test_view_op_returns_its_input_and_passes_the_gradient():
    x = T.dvector("x")
    assert isinstance(view_op, ViewOp) and view_op.view_map == {0: [0]}
    y = view_op(x)
    f = graphc.function([x], [y, T.grad((y**2).sum(), x)])
    xv = np.array([1.0, -2.0, 3.0])
    out, g = f(xv)
    np.testing.assert_array_equal(out, xv)
    np.testing.assert_allclose(g, _fd(lambda v: (v**2).sum(), xv), rtol=1e-7)


def test_equal_computations_follows_theano():
    x, y, z = T.dvectors("x", "y", "z")
    assert equal_computations([x * (y * z)], [x * (y * z)])
    assert not equal_computations([x * (y * z)], [(x * y) * z])  # same value, other graph
    assert not equal_computations([x + y], [x + z])
    assert equal_computations([x + y], [z + y], in_xs=[x], in_ys=[z])
    assert not equal_computations([x + y], [z + y], in_xs=[x], in_ys=[T.dmatrix()])
    assert equal_computations([x + 2.0], [x + 2.0]) and not equal_computations([x + 2.0], [x + 3.0])
    assert not equal_computations([x], [T.fvector()])
    assert equal_computations([x, x + 1.0], [x, x + 1.0])
    with pytest.raises(ValueError, match="1 xs but 2 ys"):
        equal_computations([x], [x, y])


def test_is_same_graph_with_givens():
    x, y, z = T.dvectors("x", "y", "z")
    assert is_same_graph(T.exp(x) + y, T.exp(x) + y)
    assert not is_same_graph(T.exp(x) + y, T.exp(z) + y)
    assert is_same_graph(T.exp(x) + y, T.exp(z) + y, givens={x: z})


def test_gof_utils_by_hand():
    assert flatten([1, (2, [3, [4]]), 5]) == [1, 2, 3, 4, 5] and flatten(7) == [7]
    assert uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert difference([1, 2, 3, 2, 4], [2, 4]) == [1, 3]
    assert hash_from_code("abc") == hashlib.md5(b"abc").hexdigest()


def test_xlogx_and_xlogy0_match_scipy():
    x, y = T.dvectors("x", "y")
    xv = np.array([0.0, 0.5, 1.0, 2.0, 3.5])
    yv = np.array([0.0, 0.1, 4.0, 0.3, 1.0])
    f = graphc.function([x, y], [xlogx(x), xlogy0(x, y)])
    a, b = f(xv, yv)
    np.testing.assert_allclose(a, scipy.special.xlogy(xv, xv), rtol=1e-12)
    np.testing.assert_allclose(b, scipy.special.xlogy(xv, yv), rtol=1e-12)
