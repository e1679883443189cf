"""Loops of no step: their outputs have the shapes numpy gives, also when the trial step
fails (the shapes then come from a walk of the step graph's ``infer_shape``s, evaluated
without compiling anything), under "c|py" and "py" alike."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.graph.basic import Apply, Op, ancestors
from graphc.jacobian import hessian, jacobian
from graphc.tensor.shape import shape_tuple

LINKERS = ["auto", "py"]


def _compiled(inputs, outputs, linker):
    mode = graphc.Mode(linker=linker)
    return graphc.function(inputs, outputs, mode=mode, on_unused_input="ignore")


@pytest.mark.parametrize("linker", LINKERS)
def test_jacobian_and_hessian_of_an_empty_vector(linker):
    x, m = T.dvector("x"), T.dmatrix("m")
    J, Jm = jacobian(T.exp(x) * m.sum(), [x, m])
    H = hessian(T.sum(x**3) * m.sum(), x)
    f = _compiled([x, m], [J, Jm, H], linker)
    for n in (0, 2, 0):
        xv, mv = np.linspace(-1.0, 1.0, n), np.ones((2, 3))
        j, jm, h = f(xv, mv)
        assert j.shape == np.diag(np.exp(xv)).shape == (n, n)
        assert jm.shape == np.multiply.outer(np.exp(xv), mv).shape == (n, 2, 3)
        assert h.shape == np.diag(6 * xv).shape == (n, n)


def _loop(x, idx, M, h0, w):
    """A loop whose step indexes ``M`` with the sequence ``idx``: the trial step of a loop
    of no step fails on an ``M`` of no row. States: ``h`` (taps -1) and ``g`` (taps -2,
    -1); stacked: ``outer(M[i], w)`` and ``M[i] * x.sum()``."""

    def step(i, h, g2, g1, M, w):
        r = M[i]
        return [h + r, g1 + g2 * r.sum(), T.outer(r, w), r * x.sum()]

    outs, _ = graphc.scan(
        step,
        sequences=idx,
        outputs_info=[h0, dict(initial=T.stack([h0.sum(), h0.sum()]), taps=[-2, -1]),
                      None, None],
        non_sequences=[M, w],
    )  # fmt: skip
    return outs


def _numpy_loop(xv, iv, mv, hv, wv) -> list[np.ndarray]:
    hs, gs, outers, scaled = [], [hv.sum(), hv.sum()], [], []
    h = hv
    for i in iv:
        r = mv[i]
        h = h + r
        hs.append(h)
        gs.append(gs[-1] + gs[-2] * r.sum())
        outers.append(np.outer(r, wv))
        scaled.append(r * xv.sum())
    row = np.zeros(mv.shape[1])  # the shape one step would give
    stack = [
        np.array(hs).reshape(len(iv), *hv.shape),
        np.array(gs[2:]).reshape(len(iv)),
        np.array(outers).reshape(len(iv), *np.outer(row, wv).shape),
        np.array(scaled).reshape(len(iv), *(row * xv.sum()).shape),
    ]
    return stack


@pytest.mark.parametrize("linker", LINKERS)
def test_a_loop_of_no_step_whose_trial_step_fails(linker):
    x, idx, M = T.dvector("x"), T.lvector("idx"), T.dmatrix("M")
    h0, w = T.dvector("h0"), T.dvector("w")
    f = _compiled([x, idx, M, h0, w], _loop(x, idx, M, h0, w), linker)
    cases = [
        (np.ones(2), np.zeros(0, "int64"), np.zeros((0, 3)), np.ones(3), np.ones(4)),
        (np.ones(2), np.array([1, 0]), np.arange(6.0).reshape(2, 3), np.ones(3), np.ones(5)),
        (np.ones(7), np.zeros(0, "int64"), np.zeros((0, 5)), np.ones(5), np.ones(2)),
    ]
    for args in cases:
        got = f(*args)
        want = _numpy_loop(*args)
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("linker", LINKERS)
def test_nested_loops_of_no_step(linker):
    """The outer loop runs no step and its trial step fails (``T3[i]`` of no row): the
    shape of its stacked output, an inner loop's states, comes from the shape graph."""
    idx, T3, h0 = T.lvector("idx"), T.dtensor3("T3"), T.dvector("h0")

    def outer_step(i, T3, h0):
        hs, _ = graphc.scan(lambda r, h: h + r, sequences=T3[i], outputs_info=h0)
        return hs * 2.0

    ys, _ = graphc.scan(outer_step, sequences=idx, non_sequences=[T3, h0])
    f = _compiled([idx, T3, h0], ys, linker)
    for n, rows, cols in ((0, 4, 3), (2, 1, 2), (0, 2, 6)):
        iv = np.zeros(n, "int64")
        tv = np.ones((max(n, 1) if n else 0, rows, cols))
        hv = np.ones(cols)
        want = [np.cumsum(tv[i], axis=0) * 2.0 + hv * 2.0 for i in iv]
        got = f(iv, tv, hv)
        assert got.shape == np.array(want).reshape(n, rows, cols).shape
        np.testing.assert_allclose(got, np.array(want).reshape(n, rows, cols))


class _Twice(Op):
    """``2 * x`` with no ``infer_shape``: its shape is known only by computing it."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


# name -> (step(i, s_row, M, W, w), the same step in numpy): the step reads ``M[i]``, so
# the trial step of a loop of no step (``M`` of no row) fails
STEPS = {
    "indexing": (lambda i, s, M, W, w: M[i] * w.sum(), lambda i, s, M, W, w: M[i] * w.sum()),
    "dot": (lambda i, s, M, W, w: T.dot(M[i], W), lambda i, s, M, W, w: M[i] @ W),
    "reshape": (
        lambda i, s, M, W, w: T.reshape(T.concatenate([M[i], M[i]]), (2, -1)),
        lambda i, s, M, W, w: np.concatenate([M[i], M[i]]).reshape(2, -1),
    ),
    "join": (
        lambda i, s, M, W, w: T.concatenate([M[i], w, M[i]]),
        lambda i, s, M, W, w: np.concatenate([M[i], w, M[i]]),
    ),
    "subtensor of a sequence": (
        lambda i, s, M, W, w: s[1:] * M[i].sum(),
        lambda i, s, M, W, w: s[1:] * M[i].sum(),
    ),
    "a nested loop": (
        lambda i, s, M, W, w: graphc.scan(
            lambda r, m: r * m.sum(), sequences=W.T, non_sequences=M[i]
        )[0],
        lambda i, s, M, W, w: W.T * M[i].sum(),
    ),
    "no infer_shape, computable": (
        lambda i, s, M, W, w: _Twice()(w) + M[i].sum(),
        lambda i, s, M, W, w: 2 * w + M[i].sum(),
    ),
}


def _compiled_step(name, linker):
    step, _ = STEPS[name]
    idx, s, M = T.lvector("idx"), T.dmatrix("s"), T.dmatrix("M")
    W, w = T.dmatrix("W"), T.dvector("w")
    ys, _ = graphc.scan(step, sequences=[idx, s], non_sequences=[M, W, w])
    return _compiled([idx, s, M, W, w], ys, linker)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("name", list(STEPS))
def test_no_step_whose_trial_fails_compiles_nothing_and_gives_numpy_shapes(compiles, name, linker):
    f = _compiled_step(name, linker)
    _, ref = STEPS[name]
    counted = compiles()

    @settings(max_examples=8, deadline=None, derandomize=True)
    @given(n=st.sampled_from([0, 0, 2]), c=st.integers(1, 4), k=st.integers(0, 3),
           c2=st.integers(1, 4))  # fmt: skip
    def check(n, c, k, c2):
        iv = np.arange(n, dtype="int64")[::-1]
        sv = np.arange(n * c2, dtype=float).reshape(n, c2)
        mv = np.arange(n * c, dtype=float).reshape(n, c) + 1.0
        wm, wv = np.linspace(0.0, 1.0, c * k).reshape(c, k), np.linspace(1.0, 2.0, k)
        # numpy's row: the step on an M of one row (the loop's own M has none)
        row = ref(0, np.zeros(c2), np.ones((1, c)), wm, wv).shape
        want = np.array([ref(i, sv[t], mv, wm, wv) for t, i in enumerate(iv)])
        got = f(iv, sv, mv, wm, wv)
        assert got.shape == (n, *row)
        np.testing.assert_allclose(got, want.reshape(n, *row))

    check()
    assert counted == []


@pytest.mark.parametrize("linker", LINKERS)
def test_the_last_resort_is_the_static_shape(compiles, linker):
    """An Op without ``infer_shape`` over a value the trial step cannot compute (``M[i]``
    of no row): no shape is known, the static one is taken (unknown sizes as 0)."""
    idx, M = T.lvector("idx"), T.dmatrix("M")
    ys, _ = graphc.scan(lambda i, M: [_Twice()(M[i]), T.outer(M[i], M[i, :2])],
                        sequences=idx, non_sequences=M)  # fmt: skip
    f = _compiled([idx, M], ys, linker)
    counted = compiles()
    twice, outer = f(np.zeros(0, "int64"), np.zeros((0, 3)))
    assert twice.shape == (0, 0)
    assert outer.shape == (0, 3, 2)  # from the step inputs' shapes
    assert counted == []


def test_scan_infer_shape_gives_steps_times_the_row_shape():
    """The shape of a loop's stacked output, as the outer graph infers it: the step count,
    then each row axis as an input's axis where the step graph says so (no loop runs to
    know it), else the output's own size."""
    s, W = T.dmatrix("s"), T.dmatrix("W")
    ys, _ = graphc.scan(lambda r, W: [T.dot(r, W), T.dot(r, W)[1:]], sequences=s,
                        non_sequences=W)  # fmt: skip
    node = ys[0].owner
    shapes = [shape_tuple(v) for v in node.inputs]
    direct, sliced = node.op.infer_shape(None, node, shapes)
    assert direct == (node.inputs[0], shapes[2][1])  # n_steps, then W's second axis
    assert not any(o in ancestors([direct[1]]) for o in node.outputs)
    assert ys[1] in ancestors([sliced[1]])  # a slice's length: read from the output
    f = graphc.function([s, W], [*direct, *sliced], mode=graphc.Mode(linker="py"))
    sv, wv = np.ones((5, 3)), np.ones((3, 4))
    assert [int(v) for v in f(sv, wv)] == [*(sv @ wv).shape, *(sv @ wv)[:, 1:].shape]
