"""Reliability cases that are neither numerics nor threads: pickled profiled functions and
DEBUG_MODE's check of every ``perform`` under input/output aliasing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.debugmode import BadDestroyMap, BadThunkOutput
from graphc.compile.mode import Mode
from graphc.graph.basic import Apply, Op


def test_pickled_profiled_function_stays_profiled():
    x = T.vector("x")
    f = graphc.function([x], T.exp(x) * 2, mode=Mode(linker="py"), profile=True)
    f(np.ones(3))
    g = pickle.loads(pickle.dumps(f))
    assert g.profile is not None
    np.testing.assert_allclose(g(np.ones(3)), np.exp(np.ones(3)) * 2)
    g.profile.refresh()
    rec = g.profile.functions[-1]
    assert rec.calls == 1 and rec.name == f.profile.functions[-1].name
    h = pickle.loads(pickle.dumps(graphc.function([x], x * 2, mode=Mode(linker="py"))))
    assert h.profile is None


# -- DEBUG_MODE runs every perform with its inputs aliased --------------------------------


class _AccumulateRows(Op):
    """``z <- z + cumsum-like(x)`` in place: ``z[k] += x[k - 1]`` row by row; with
    ``careful`` it copies an ``x`` that aliases ``z`` first."""

    __props__ = ("careful",)
    destroy_map = {0: [0]}

    def __init__(self, careful: bool):
        self.careful = careful

    def make_node(self, z, x):
        z, x = T.as_tensor_variable(z), T.as_tensor_variable(x)
        return Apply(self, [z, x], [z.type()])

    def perform(self, node, inputs, out):
        z, x = inputs
        if self.careful and np.may_share_memory(z, x):
            x = x.copy()
        for k in range(1, len(z)):
            z[k] += x[k - 1]
        out[0][0] = z


def _accumulate_graph(careful: bool):
    v = T.vector("v")
    z = T.exp(v)
    return graphc.function([v], _AccumulateRows(careful)(z, z), mode="DEBUG_MODE")


def test_debug_mode_catches_inplace_perform_reading_its_own_output():
    with pytest.raises(BadThunkOutput, match="aliased"):
        _accumulate_graph(careful=False)(np.array([0.0, 1.0, 2.0]))


def test_debug_mode_accepts_inplace_perform_safe_under_aliasing():
    e = np.exp(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(_accumulate_graph(careful=True)(np.log(e)), e + [0, e[0], e[1]])


@pytest.mark.parametrize("shape", [(3, 3), (4, 4)])
def test_debug_mode_checks_gemm_under_aliasing(shape):
    x = T.matrix("x")
    z = T.exp(x)
    f = graphc.function([x], [z + T.dot(z, z)], mode="DEBUG_MODE")
    assert "Gemm{inplace}" in [str(n.op) for n in f.maker.fgraph.toposort()]
    a = np.linspace(-1, 1, np.prod(shape)).reshape(shape)
    try:
        (got,) = f(a)
    except BadThunkOutput as e:  # a perform unsafe under aliasing is reported, not hidden
        assert "aliased" in str(e)
    else:
        np.testing.assert_allclose(got, np.exp(a) + np.exp(a) @ np.exp(a))


class _AddOneReusing(Op):
    """``x + 1`` into the previous output buffer when it has the right shape; ``careful``
    refuses a buffer that is (a view of) the input."""

    __props__ = ("careful",)

    def __init__(self, careful: bool):
        self.careful = careful

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        (x,), prev = inputs, out[0][0]
        usable = prev is not None and prev.shape == x.shape and prev.dtype == x.dtype
        if usable and not (self.careful and np.may_share_memory(prev, x)):
            np.add(x, 1, out=prev)
            out[0][0] = prev
        else:
            out[0][0] = x + 1


def test_debug_mode_runs_perform_with_its_output_buffer_being_an_input():
    v = T.vector("v")
    f = graphc.function([v], _AddOneReusing(False)(T.exp(v)), mode="DEBUG_MODE")
    with pytest.raises(BadDestroyMap, match="previous buffer being input 0"):
        f(np.zeros(3))
    g = graphc.function([v], _AddOneReusing(True)(T.exp(v)), mode="DEBUG_MODE")
    np.testing.assert_allclose(g(np.zeros(3)), np.full(3, 2.0))
