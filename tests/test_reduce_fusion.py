"""``sum`` of an element-wise expression in one pass (``Sum{Composite{...}}``): when the
rewrite applies, and results against numpy on every linker."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.scalar import basic as ps
from graphc.tensor.math import CAReduce, ElemwiseSums

LINKERS = ["c|py", "vm", "py"]


def _kinds(f):
    return [type(n.op) for n in f.maker.fgraph.toposort()]


def _one_sum(f) -> bool:
    """The function is one loop that only sums its value (no array written)."""
    (node,) = f.maker.fgraph.toposort()
    return node.op.kept == () and node.op.summed == (0,) and str(node.op).startswith("Sum{")


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "empty"])
def test_sum_of_exp_is_one_pass_and_matches_numpy(linker, dtype, layout):
    x = T.matrix("x", dtype=dtype)
    f = graphc.function([x], T.exp(x).sum(), mode=graphc.Mode(linker=linker))
    assert _kinds(f) == [ElemwiseSums] and _one_sum(f)
    rng = np.random.default_rng(0)
    v = rng.normal(size=(300, 201)).astype(dtype)
    v = {"C": v, "F": np.asfortranarray(v), "strided": v[::2, ::3], "empty": v[:0]}[layout]
    got = f(v)
    assert got.dtype == dtype
    want = np.exp(v.astype("float64")).sum()
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 1e-5)


@pytest.mark.parametrize("linker", LINKERS)
def test_mean_of_an_expression_of_one_input(linker):
    x = T.dvector("x")
    f = graphc.function([x], (x * T.tanh(x) + 1.0).mean(), mode=graphc.Mode(linker=linker))
    assert any(
        isinstance(n.op, ElemwiseSums) and n.op.kept == () for n in f.maker.fgraph.toposort()
    )
    v = np.random.default_rng(1).normal(size=10001)
    np.testing.assert_allclose(f(v), (v * np.tanh(v) + 1.0).mean(), rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_nan_and_inf_propagate(linker):
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x).sum(), mode=graphc.Mode(linker=linker))
    assert np.isnan(f(np.array([0.0, np.nan, 1.0] * 40)))
    assert f(np.array([0.0, 1000.0] * 40)) == np.inf
    assert f(np.array([-np.inf] * 70)) == 0.0


def test_not_fused_when_shapes_might_differ_or_the_value_is_needed():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = graphc.function([x, y], (T.exp(x) * y).sum())  # y may broadcast at run time
    # not the same-shape one-pass sum; the general loop that sums (it broadcasts)
    assert _kinds(f) == [ElemwiseSums]
    g = graphc.function([x, y], (T.exp(x) * y).sum(), mode=graphc.Mode().excluding("multi_fusion"))
    assert ElemwiseSums not in _kinds(g) and CAReduce in _kinds(g)
    np.testing.assert_allclose(g(*[np.ones((2, 2))] * 2), 4 * np.e, rtol=1e-12)
    rng = np.random.default_rng(2)
    xv, yv = rng.normal(size=(4, 5)), rng.normal(size=(1, 5))
    np.testing.assert_allclose(f(xv, yv), (np.exp(xv) * yv).sum(), rtol=1e-12)
    t = T.exp(x)
    g = graphc.function([x], [t.sum(), t * 2])  # t is an output too: it stays an array
    assert not any(
        isinstance(n.op, ElemwiseSums) and not n.op.kept for n in g.maker.fgraph.toposort()
    )
    h = graphc.function([x], T.exp(x).sum(axis=0))  # not every axis
    assert ElemwiseSums not in _kinds(h)


def test_same_shape_inputs_are_fused():
    x = T.dmatrix("x")
    y = T.exp(x) * (x + 1.0)  # every input is x itself
    f = graphc.function([x], y.sum())
    assert _kinds(f) == [ElemwiseSums] and _one_sum(f)
    v = np.random.default_rng(3).normal(size=(7, 9))
    np.testing.assert_allclose(f(v), (np.exp(v) * (v + 1.0)).sum(), rtol=1e-12)


def test_the_rewrite_has_its_own_tag():
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x).sum(), mode=graphc.Mode().excluding("reduce_fusion"))
    assert ElemwiseSums not in _kinds(f) and CAReduce in _kinds(f)


def test_kept_values_are_arrays_of_their_own_in_python():
    """A kept value that numpy gives as a read-only broadcast view (``second(x, y)``) or
    as the input itself (``i0``) is copied, as Elemwise does: a later node may overwrite it
    in place, and must neither fail nor change the input."""
    a, b = ps.ScalarType("float64")("a"), ps.ScalarType("float64")("b")
    inner = ps.Composite([a, b], [ps.second(a, b), a, ps.add(a, b)])
    op = ElemwiseSums(inner, (0, 1), (2,))
    x, y = T.vector("x"), T.scalar("y")
    node = op.make_node(x, y)
    xv, yv = np.array([1.0, 2.0, 3.0]), np.array(0.5)
    cells: list[list] = [[None] for _ in node.outputs]
    op.perform(node, [xv, yv], cells)
    spread, same, total = (c[0] for c in cells)
    np.testing.assert_array_equal(spread, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(same, xv)
    assert total == pytest.approx(7.5)
    for v in (spread, same):
        assert v.flags.writeable and not np.shares_memory(v, xv)
        v += 1.0  # what an in-place reader does
    np.testing.assert_array_equal(xv, [1.0, 2.0, 3.0])
