"""sort, argsort, cumsum, cumprod, repeat, tile, tensordot and batched_dot against numpy,
finite differences and their Ops' infer_shape, under the "py" and "c|py" linkers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.gradient import verify_grad
from graphc.tensor import extra_ops
from graphc.tensor.basic import shape_tuple
from graphc.tensor.type import TensorType

MODES = {
    "py": graphc.Mode(linker="py", optimizer=None),
    "c|py": graphc.Mode(linker="c|py", optimizer="fast_run"),
}
SETTINGS = settings(max_examples=10, deadline=None)


def _var(value, name="x"):
    return TensorType(str(value.dtype), [None] * value.ndim)(name)


@st.composite
def arrays(draw, min_ndim=1, max_ndim=3, min_side=1):
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(st.lists(st.integers(min_side, 4), min_size=ndim, max_size=ndim)))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    # Distinct values away from zero: sort and cumprod are differentiable there.
    n = int(np.prod(shape))
    values = (rng.permutation(n) + 1.0) * rng.choice([-0.25, 0.25], n)
    return values.reshape(shape)


def _axis_or_none(draw, ndim):
    return draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))


def _check(sym, x, xv, want, mode):
    """Values in ``mode``, and the node's infer_shape evaluated without computing it."""
    got = graphc.function([x], sym, mode=MODES[mode])(xv)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.dtype == want.dtype or (want.dtype.kind == "i" and got.dtype.kind == "i")
    node = sym.owner
    while node is not None and type(node.op).__module__ != "graphc.tensor.extra_ops":
        node = node.inputs[0].owner  # past a flatten
    (inferred,) = node.op.infer_shape(None, node, [shape_tuple(i) for i in node.inputs])
    assert tuple(int(s.eval({x: xv})) for s in inferred) == node.outputs[0].eval({x: xv}).shape


@SETTINGS
@given(st.data(), st.sampled_from(sorted(MODES)))
def test_sort_argsort_cumsum_cumprod_match_numpy(data, mode):
    xv = data.draw(arrays())
    axis = data.draw(st.one_of(st.none(), st.integers(-xv.ndim, xv.ndim - 1)))
    x = _var(xv)
    ax = -1 if axis is None else axis
    _check(T.sort(x, ax), x, xv, np.sort(xv, ax), mode)
    _check(T.argsort(x, ax), x, xv, np.argsort(xv, ax), mode)
    _check(T.cumsum(x, axis), x, xv, np.cumsum(xv, axis), mode)
    _check(T.cumprod(x, axis), x, xv, np.cumprod(xv, axis), mode)
    _check(T.sort(x, None), x, xv, np.sort(xv, None), mode)


@settings(max_examples=6, deadline=None)
@given(st.data())
def test_sort_and_cumulative_gradients_match_finite_differences(data):
    xv = data.draw(arrays(max_ndim=2))
    axis = data.draw(st.integers(-xv.ndim, xv.ndim - 1))
    verify_grad(lambda x: T.sort(x, axis), [xv], rng=0)
    verify_grad(lambda x: T.sort(x, None), [xv], rng=0)
    verify_grad(lambda x: T.cumsum(x, axis), [xv], rng=0)
    verify_grad(lambda x: T.cumsum(x), [xv], rng=0)
    verify_grad(lambda x: T.cumprod(x, axis), [xv], rng=0)


@SETTINGS
@given(st.data(), st.sampled_from(sorted(MODES)))
def test_repeat_and_tile_match_numpy_with_gradients(data, mode):
    xv = data.draw(arrays(max_ndim=2))
    axis = data.draw(st.integers(-xv.ndim, xv.ndim - 1))
    x = _var(xv)
    k = data.draw(st.integers(0, 3))
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=xv.shape[axis],
                                         max_size=xv.shape[axis])), dtype="int64")  # fmt: skip
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    _check(T.repeat(x, k, axis), x, xv, np.repeat(xv, k, axis), mode)
    _check(T.repeat(x, counts, axis), x, xv, np.repeat(xv, counts, axis), mode)
    _check(T.repeat(x, k), x, xv, np.repeat(xv, k), mode)
    _check(T.tile(x, reps), x, xv, np.tile(xv, reps), mode)
    verify_grad(lambda x: T.repeat(x, counts, axis), [xv], rng=0)
    verify_grad(lambda x: T.repeat(x, k), [xv], rng=0)
    verify_grad(lambda x: T.tile(x, reps), [xv], rng=0)


def test_symbolic_repeats_and_reps():
    x, r = T.dvector("x"), T.lscalar("r")
    xv = np.array([1.0, 2.0])
    np.testing.assert_array_equal(T.repeat(x, r).eval({x: xv, r: 3}), np.repeat(xv, 3))
    np.testing.assert_array_equal(T.tile(x, (r, 2)).eval({x: xv, r: 2}), np.tile(xv, (2, 2)))
    np.testing.assert_array_equal(T.tile(x, [2], ndim=2).eval({x: xv}), np.tile(xv, (1, 2)))


@st.composite
def tensordot_cases(draw):
    n_sum = draw(st.integers(0, 2))
    free_a = draw(st.lists(st.integers(1, 3), min_size=int(n_sum == 0), max_size=2))
    free_b = draw(st.lists(st.integers(1, 3), min_size=int(n_sum == 0), max_size=2))
    summed = draw(st.lists(st.integers(1, 3), min_size=n_sum, max_size=n_sum))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))

    def layout(free):
        entries = [("f", n) for n in free] + [("s", i) for i in range(n_sum)]
        entries = [entries[k] for k in rng.permutation(len(entries))]
        shape = tuple(n if kind == "f" else summed[n] for kind, n in entries)
        return shape, [entries.index(("s", i)) for i in range(n_sum)]

    shape_a, ax_a = layout(free_a)
    shape_b, ax_b = layout(free_b)
    a = rng.standard_normal(shape_a)
    b = rng.standard_normal(shape_b)
    return a, b, [ax_a, ax_b]


@SETTINGS
@given(tensordot_cases(), st.sampled_from(sorted(MODES)))
def test_tensordot_matches_numpy_with_gradients(case, mode):
    av, bv, axes = case
    a, b = _var(av, "a"), _var(bv, "b")
    got = graphc.function([a, b], T.tensordot(a, b, axes), mode=MODES[mode])(av, bv)
    np.testing.assert_allclose(got, np.tensordot(av, bv, axes), rtol=1e-12, atol=1e-12)
    verify_grad(lambda a, b: T.tensordot(a, b, axes), [av, bv], rng=0)


def test_tensordot_int_axes_and_errors():
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))
    a, b = T.dtensor3("a"), T.dtensor3("b")
    np.testing.assert_allclose(T.tensordot(a, b).eval({a: av, b: bv}), np.tensordot(av, bv))
    np.testing.assert_allclose(
        T.tensordot(a, b, 1).eval({a: av, b: bv[:, :, :4].transpose(2, 0, 1)}),
        np.tensordot(av, bv[:, :, :4].transpose(2, 0, 1), 1),
    )
    with pytest.raises(ValueError, match="axes"):
        T.tensordot(a, b, [[0], [0, 1]])
    with pytest.raises(ValueError, match="out of range"):
        T.tensordot(a, b, [[3], [0]])


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("ranks", [(1, 3), (2, 2), (2, 3), (3, 2), (3, 3), (3, 1)])
def test_batched_dot_matches_per_entry_dot(ranks, mode):
    rng = np.random.default_rng(sum(ranks))
    shapes = {1: (4,), 2: (4, 3), 3: (4, 2, 3)}
    av = rng.standard_normal(shapes[ranks[0]])
    bshape = {1: (4,), 2: (4, 3), 3: (4, 3, 5)}[ranks[1]]
    if ranks[0] == 1:
        bshape = (4, 2, 3)
    bv = rng.standard_normal(bshape)
    a, b = _var(av, "a"), _var(bv, "b")
    got = graphc.function([a, b], T.batched_dot(a, b), mode=MODES[mode])(av, bv)
    if 1 in ranks:
        want = av.reshape(av.shape + (1,) * (bv.ndim - av.ndim)) * bv.reshape(
            bv.shape + (1,) * (av.ndim - bv.ndim)
        )
    else:
        want = np.stack([np.dot(av[i], bv[i]) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    verify_grad(T.batched_dot, [av, bv], rng=0)


def test_bad_arguments_raise_clear_errors():
    x = T.dmatrix("x")
    with pytest.raises(NotImplementedError, match="order"):
        T.sort(x, order="f")
    with pytest.raises(ValueError, match="kind"):
        T.sort(x, kind="bogus")
    with pytest.raises(ValueError, match="axis"):
        T.cumsum(x, axis=2)
    with pytest.raises(TypeError, match="repeats"):
        T.repeat(x, T.dmatrix("r"))
    with pytest.raises(NotImplementedError, match="more than 3"):
        T.batched_dot(T.dtensor4("a"), T.dtensor3("b"))
    f = graphc.function([x], T.repeat(x, np.array([1, 2]), axis=0))
    with pytest.raises(ValueError, match="repeats for an axis"):
        f(np.zeros((3, 2)))
    assert extra_ops.cumsum is T.cumsum
