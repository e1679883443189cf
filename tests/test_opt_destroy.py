"""The DestroyHandler and the in-place pass: only dead intermediates are overwritten."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.graph.fg import FunctionGraph, InconsistencyError
from graphc.linker import c_available
from graphc.opt.destroy import DestroyHandler
from graphc.scalar import basic as ps
from graphc.scalar.basic import Composite
from graphc.tensor.elemwise import Elemwise

LINKERS = ["py"] + (["c|py"] if c_available() else [])


def mode(linker="py", *excluding):
    return graphc.Mode(linker=linker, optimizer="fast_run").excluding(*excluding)


def destroyers(f):
    return [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]


def _fg(inputs, outputs):
    fg = FunctionGraph(inputs, outputs, clone=False)
    fg.attach_feature(DestroyHandler())
    return fg


def test_rejects_destroying_an_input_or_constant():
    x = T.dvector("x")
    fg = _fg([x], [T.exp(x)])
    bad = Elemwise(ps.exp, {0: 0})(x)
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate([(fg.outputs[0], bad)])
    assert fg.outputs[0].owner.op == Elemwise(ps.exp)  # reverted
    c = T.constant(np.ones(3))
    fg2 = _fg([x], [x + T.exp(c)])
    with pytest.raises(InconsistencyError):
        fg2.replace_all_validate([(fg2.outputs[0], Elemwise(ps.add, {0: 1})(x, c))])


def test_rejects_destroying_a_value_read_later_or_an_output():
    x = T.dvector("x")
    e = T.exp(x)
    later = T.log(e)
    out = T.sin(e)
    fg = _fg([x], [out, later])
    # sin in place over e is fine only if log(e) can run first: the handler orders it
    fg.replace_all_validate([(fg.outputs[0], Elemwise(ps.sin, {0: 0})(e))])
    order = fg.toposort()
    assert order.index(fg.outputs[1].owner) < order.index(fg.outputs[0].owner)
    # a reader that needs the destroyer's result and the old value: impossible -> rejected
    y = T.exp(x)
    d = Elemwise(ps.sin, {0: 0})(y)
    fg2 = _fg([x], [T.exp(x)])
    with pytest.raises(InconsistencyError):
        fg2.replace_all_validate([(fg2.outputs[0], d + y)])
    # e is itself an output: destroying it would hand the caller a clobbered value
    e3 = T.exp(x)
    fg3 = _fg([x], [e3, T.sin(e3)])
    with pytest.raises(InconsistencyError):
        fg3.replace_all_validate([(fg3.outputs[1], Elemwise(ps.sin, {0: 0})(e3))])


def test_rejects_two_destroyers_and_destroyed_views():
    x = T.dmatrix("x")
    e = T.exp(x)
    fg = _fg([x], [T.sin(e) + T.cos(e)])
    a, b = fg.outputs[0].owner.inputs
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate(
            [(a, Elemwise(ps.sin, {0: 0})(e)), (b, Elemwise(ps.cos, {0: 0})(e))]
        )
    xt = x.T  # a view of an input
    fg2 = _fg([x], [T.exp(xt)])
    with pytest.raises(InconsistencyError):
        fg2.replace_all_validate([(fg2.outputs[0], Elemwise(ps.exp, {0: 0})(xt))])


@pytest.mark.parametrize("linker", LINKERS)
def test_inplace_never_clobbers_inputs(linker):
    x, y = T.dvector("x"), T.dvector("y")
    s = graphc.shared(np.arange(3.0), name="s")
    e = T.exp(x) * y
    outs = [T.sin(e) + s, T.cos(e), x.sum() + T.constant(np.ones(1))]
    f = graphc.function([x, y], outs, updates=[(s, s * 2.0)], mode=mode(linker))
    assert destroyers(f)
    xv, yv = np.linspace(0, 1, 3), np.linspace(1, 2, 3)
    x0, y0 = xv.copy(), yv.copy()
    ref = graphc.function([x, y], outs, mode=graphc.Mode(linker="py", optimizer=None))
    for _ in range(3):
        sv = s.get_value()
        want = ref(xv, yv)
        want[0] = np.sin(np.exp(xv) * yv) + sv
        got = f(xv, yv)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
        np.testing.assert_array_equal(xv, x0)
        np.testing.assert_array_equal(yv, y0)
        np.testing.assert_array_equal(s.get_value(), sv * 2)


@pytest.mark.parametrize("linker", LINKERS)
def test_failing_call_leaves_shared_unchanged(linker):
    x = T.dvector("x")
    idx = T.lvector("i") if hasattr(T, "lvector") else T.vector("i", dtype="int64")
    s = graphc.shared(np.arange(4.0), name="s")
    t = graphc.shared(np.ones(4), name="t")
    m = T.exp(s) * x
    new_s = T.sin(m)  # in place over m once m.sum() has run
    bad = T.reshape(new_s + m.sum(), idx, ndim=1)  # raises for a wrong shape, after new_s
    # (multi-output fusion would compute m and sin(m) in one loop, leaving nothing to do in
    # place: this test is about the in-place path)
    f = graphc.function([x, idx], bad.sum(), updates=[(s, new_s), (t, t + new_s)],
                        mode=mode(linker, "multi_fusion"))  # fmt: skip
    assert destroyers(f)
    s0, t0 = s.get_value().copy(), t.get_value().copy()
    with pytest.raises(ValueError):
        f(np.ones(4), np.array([3], dtype="int64"))
    np.testing.assert_array_equal(s.get_value(), s0)
    np.testing.assert_array_equal(t.get_value(), t0)
    f(np.ones(4), np.array([4], dtype="int64"))
    np.testing.assert_allclose(s.get_value(), np.sin(np.exp(s0)))


def test_excluding_inplace_and_fusion():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    out = T.exp(T.dot(x, y)) * 2.0 + T.tanh(x.sum())
    f = graphc.function([x, y], out, mode=mode("py", "inplace"))
    assert not destroyers(f)
    assert any(isinstance(n.op.scalar_op, Composite) for n in f.maker.fgraph.toposort()
               if isinstance(n.op, Elemwise))  # fmt: skip
    g = graphc.function([x, y], out, mode=mode("py", "fusion"))
    assert not any(isinstance(getattr(n.op, "scalar_op", None), Composite)
                   for n in g.maker.fgraph.toposort())  # fmt: skip
    h = graphc.function([x, y], out, mode=mode("py"))
    assert destroyers(h)
    v = np.eye(3) * 0.5
    np.testing.assert_allclose(f(v, v), h(v, v))
    np.testing.assert_allclose(g(v, v), h(v, v))


@pytest.mark.parametrize("linker", LINKERS)
def test_inplace_respects_runtime_broadcasting(linker):
    # an axis of unknown static size may be 1 at run time and broadcast: the smaller
    # operand's buffer cannot hold the result
    x, y = T.dvector("x"), T.dvector("y")
    f = graphc.function([x, y], T.sin(T.exp(x)) + y, mode=mode(linker, "fusion"))
    np.testing.assert_allclose(f(np.ones(1), np.ones(4)), np.sin(np.e) + np.ones(4))
    np.testing.assert_allclose(f(np.ones(4), np.ones(1)), np.sin(np.e) + np.ones(4))
    # same-size operands (both come from x's length) still go in place
    g = graphc.function([x], T.sin(T.exp(x)) + T.cos(x), mode=mode(linker, "fusion"))
    assert sum(bool(n.op.destroy_map) for n in destroyers(g)) >= 2
    np.testing.assert_allclose(g(np.ones(3)), np.sin(np.e) + np.cos(1) * np.ones(3))


@pytest.mark.parametrize("linker", LINKERS)
def test_set_subtensor_in_place_only_on_intermediates(linker):
    x = T.dmatrix("x")
    e = T.exp(x)
    out = T.inc_subtensor(e[0], x[1])
    f = graphc.function([x], out * 2.0, mode=mode(linker))
    assert any("Inplace" in str(n.op) for n in destroyers(f))
    g = graphc.function([x], T.inc_subtensor(x[0], x[1]) * 2.0, mode=mode(linker))
    assert not any("Subtensor" in str(n.op) for n in destroyers(g))  # x is an input
    v = np.arange(6.0).reshape(2, 3)
    v0 = v.copy()
    want = np.exp(v)
    want[0] += v[1]
    np.testing.assert_allclose(f(v), want * 2)
    w2 = v.copy()
    w2[0] += v[1]
    np.testing.assert_allclose(g(v), w2 * 2)
    np.testing.assert_array_equal(v, v0)
