"""Shape and construction Ops against numpy: values, static/inferred shapes, gradients."""

from __future__ import annotations

import numpy as np
import pytest
from graph_checks import check_infer_shape, check_static, run
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as gt
from graphc.tensor.basic import (
    Alloc,
    Join,
    MakeVector,
    NotScalarConstantError,
    Reshape,
    alloc,
    arange,
    concatenate,
    eye,
    flatten,
    full_like,
    get_scalar_constant_value,
    join,
    ones,
    ones_like,
    reshape,
    shape_tuple,
    specify_shape,
    stack,
    zeros,
    zeros_like,
)
from graphc.tensor.type import TensorType

SETTINGS = settings(max_examples=25, deadline=None)
DTYPES = ["float64", "float32", "float16", "int32", "int64", "uint8"]


def var_for(value, name="x", static=False):
    shape = [1 if s == 1 else (s if static else None) for s in value.shape]
    return TensorType(str(value.dtype), shape)(name)


def verify(fn, points):
    from graphc.gradient import verify_grad

    verify_grad(fn, points, rng=np.random.default_rng(0))


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def arrays(draw, shape=None, dtype=None):
    shape = draw(shapes) if shape is None else shape
    dtype = dtype or draw(st.sampled_from(DTYPES))
    return np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)


# ------------------------------------------------------------------ reshape / flatten


@st.composite
def reshape_case(draw):
    v = draw(arrays())
    n = v.size
    dims: list[int] = []
    rest = n
    for _ in range(draw(st.integers(0, 3))):
        divs = [d for d in range(1, 5) if rest % d == 0] if rest else [0, 1, 2]
        d = draw(st.sampled_from(divs))
        dims.append(d)
        rest = rest // d if d else rest
    if rest != 1 or not dims or 0 in dims:
        dims.append(rest if 0 not in dims else 0)
    if int(np.prod(dims)) != n:
        dims = [n]
    if draw(st.booleans()) and 0 not in dims:
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return v, tuple(dims)


@SETTINGS
@given(reshape_case(), st.booleans(), st.booleans())
def test_reshape_matches_numpy(case, static, symbolic):
    v, dims = case
    x = var_for(v, static=static)
    if symbolic:
        s = gt.lvector("s")
        out = reshape(x, s, ndim=len(dims))
        ins = {x: v, s: np.asarray(dims, dtype="int64")}
    else:
        out = x.reshape(dims)
        ins = {x: v}
    assert isinstance(out.owner.op, Reshape)
    got = run(out, ins)
    want = v.reshape(dims)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == v.dtype
    check_static(out, got)
    check_infer_shape(out, ins)
    if got.size:
        assert np.shares_memory(got, v)  # a C-contiguous input gives a view


def test_reshape_copies_when_numpy_must():
    x = gt.matrix("x")
    v = np.arange(12.0).reshape(3, 4).T  # not contiguous: numpy copies
    got = run(x.reshape((12,)), {x: v})
    np.testing.assert_array_equal(got, v.reshape(12))
    assert not np.shares_memory(got, v)
    assert Reshape(2).view_map == {0: [0]}


def test_reshape_static_and_errors():
    x = TensorType("float64", (2, 6))("x")
    assert x.reshape((3, -1)).type.shape == (3, 4)
    assert gt.matrix().reshape((gt.lscalar(), 3)).type.shape == (None, 3)
    with pytest.raises(ValueError, match="at most one"):
        x.reshape((-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape((5, 2))
    y = gt.matrix("y")
    with pytest.raises(ValueError, match=r"Reshape\{1\}.*\(2, 3\)"):
        run(y.reshape((5,)), {y: np.zeros((2, 3))})
    with pytest.raises(TypeError, match="integer"):
        reshape(y, gt.dvector("s"), ndim=1)
    assert str(y.reshape((6,)).owner.op) == "Reshape{1}"


@SETTINGS
@given(arrays(dtype="float64"), st.data())
def test_flatten(v, data):
    ndim = data.draw(st.integers(1, max(v.ndim, 1)))
    x = var_for(v)
    out = flatten(x, ndim)
    want = v.reshape(v.shape[: ndim - 1] + (int(np.prod(v.shape[ndim - 1 :])),))
    got = run(out, {x: v})
    np.testing.assert_array_equal(got, want)
    assert out.ndim == ndim
    check_infer_shape(out, {x: v})


def test_reshape_flatten_grad():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(2, 3, 2))
    verify(lambda x: x.reshape((3, -1)) * x.reshape((3, 4)), [v])
    verify(lambda x: flatten(x, 2), [v])


# ------------------------------------------------------------------ join / stack


@st.composite
def join_case(draw):
    base = list(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    axis = draw(st.integers(-len(base), len(base) - 1))
    k = draw(st.integers(1, 3))
    parts = []
    for j in range(k):
        shp = list(base)
        shp[axis] = draw(st.integers(0, 3))
        dt = draw(st.sampled_from(["float64", "float32", "int32"]))
        parts.append((np.arange(int(np.prod(shp))).reshape(shp) + j).astype(dt))
    return parts, axis


@SETTINGS
@given(join_case(), st.booleans())
def test_join_matches_numpy(case, static):
    parts, axis = case
    xs = [var_for(p, f"x{i}", static=static) for i, p in enumerate(parts)]
    out = join(axis, *xs)
    ins = dict(zip(xs, parts))
    got = run(out, ins)
    want = np.concatenate(parts, axis=axis)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    check_static(out, got)
    if len(parts) > 1:
        assert isinstance(out.owner.op, Join)
        check_infer_shape(out, ins)
        assert not any(np.shares_memory(got, p) for p in parts)
    np.testing.assert_array_equal(run(concatenate(xs, axis=axis), ins), want)


@SETTINGS
@given(st.data())
def test_stack_matches_numpy(data):
    shp = data.draw(shapes)
    k = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-len(shp) - 1, len(shp)))
    parts = [np.arange(int(np.prod(shp)), dtype="float64").reshape(shp) + j for j in range(k)]
    xs = [var_for(p, f"x{j}") for j, p in enumerate(parts)]
    out = stack(xs, axis=axis)
    ins = dict(zip(xs, parts))
    np.testing.assert_array_equal(run(out, ins), np.stack(parts, axis=axis))


def test_stack_scalars_is_makevector_and_errors():
    a, b = gt.lscalar("a"), gt.iscalar("b")
    out = stack([a, b])
    assert isinstance(out.owner.op, MakeVector) and out.dtype == "int64"
    assert out.type.shape == (2,)
    np.testing.assert_array_equal(run(out, {a: np.int64(3), b: np.int32(4)}), [3, 4])
    assert str(out.owner.op) == "MakeVector{dtype='int64'}"
    x, y = TensorType("float64", (2, 3))("x"), TensorType("float64", (4, 5))("y")
    with pytest.raises(ValueError, match=r"Join\{axis=0\}.*axis 1"):
        join(0, x, y)
    with pytest.raises(TypeError, match="same ndim"):
        join(0, x, gt.vector())
    with pytest.raises(ValueError, match="out of range"):
        join(2, x, x)
    u, w = gt.matrix("u"), gt.matrix("w")
    with pytest.raises(ValueError, match=r"Join\{axis=0\}.*\(2, 3\), \(2, 4\)"):
        run(join(0, u, w), {u: np.zeros((2, 3)), w: np.zeros((2, 4))})


def test_join_stack_grad():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(1, 3))
    verify(lambda x, y: join(0, x, y, x), [a, b])
    verify(lambda x, y: stack([x, y[0] * x[1]], axis=1), [a[0], b])
    verify(lambda x: stack([x[0, 0], x[1, 2]]), [a])


# ------------------------------------------------------------------ alloc family


@SETTINGS
@given(st.data())
def test_alloc_broadcasts_value(data):
    shp = data.draw(shapes)
    k = data.draw(st.integers(0, len(shp)))
    vshape = tuple(1 if data.draw(st.booleans()) else s for s in shp[k:])
    dt = data.draw(st.sampled_from(DTYPES))
    v = (np.arange(int(np.prod(vshape))).reshape(vshape) + 1).astype(dt)
    x = var_for(v)
    dims = [gt.lscalar(f"d{i}") if data.draw(st.booleans()) else s for i, s in enumerate(shp)]
    ins = {x: v}
    ins.update({d: np.int64(s) for d, s in zip(dims, shp) if not isinstance(d, int)})
    out = alloc(x, *dims)
    assert isinstance(out.owner.op, Alloc)
    got = run(out, ins)
    np.testing.assert_array_equal(got, np.broadcast_to(v, shp))
    assert got.dtype == v.dtype and got.flags.writeable
    assert got.size == 0 or not np.shares_memory(got, v)
    check_static(out, got)
    check_infer_shape(out, ins)


def test_alloc_grad_and_errors():
    rng = np.random.default_rng(0)
    verify(lambda v: alloc(v, 3, 2, 4), [rng.normal(size=(1, 4))])
    verify(lambda v: alloc(v, 2, 3), [rng.normal(size=())])
    with pytest.raises(ValueError, match="does not broadcast"):
        alloc(TensorType("float64", (3,))("v"), 2, 4)
    v = gt.vector("v")
    with pytest.raises(ValueError, match=r"Alloc: cannot broadcast.*\(3,\) to \(2, 4\)"):
        run(alloc(v, 2, 4), {v: np.zeros(3)})


def test_zeros_ones_full_like():
    x = gt.imatrix("x")
    v = np.arange(6, dtype="int32").reshape(2, 3)
    np.testing.assert_array_equal(run(zeros_like(x), {x: v}), np.zeros_like(v))
    assert zeros_like(x).dtype == "int32" and ones_like(x, "float32").dtype == "float32"
    np.testing.assert_array_equal(run(ones_like(x), {x: v}), np.ones_like(v))
    np.testing.assert_array_equal(run(full_like(x, 7), {x: v}), np.full_like(v, 7))
    z = zeros((2, 3), dtype="int64")
    assert z.type.shape == (2, 3) and run(z, {}).dtype == np.int64
    n = gt.lscalar("n")
    np.testing.assert_array_equal(run(ones((n, 2)), {n: np.int64(0)}), np.ones((0, 2)))
    np.testing.assert_array_equal(run(gt.full((2,), 3.5), {}), [3.5, 3.5])
    np.testing.assert_array_equal(run(gt.broadcast_to(x[0], (2, 2, 3)), {x: v}),
                                  np.broadcast_to(v[0], (2, 2, 3)))  # fmt: skip


# ------------------------------------------------------------------ arange / eye


@SETTINGS
@given(
    st.integers(-5, 5),
    st.integers(-5, 5),
    st.integers(-3, 3).filter(bool),
    st.sampled_from(["int64", "int32", "float64"]),
)
def test_arange_matches_numpy(start, stop, step, dtype):
    out = arange(start, stop, step, dtype=dtype)
    want = np.arange(start, stop, step, dtype=dtype)
    np.testing.assert_array_equal(run(out, {}), want)
    assert out.type.shape == want.shape
    a, b, c = gt.lscalar("a"), gt.lscalar("b"), gt.lscalar("c")
    sym = arange(a, b, c)
    ins = {a: np.int64(start), b: np.int64(stop), c: np.int64(step)}
    assert sym.dtype == "int64"
    np.testing.assert_array_equal(run(sym, ins), np.arange(start, stop, step))
    check_infer_shape(sym, ins)
    f = gt.dscalar("f")
    fsym = arange(f, stop, 0.5)
    fins = {f: np.float64(start / 3)}
    np.testing.assert_allclose(run(fsym, fins), np.arange(start / 3, stop, 0.5))
    check_infer_shape(fsym, fins)


def test_arange_defaults_grad_and_errors():
    assert arange(5).dtype == "int64" and arange(2.5).dtype == graphc.config.floatX
    assert arange(gt.iscalar()).dtype == "int32"
    with pytest.raises(ValueError, match="step must not be zero"):
        arange(0, 5, 0)
    c = gt.lscalar("c")
    with pytest.raises(ValueError, match="ARange.*step"):
        run(arange(0, 5, c), {c: np.int64(0)})
    verify(lambda s, d: arange(s, 3.0, d), [np.array(0.25), np.array(0.7)])


@SETTINGS
@given(st.integers(0, 4), st.none() | st.integers(0, 4), st.integers(-4, 4))
def test_eye(n, m, k):
    out = eye(n, m, k, dtype="float32")
    np.testing.assert_array_equal(run(out, {}), np.eye(n, m, k, dtype="float32"))
    assert out.type.shape == (n, n if m is None else m)
    a = gt.lscalar("a")
    sym = eye(a, m, k)
    np.testing.assert_array_equal(run(sym, {a: np.int64(n)}), np.eye(n, m, k))
    check_infer_shape(sym, {a: np.int64(n)})


# ------------------------------------------------------------------ specify_shape / constants


def test_specify_shape():
    x = gt.matrix("x")
    out = specify_shape(x, (2, None))
    assert out.type.shape == (2, None)
    v = np.zeros((2, 5))
    assert run(out, {x: v}) is v
    check_infer_shape(out, {x: v})
    with pytest.raises(AssertionError, match=r"SpecifyShape.*\(2, None\).*\(3, 5\)"):
        run(out, {x: np.zeros((3, 5))})
    n = gt.lscalar("n")
    sym = specify_shape(x, (n, 5))
    assert sym.type.shape == (None, 5)
    check_infer_shape(sym, {x: v, n: np.int64(2)})
    with pytest.raises(ValueError, match="cannot have size 4"):
        specify_shape(out, (4, None))
    from graphc.gradient import grad

    g = grad(out.sum(), x)
    np.testing.assert_array_equal(run(g, {x: v}), np.ones((2, 5)))


def test_get_scalar_constant_value():
    assert get_scalar_constant_value(3) == 3
    assert get_scalar_constant_value(gt.constant(np.float32(2.5))) == np.float32(2.5)
    x = TensorType("float64", (None, 4))("x")
    assert get_scalar_constant_value(x.shape[1]) == 4
    assert get_scalar_constant_value(shape_tuple(x)[1]) == 4
    assert get_scalar_constant_value(gt.cast(gt.constant(np.int64(7)), "float32")) == 7.0
    assert get_scalar_constant_value(zeros((2, 3))) == 0
    assert get_scalar_constant_value(stack([gt.lscalar(), x.shape[1]])[1]) == 4
    v = get_scalar_constant_value(gt.constant(np.int64(2)) * gt.constant(np.int64(5)))
    assert v == 10 and isinstance(v, np.integer)
    for bad in (x.shape[0], x, gt.constant(np.arange(3)), gt.lscalar()):
        with pytest.raises(NotScalarConstantError):
            get_scalar_constant_value(bad)
