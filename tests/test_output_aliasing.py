"""No two arrays handed to the caller share memory (returned outputs, new shared values,
the caller's inputs), as Theano's ``insert_deepcopy``, unless ``Out(borrow=True)``;
checked with ``np.shares_memory`` on every pair. A fuzzer returns random views of one
intermediate as outputs and as shared updates."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.compile.aliasing import outputs_needing_copy
from graphc.compile.mode import Mode
from graphc.linker import c_available

MODES = {"py": Mode(linker="py", optimizer="None"), "FAST_COMPILE": "FAST_COMPILE"}
if c_available():
    MODES["FAST_RUN"] = "FAST_RUN"
    MODES["c|py"] = Mode(linker="c|py", optimizer="None")


def assert_no_sharing(arrays, what: str) -> None:
    """Every pair of ``arrays`` has disjoint memory."""
    for (i, a), (j, b) in itertools.combinations(enumerate(arrays), 2):
        assert not np.shares_memory(a, b), f"{what}: arrays {i} and {j} share memory"


@pytest.mark.parametrize("mode", list(MODES))
def test_view_outputs_of_one_intermediate_are_separate(mode):
    x = T.matrix("x")
    t = T.exp(x)
    f = graphc.function([x], [t, t.T, t[1:], t.reshape((6,))], mode=MODES[mode])
    xv = np.arange(6.0).reshape(2, 3)
    outs = f(xv)
    assert_no_sharing([*outs, xv], mode)
    outs[0][...] = 0  # the caller writes into one: the others keep numpy's values
    np.testing.assert_allclose(outs[1], np.exp(xv).T)
    np.testing.assert_allclose(outs[3], np.exp(xv).ravel())


@pytest.mark.parametrize("mode", list(MODES))
def test_carried_state_does_not_change_with_returned_states(mode):
    # a stateful RNN returns every hidden state and carries the last one in a shared
    h = graphc.shared(np.zeros(3), name="h")
    w = np.array([[0.5, 0.1, 0.0], [0.0, 0.3, 0.2], [0.1, 0.0, 0.4]])
    xs = T.matrix("xs")
    hs, _ = graphc.scan(lambda x_t, h_tm1: T.tanh(x_t + T.dot(h_tm1, w)), sequences=xs,
                        outputs_info=h)  # fmt: skip
    f = graphc.function([xs], hs, updates=[(h, hs[-1])], mode=MODES[mode])
    xv = np.linspace(-1, 1, 12).reshape(4, 3)
    got = f(xv)
    carried = h.get_value(borrow=True)
    assert not np.shares_memory(got, carried)
    want_last = got[-1].copy()
    got /= np.linalg.norm(got, axis=1, keepdims=True)  # the caller normalises in place
    np.testing.assert_array_equal(h.get_value(), want_last)


@pytest.mark.parametrize("mode", list(MODES))
def test_two_updates_viewing_one_value_are_separate(mode):
    a = graphc.shared(np.zeros(4), name="a")
    b = graphc.shared(np.zeros(4), name="b")
    x = T.vector("x")
    t = T.exp(x)
    f = graphc.function([x], t[::-1], updates=[(a, t), (b, t[::-1])], mode=MODES[mode])
    out = f(np.arange(4.0))
    vals = [a.get_value(borrow=True), b.get_value(borrow=True)]
    assert_no_sharing([out, *vals], mode)
    np.testing.assert_allclose(vals[1], np.exp(np.arange(4.0))[::-1])


def test_borrowed_output_may_share_and_common_case_copies_nothing():
    x = T.matrix("x")
    t = T.exp(x)
    f = graphc.function([x], [t, graphc.Out(t.T, borrow=True)], mode="FAST_COMPILE")
    a, b = f(np.ones((2, 3)))
    assert np.shares_memory(a, b)  # Out(borrow=True) is the documented way out
    # outputs that allocate are decided statically: no copy at all
    g = graphc.function([x], [T.exp(x), T.log(x), T.exp(x).T], mode="FAST_COMPILE")
    fg = g.maker.fgraph
    outs = [graphc.Out(v) for v in fg.outputs]
    assert outputs_needing_copy(fg, 1, outs, [], []) == ([2], [])


@st.composite
def view_recipes(draw):
    """A base expression of x, then outputs and shared updates that are views of it."""
    views = st.sampled_from(["id", "T", "rows", "flat", "rev", "col"])
    return (draw(st.sampled_from(["exp", "add", "x"])),
            draw(st.lists(views, min_size=1, max_size=3)),
            draw(st.lists(views, min_size=0, max_size=2)),
            draw(st.sampled_from(list(MODES))))  # fmt: skip


def _view(t, kind):
    return {"id": lambda: t, "T": lambda: t.T, "rows": lambda: t[1:], "col": lambda: t[:, 0],
            "flat": lambda: t.reshape((12,)), "rev": lambda: t[::-1]}[kind]()  # fmt: skip


def _np_view(t, kind):
    return {"id": t, "T": t.T, "rows": t[1:], "col": t[:, 0], "flat": t.reshape(12),
            "rev": t[::-1]}[kind]  # fmt: skip


def _check_views(recipe) -> None:
    base, out_views, upd_views, mode = recipe
    x = T.matrix("x")
    t = {"exp": T.exp(x), "add": x + 1.0, "x": x}[base]
    xv = np.arange(12.0).reshape(3, 4) / 10
    tv = {"exp": np.exp(xv), "add": xv + 1.0, "x": xv}[base]
    shared = [graphc.shared(_np_view(tv, k) * 0) for k in upd_views]
    updates = [(s, _view(t, k)) for s, k in zip(shared, upd_views)]
    f = graphc.function([x], [_view(t, k) for k in out_views], updates=updates,
                        mode=MODES[mode])  # fmt: skip
    outs = f(xv)
    news = [s.get_value(borrow=True) for s in shared]
    assert_no_sharing([*outs, *news, xv], str(recipe))
    for got, k in zip([*outs, *news], [*out_views, *upd_views]):
        np.testing.assert_allclose(got, _np_view(tv, k), err_msg=str(recipe))


@pytest.mark.fuzz
def test_fuzz_views_never_share_memory(fuzz_examples):
    n = max(5, fuzz_examples)

    @settings(max_examples=n, deadline=None, database=None, derandomize=n <= 200,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(view_recipes())
    def run(recipe):
        _check_views(recipe)

    run()
