"""Indexing Ops against numpy: values, views, static shapes, infer_shape and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from graph_checks import check_infer_shape, check_static, run
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc.tensor as gt
from graphc.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    getitem,
    inc_subtensor,
    set_subtensor,
)
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)
DTYPES = ["float64", "float32", "float16", "int32", "int64"]


def tensor_of(shape, dtype="float64", name="x", static=False):
    st_shape = [1 if s == 1 else (s if static else None) for s in shape]
    return TensorType(dtype, st_shape)(name)


shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3)


@st.composite
def value_and_shape(draw, dtype=None):
    shp = tuple(draw(shapes))
    dt = dtype or draw(st.sampled_from(DTYPES))
    data = np.arange(int(np.prod(shp)), dtype=dt).reshape(shp) * (1 if "int" in dt else 0.5)
    return data.astype(dt)


@st.composite
def basic_index(draw, shape):
    idx = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "slice", "none"]))
        if kind == "int" and n > 0:
            idx.append(draw(st.integers(-n, n - 1)))
        elif kind == "none":
            idx.append(None)
            idx.append(slice(None))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.sampled_from([1, 2, 3, -1, -2, -3])
            idx.append(slice(draw(bound), draw(bound), draw(step)))
    # sometimes drop trailing items or use an Ellipsis
    if draw(st.booleans()) and len(idx) > 1:
        k = draw(st.integers(0, len(idx) - 1))
        consumed_after = sum(i is not None for i in idx[k + 1 :])
        if consumed_after:
            idx = idx[: k + 1] + [Ellipsis] + idx[len(idx) - 1 :]
    return tuple(idx)


@SETTINGS
@given(st.data())
def test_basic_indexing_matches_numpy(data):
    v = data.draw(value_and_shape())
    idx = data.draw(basic_index(v.shape))
    static = data.draw(st.booleans())
    x = tensor_of(v.shape, str(v.dtype), static=static)
    out = x[idx]
    got = run(out, {x: v})
    want = v[idx]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert isinstance(got, np.ndarray)
    check_static(out, got)
    if got.size:
        assert np.shares_memory(got, v)  # a view
    if out.owner is not None and isinstance(out.owner.op, Subtensor):
        check_infer_shape(out, {x: v})


@SETTINGS
@given(st.data())
def test_symbolic_slice_bounds(data):
    v = data.draw(value_and_shape("float64"))
    n = v.shape[0]
    start = data.draw(st.integers(-n - 2, n + 2))
    stop = data.draw(st.integers(-n - 2, n + 2))
    step = data.draw(st.sampled_from([1, 2, -1, -3]))
    x = tensor_of(v.shape)
    a, b, c = gt.lscalar("a"), gt.iscalar("b"), gt.lscalar("c")
    out = x[a:b:c]
    assert isinstance(out.owner.op, Subtensor)
    vals = {x: v, a: np.int64(start), b: np.int32(stop), c: np.int64(step)}
    np.testing.assert_array_equal(run(out, vals), v[start:stop:step])
    check_infer_shape(out, vals)
    if n:
        i = gt.lscalar("i")
        k = data.draw(st.integers(-n, n - 1))
        np.testing.assert_array_equal(run(x[i], {x: v, i: np.int64(k)}), v[k])


def test_subtensor_str_and_props():
    x = gt.matrix("x")
    i = gt.lscalar("i")
    assert str(x[1:3, 0].owner.op) == "Subtensor{1:3, 0}"
    assert str(x[i, ::-1].owner.op) == "Subtensor{int64, ::-1}"
    assert str(x[i:].owner.op) == "Subtensor{int64:}"
    assert x[1:3].owner.op == x[1:3].owner.op
    assert x[1:3].owner.op != x[1:4].owner.op
    assert x[0, 0].ndim == 0 and x[None].ndim == 3


def test_scalar_result_is_ndarray():
    x = gt.matrix("x")
    v = np.arange(6.0).reshape(2, 3)
    got = run(x[1, 2], {x: v})
    assert isinstance(got, np.ndarray) and got.shape == () and got == 5.0


def test_runtime_index_error_names_op_and_shape():
    x = gt.matrix("x")
    i = gt.lscalar("i")
    with pytest.raises(IndexError, match=r"Subtensor\{int64\}.*\(2, 3\)"):
        run(x[i], {x: np.zeros((2, 3)), i: np.int64(5)})
    with pytest.raises(IndexError, match="AdvancedSubtensor1"):
        run(x[[0, 7]], {x: np.zeros((2, 3))})


def test_static_index_error_and_bad_indices():
    x = TensorType("float64", (2, None))("x")
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="integer scalar"):
        x[gt.dscalar("f")]
    with pytest.raises(NotImplementedError, match="boolean"):
        x[gt.bmatrix("m") > 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]


@SETTINGS
@given(st.data())
def test_advanced_subtensor1(data):
    v = data.draw(value_and_shape())
    n = v.shape[0]
    k = data.draw(st.integers(0, 5))
    idx = np.asarray(
        data.draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)) if n else [],
        dtype="int64",
    )
    x = tensor_of(v.shape, str(v.dtype))
    i = gt.lvector("i")
    out = x[i]
    assert isinstance(out.owner.op, AdvancedSubtensor1)
    got = run(out, {x: v, i: idx})
    np.testing.assert_array_equal(got, v[idx])
    assert got.size == 0 or not np.shares_memory(got, v)
    check_infer_shape(out, {x: v, i: idx})
    # a constant list works too
    np.testing.assert_array_equal(run(x[list(idx)], {x: v}), v[idx])


@st.composite
def advanced_index(draw, shape):
    bshape = draw(st.sampled_from([(2,), (3,), (2, 1), (1, 3)]))
    size = int(np.prod(bshape))
    nonempty = [a for a, n in enumerate(shape) if n > 0]
    if not nonempty:
        return (np.zeros(0, dtype="int64"),)
    forced = draw(st.sampled_from(nonempty))
    idx: list = []
    for a, n in enumerate(shape):
        kind = "array" if a == forced else draw(st.sampled_from(["array", "slice", "int", "none"]))
        if kind == "array" and n > 0:
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size))
            idx.append(np.asarray(vals, dtype="int64").reshape(bshape))
        elif kind == "int" and n > 0:
            idx.append(draw(st.integers(-n, n - 1)))
        elif kind == "none":
            idx.extend([None, slice(None)])
        else:
            start = draw(st.none() | st.integers(-n, n))
            idx.append(slice(start, None, draw(st.sampled_from([None, -1, 2]))))
    return tuple(idx)


@SETTINGS
@given(st.data())
def test_advanced_subtensor_general(data):
    v = data.draw(value_and_shape())
    idx = data.draw(advanced_index(v.shape))
    x = tensor_of(v.shape, str(v.dtype))
    ins = {x: v}
    sym_idx = []
    for k, item in enumerate(idx):
        if isinstance(item, np.ndarray) and data.draw(st.booleans()):
            var = TensorType("int64", (None,) * item.ndim)(f"i{k}")
            ins[var] = item.astype("int64")
            sym_idx.append(var)
        else:
            sym_idx.append(item)
    out = getitem(x, tuple(sym_idx))
    want = v[idx]
    got = run(out, ins)
    np.testing.assert_array_equal(got, want)
    check_static(out, got)
    if isinstance(out.owner.op, AdvancedSubtensor | AdvancedSubtensor1):
        check_infer_shape(out, ins)


def test_advanced_static_shape_placement():
    x = TensorType("float64", (3, 4, 5))("x")
    i = TensorType("int64", (2,))("i")
    assert x[i, :, i].type.shape == (2, 4)  # separated: broadcast dims first
    assert x[:, i, i].type.shape == (3, 2)  # adjacent: in place
    assert x[0, :, i].type.shape == (2, 4)  # ints count as advanced indices
    assert x[None, :, i].type.shape == (1, 3, 2, 5)
    assert x[i, None, i].type.shape == (2, 1, 5)


def test_constant_boolean_mask():
    x = gt.matrix("x")
    v = np.arange(12.0).reshape(3, 4)
    mask = v % 3 == 0
    np.testing.assert_array_equal(run(x[mask], {x: v}), v[mask])
    np.testing.assert_array_equal(run(x[:, mask[0]], {x: v}), v[:, mask[0]])


# ------------------------------------------------------------------ set / inc


@SETTINGS
@given(st.data())
def test_set_inc_basic(data):
    v = data.draw(value_and_shape())
    idx = data.draw(basic_index(v.shape))
    want_region = v[idx]
    y_shape = want_region.shape[data.draw(st.integers(0, want_region.ndim)) :]
    if data.draw(st.booleans()) and y_shape:
        y_shape = (1,) + y_shape[1:]  # broadcast along the first axis of y
    yv = (np.arange(int(np.prod(y_shape))).reshape(y_shape) + 7).astype(v.dtype)
    x = tensor_of(v.shape, str(v.dtype))
    y = tensor_of(y_shape, str(v.dtype), name="y")
    for set_ in (True, False):
        fn = set_subtensor if set_ else inc_subtensor
        out = fn(x[idx], y)
        vcopy = v.copy()
        got = run(out, {x: vcopy, y: yv})
        want = v.copy()
        if set_:
            want[idx] = yv
        else:
            want[idx] += yv
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(vcopy, v)  # not in place
        assert out.type == x.type
        check_infer_shape(out, {x: v, y: yv})


@SETTINGS
@given(st.data())
def test_inc_advanced1_accumulates_repeats(data):
    v = data.draw(value_and_shape("float64"))
    n = v.shape[0]
    k = data.draw(st.integers(0, 6))
    idx = np.asarray(
        data.draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)) if n else [],
        dtype="int64",
    )
    k = len(idx)
    yv = np.arange(k * int(np.prod(v.shape[1:])), dtype="float64").reshape((k, *v.shape[1:]))
    x = tensor_of(v.shape)
    i = gt.lvector("i")
    y = tensor_of(yv.shape, name="y")
    out = inc_subtensor(x[i], y)
    assert isinstance(out.owner.op, AdvancedIncSubtensor1)
    want = v.copy()
    np.add.at(want, idx, yv)
    np.testing.assert_array_equal(run(out, {x: v, i: idx, y: yv}), want)
    out = set_subtensor(x[i], y)
    want = v.copy()
    want[idx] = yv
    np.testing.assert_array_equal(run(out, {x: v, i: idx, y: yv}), want)


def test_inc_advanced_general_and_newaxis():
    x = gt.matrix("x")
    v = np.arange(12.0).reshape(3, 4)
    rows, cols = np.array([0, 0, 2]), np.array([1, 1, 3])
    out = inc_subtensor(x[rows, cols], 1.0)
    assert isinstance(out.owner.op, AdvancedIncSubtensor)
    want = v.copy()
    np.add.at(want, (rows, cols), 1.0)
    np.testing.assert_array_equal(run(out, {x: v}), want)
    want = v.copy()
    want[rows, 1:] = 5.0
    np.testing.assert_array_equal(run(set_subtensor(x[rows, 1:], 5.0), {x: v}), want)
    # new axes on basic indexing
    r = gt.row("r")
    out = set_subtensor(x[None, 1], r)
    want = v.copy()
    want[1] = np.ones(4)
    np.testing.assert_array_equal(run(out, {x: v, r: np.ones((1, 4))}), want)


def test_inplace_variants_destroy_x():
    x = gt.matrix("x")
    v = np.zeros((2, 3))
    out = inc_subtensor(x[0], 1.0, inplace=True)
    assert out.owner.op.destroy_map == {0: [0]}
    assert IncSubtensor(out.owner.op.idx_list).destroy_map == {}
    res = run(out, {x: v})
    assert res is v and v[0].tolist() == [1.0, 1.0, 1.0]
    w = np.zeros((2, 3))
    res = run(set_subtensor(x[[1]], 2.0, inplace=True), {x: w})
    assert res is w and w[1].tolist() == [2.0] * 3
    assert str(AdvancedIncSubtensor1(True, True)) == "AdvancedIncSubtensor1{inplace,set}"
    assert str(IncSubtensor((0,), False, True)) == "IncSubtensor{Set;0}"


def test_set_subtensor_errors():
    x = gt.fmatrix("x")
    with pytest.raises(TypeError, match="indexing expression"):
        set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match="lossy cast"):
        set_subtensor(x[0], gt.dvector("y"))
    with pytest.raises(TypeError, match="IncSubtensor"):
        inc_subtensor(x[0], gt.fmatrix("y"))
    xs = TensorType("float64", (3, 4))("xs")
    with pytest.raises(ValueError, match="does not broadcast"):
        set_subtensor(xs[0], TensorType("float64", (3,))("y"))
    assert set_subtensor(x[0], 1.0).dtype == "float32"  # python float constants fit
    assert gt.set_subtensor is set_subtensor and gt.inc_subtensor is inc_subtensor


# ------------------------------------------------------------------ gradients


def _grad_check(fn, points):
    from graphc.gradient import verify_grad

    verify_grad(fn, points, rng=np.random.default_rng(0))


@SETTINGS
@given(st.data())
def test_grad_subtensor_basic(data):
    v = data.draw(value_and_shape("float64")) / 3.0 + 0.25
    idx = data.draw(basic_index(v.shape))
    _grad_check(lambda x: x[idx], [v])


@SETTINGS
@given(st.data())
def test_grad_inc_set_subtensor(data):
    v = data.draw(value_and_shape("float64")) / 3.0 + 0.25
    idx = data.draw(basic_index(v.shape))
    region = v[idx]
    cut = data.draw(st.integers(0, region.ndim))
    y_shape = region.shape[cut:]
    if data.draw(st.booleans()) and y_shape:
        y_shape = (1,) + y_shape[1:]
    yv = np.linspace(-1, 1, int(np.prod(y_shape))).reshape(y_shape)
    set_ = data.draw(st.booleans())
    fn = set_subtensor if set_ else inc_subtensor
    _grad_check(lambda x, y: fn(x[idx], y) * x, [v, yv])


def test_grad_advanced():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(4, 3))
    idx = np.array([0, 2, 2, -1])
    _grad_check(lambda x: x[idx], [v])
    _grad_check(lambda x: x[idx, [0, 1, 1, 2]], [v])
    _grad_check(lambda x: x[1:, [2, 0]], [v])
    yv = rng.normal(size=(4, 3))
    _grad_check(lambda x, y: inc_subtensor(x[idx], y) * x, [v, yv])
    _grad_check(lambda x, y: set_subtensor(x[[3, 1]], y[:2]) * x, [v, yv])
    _grad_check(lambda x, y: inc_subtensor(x[idx, [0, 1, 1, 2]], y[0, 0]), [v, yv])
    _grad_check(lambda x, y: set_subtensor(x[[0, 2], [1, 0]], y[0, :2]) * x, [v, yv])


def test_grad_symbolic_index_is_disconnected():
    from graphc.gradient import grad

    x = gt.vector("x")
    i = gt.lscalar("i")
    g = grad(x[i:].sum(), x)
    v = np.arange(5.0)
    np.testing.assert_array_equal(run(g, {x: v, i: np.int64(2)}), [0, 0, 1, 1, 1])
