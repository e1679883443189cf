"""The "c|py" linker against the "py" linker: Elemwise, DimShuffle, reductions, fallback.

A few large functions are compiled once per module (one C module each) and called over
a matrix of layouts, shapes, dtypes and values chosen by hypothesis.
"""

from __future__ import annotations

import gc
import re
import sys
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.graph.basic import Apply, Op
from graphc.graph.fg import FunctionGraph
from graphc.linker import clinker
from graphc.linker.c.common import c_string
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import elemwise_op
from graphc.tensor.type import TensorType
from graphc.vm import make_vm

C_MODE = graphc.Mode(linker="c|py", optimizer=None)
PY_MODE = graphc.Mode(linker="py", optimizer=None)
HSET = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

pytestmark = pytest.mark.skipif(not clinker.available(), reason="no C compiler")


@pytest.fixture(scope="module", autouse=True)
def compiledir(tmp_path_factory):
    """A private compile cache for this module (never the user's)."""
    mp = pytest.MonkeyPatch()
    path = tmp_path_factory.mktemp("graphc-cache")
    path.chmod(0o700)
    mp.setenv("GRAPHC_COMPILEDIR", str(path))
    yield path
    mp.undo()


FLOAT_UNARY = (
    "neg abs sgn sqr exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan arcsin arccos "
    "arctan sinh cosh tanh sigmoid softplus erf floor ceil round_half_to_even identity"
).split()
FLOAT_BINARY = (
    "add sub mul true_div int_div mod pow maximum minimum arctan2 eq neq lt gt le ge second"
).split()
INT_UNARY = "neg abs sgn sqr floor ceil identity invert".split()
INT_BINARY = (
    "add sub mul true_div int_div mod maximum minimum eq neq lt gt le ge and or xor second"
).split()
BOOL_UNARY = "invert identity".split()
BOOL_BINARY = "add mul eq neq lt gt le ge and or xor maximum minimum".split()
REDUCE_AXES = [(0,), (1,), (0, 1)]


def _ew(name, *args):
    return elemwise_op(name)(*args)


def _reductions(x, include_prod=True):
    outs = []
    for axis in REDUCE_AXES:
        outs += [T.sum(x, axis=axis), T.max(x, axis=axis), T.min(x, axis=axis)]
        outs += [T.all(x, axis=axis), T.any(x, axis=axis), T.argmax(x, axis=axis)]
        outs += [T.argmin(x, axis=axis)]
        if include_prod:
            outs.append(T.prod(x, axis=axis))
    return outs


def _graph(dtype: str):
    """Three matrix inputs and every op/reduction with C for ``dtype``."""
    x, y, z = (TensorType(dtype, (None, None))(n) for n in "xyz")
    if dtype in ("float32", "float64"):
        un, bi = FLOAT_UNARY, FLOAT_BINARY
    elif dtype == "bool":
        un, bi = BOOL_UNARY, BOOL_BINARY
    else:
        un, bi = INT_UNARY, INT_BINARY
    outs = [_ew(n, x) for n in un] + [_ew(n, x, y) for n in bi]
    names = [f"{n}(x)" for n in un] + [f"{n}(x, y)" for n in bi]
    outs += [T.switch(T.gt(x, y), y, z), x.T, x.dimshuffle(1, "x", 0)]
    names += ["switch", "x.T", "dimshuffle(1,x,0)"]
    if dtype != "bool":
        outs.append(T.clip(x, y, z))
        names.append("clip")
        fused = ps.Composite(
            *_composite_parts(dtype),
        )
        outs.append(Elemwise(fused)(x, y, z))
        names.append(str(fused))
    red = _reductions(x, include_prod=dtype != "bool")
    outs += red
    names += [str(r.owner.op) for r in red]
    return [x, y, z], outs, names


def _composite_parts(dtype):
    a, b, c = (ps.ScalarType(dtype)() for _ in range(3))
    if dtype in ("float32", "float64"):
        out = ps.add(ps.mul(ps.exp(a), b), ps.sub(ps.tanh(c), ps.mul(a, a)))
        out2 = ps.maximum(a, ps.true_div(b, c))
        return [a, b, c], [out, out2]
    return [a, b, c], [ps.add(ps.mul(a, b), c), ps.minimum(a, ps.int_div(b, c))]


class Pair:
    """One graph compiled with both linkers."""

    def __init__(self, inputs, outputs, names, **kw):
        self.names = names
        self.c = graphc.function(inputs, outputs, mode=C_MODE, **kw)
        self.py = graphc.function(inputs, outputs, mode=PY_MODE, **kw)


@pytest.fixture(scope="module")
def funcs(compiledir):
    return {
        dt: Pair(*_graph(dt)) for dt in ("float64", "float32", "int64", "int8", "uint8", "bool")
    }


def _layout(base: np.ndarray, kind: str) -> np.ndarray:
    """``base``'s values in memory layout ``kind`` (same values, same shape)."""
    if kind == "C":
        return np.ascontiguousarray(base)
    if kind == "F":
        return np.asfortranarray(base)
    if kind == "strided":
        big = np.zeros((base.shape[0] * 2, base.shape[1] * 3), base.dtype)
        big[::2, ::3] = base
        return big[::2, ::3]
    if kind == "reversed":
        return np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1]
    if kind == "transposed":
        return np.ascontiguousarray(base.T).T
    if kind == "broadcast":  # zero strides, read-only
        if base.shape[0] and base.shape[1]:
            base[:] = base[:1]
        return np.broadcast_to(base[:1], base.shape) if base.shape[0] else base
    raise AssertionError(kind)


LAYOUTS = ["C", "F", "strided", "reversed", "transposed", "broadcast"]
SPECIAL = {
    "float64": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e-300],
    "float32": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-38],
}


def _values(draw, dtype, shape):
    n = int(np.prod(shape))
    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        small = st.integers(max(info.min, -9), min(info.max, 9))
        edge = st.sampled_from([info.min, info.max, 0, 1])
        vals = draw(st.lists(st.one_of(small, small, small, edge), min_size=n, max_size=n))
    else:
        reg = st.floats(-8, 8, width=32 if dtype == "float32" else 64)
        vals = draw(
            st.lists(
                st.one_of(reg, reg, reg, st.sampled_from(SPECIAL[dtype])), min_size=n, max_size=n
            )  # fmt: skip
        )
    return np.array(vals, dtype=dtype).reshape(shape)


@st.composite
def operands(draw, dtype):
    m = draw(st.sampled_from([0, 1, 2, 3, 5]))
    n = draw(st.sampled_from([0, 1, 2, 4, 7, 33]))
    # shapes of y and z may be size-1 on an axis (run-time broadcasting)
    shapes = [(m, n)]
    for _ in range(2):
        shapes.append((draw(st.sampled_from([m, 1])), draw(st.sampled_from([n, 1]))))
    arrs = []
    for shape in shapes:
        base = _values(draw, dtype, shape)
        arrs.append(_layout(base, draw(st.sampled_from(LAYOUTS))))
    return arrs


def _tolerance(dtype):
    return (1e-5, 1e-5) if dtype == "float32" else (1e-11, 1e-12)


def _compare(name, got, want, in_dtype):
    assert isinstance(got, np.ndarray), (name, type(got))
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if got.dtype.kind == "f":
        rtol, atol = _tolerance(str(got.dtype))
        if name.startswith(("Sum", "Prod")):  # summation order differs from numpy's
            rtol = rtol * 10
            atol = atol * (1 + float(np.nanmax(np.abs(want), initial=0)) * 100)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def _order_dependent_prod(x, name, dtype):
    """Where a product may over- or underflow midway (the result then depends on the
    order of the multiplications, which numpy does not specify)."""
    axis = tuple(int(a) for a in re.findall(r"\d+", name))
    with np.errstate(all="ignore"):
        a = np.abs(x.astype("float64"))
        logs = np.where(np.isfinite(a) & (a > 0), np.log(np.where(a > 0, a, 1)), 0)
    fi = np.finfo(dtype)
    up = np.sum(np.maximum(logs, 0), axis=axis) > np.log(fi.max) - 1
    down = np.sum(np.minimum(logs, 0), axis=axis) < np.log(fi.tiny) + 1
    return up | down


def _expect_same(pair, args, dtype):
    copies = [a.copy() for a in args]
    try:
        want = pair.py(*args)
    except ValueError as exc:
        with pytest.raises(ValueError):
            pair.c(*args)
        return str(exc)
    got = pair.c(*args)
    for name, g, w in zip(pair.names, got, want):
        if name == "pow(x, y)" and g.dtype.kind == "f":
            # numpy's own power(-inf, 0.5) is nan or inf depending on its loop; C gives inf
            skip = np.broadcast_to(np.isneginf(args[0]), g.shape)
            g, w = np.where(skip, 0, g), np.where(skip, 0, w)
        if name.startswith("Prod") and g.dtype.kind == "f":
            skip = _order_dependent_prod(args[0], name, g.dtype)
            g, w = np.where(skip, 0, g), np.where(skip, 0, w)
        _compare(name, g, w, dtype)
    for a, c in zip(args, copies):  # inputs are never modified
        np.testing.assert_array_equal(a, c)
    return None


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint8", "bool"])
def test_matches_py_linker(funcs, dtype):
    pair = funcs[dtype]

    @HSET
    @given(operands(dtype))
    def check(args):
        with np.errstate(all="ignore"):
            _expect_same(pair, args, dtype)

    check()


def test_c_is_used(funcs):
    for pair in funcs.values():
        impls = pair.c.linked.impls
        assert all(i.is_c for i in impls), [
            str(n) for n, i in zip(pair.c.linked.schedule, impls) if not i.is_c
        ]
        assert not any(i.is_c for i in pair.py.linked.impls)
        assert "thunk_0" in pair.c.linked.c_source
        assert pair.c.linked.phases["codegen"] > 0


def test_one_module_and_shared_thunks(funcs):
    src = funcs["float64"].c.linked.c_source
    assert src.count("PyMODINIT_FUNC GRAPHC_INIT") == 1
    assert src.count("static void gc_ew_loop(") == 1  # support code emitted once
    # the three max(x) reductions differ by axis only and share one kernel
    assert src.count("static void gc_red_") == len(set(src.split("static void gc_red_")[1:]))


def test_broadcast_error_names_shapes(funcs):
    pair = funcs["float64"]
    x, y = np.ones((2, 3)), np.ones((4, 3))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 3\)"):
        pair.c(x, y, x)


def test_dimshuffle_is_a_view(funcs):
    pair = funcs["float64"]
    vm = make_vm(pair.c.linked.program)  # Function copies outputs that alias inputs
    picks = [pair.names.index(n) for n in ("x.T", "dimshuffle(1,x,0)")]
    for x in (np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)[::-1, ::2]):
        out = vm([x, x, x])
        for k in picks:
            assert np.shares_memory(out[k], x), pair.names[k]
            assert out[k].base is (x if x.base is None else x.base)
            assert out[k].flags.writeable
    np.testing.assert_array_equal(out[picks[0]], x.T)
    np.testing.assert_array_equal(out[picks[1]], x.T[:, None, :])
    ro = np.broadcast_to(np.arange(3.0), (2, 3))
    out = vm([ro, ro, ro])
    assert not out[picks[0]].flags.writeable and np.shares_memory(out[picks[0]], ro)


def test_zero_d(compiledir):
    a, b = T.dscalar("a"), T.dscalar("b")
    outs = [T.exp(a) * b, T.sum(a), T.argmax(a), T.maximum(a, b), a.dimshuffle("x", "x")]
    names = ["ew", "Sum", "argmax", "max", "ds"]
    pair = Pair([a, b], outs, names)
    assert all(i.is_c for i in pair.c.linked.impls)
    for va, vb in [(1.5, -2.0), (np.nan, 1.0), (-0.0, np.inf)]:
        args = [np.array(va), np.array(vb)]
        got = pair.c(*args)
        for name, g, w in zip(names, got, pair.py(*args)):
            _compare(name, g, w, "float64")
            assert isinstance(g, np.ndarray)
    vm = make_vm(pair.c.linked.program)  # numpy scalars from Python nodes are accepted
    got = vm([np.float64(1.5), np.float64(-2.0)])
    np.testing.assert_allclose(got[0], np.exp(1.5) * -2.0)
    with pytest.raises(TypeError, match="input 0"):
        vm([[1.0], np.float64(1.0)])
    with pytest.raises(TypeError, match="dtype"):
        vm([np.float32(1.0), np.float64(1.0)])


def test_empty_max_raises(funcs):
    with pytest.raises(ValueError, match="zero-size"):
        funcs["float64"].c(np.ones((0, 3)), np.ones((0, 3)), np.ones((0, 3)))


def _vm(inputs, outputs, allow_gc=True):
    """Link with "c|py" directly (no destroy checks: inputs may be overwritten)."""
    fg = FunctionGraph(inputs, outputs)
    linked = clinker.link_cpy(fg, fg.outputs)
    return linked, make_vm(linked.program, allow_gc=allow_gc)


def test_inplace_writes_into_the_input(compiledir):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    linked, f = _vm([x, y], [Elemwise(ps.add, {0: 0})(x, y)])
    _, g = _vm([x, y], [Elemwise(ps.exp, {0: 0})(x) + y.T])
    assert all(i.is_c for i in linked.impls)
    base = np.zeros((6, 8))
    xs = base[::2, ::2]  # strided target
    yv = np.arange(12.0).reshape(3, 4)
    (res,) = f([xs, yv])
    assert res is xs
    np.testing.assert_array_equal(xs, yv)
    np.testing.assert_array_equal(base[1::2], 0)
    # x + x.T in place into x: the overlapping operand is read before it is overwritten
    sq = np.arange(9.0).reshape(3, 3)
    want = sq + sq.T
    np.testing.assert_array_equal(f([sq, sq.T])[0], want)
    np.testing.assert_array_equal(sq, want)
    v = np.ones((2, 2))
    np.testing.assert_allclose(g([v, np.eye(2)])[0], np.e + np.eye(2))
    np.testing.assert_allclose(v, np.e)
    with pytest.raises(ValueError, match="read-only"):
        f([np.broadcast_to(np.ones(3), (2, 3)), np.ones((2, 3))])


class _Peek(Op):
    """Python Op recording the data address of its input; returns its sum."""

    __props__ = ()

    def __init__(self):
        self.seen = []

    def make_node(self, x):
        return Apply(self, [x], [TensorType(x.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        self.seen.append(inputs[0].ctypes.data)
        output_storage[0][0] = np.asarray(inputs[0].sum())


@pytest.mark.parametrize("allow_gc", [False, True])
def test_output_buffer_reuse(compiledir, allow_gc):
    x = T.dvector("x")
    peek = _Peek()
    linked, vm = _vm([x], [peek(T.exp(x) * 2.0)], allow_gc=allow_gc)
    assert [i.is_c for i in linked.impls] == [True] * (len(linked.impls) - 1) + [False]
    v = np.arange(5.0)
    for k in range(3):
        np.testing.assert_allclose(vm([v + k])[0], np.sum(np.exp(v + k) * 2.0))
    if not allow_gc:  # the previous buffer was free: the thunk wrote into it again
        assert len(set(peek.seen)) == 1
    # a buffer still referenced by the caller is never overwritten
    t = T.exp(x) * 2.0
    _, vm2 = _vm([x], [t, _Peek()(t)], allow_gc=allow_gc)
    held = [vm2([v + k])[0] for k in range(3)]
    for k in range(3):
        np.testing.assert_allclose(held[k], np.exp(v + k) * 2.0)
    assert len({h.ctypes.data for h in held}) == 3


def test_no_reference_leaks(funcs):
    pair = funcs["float64"]
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    y, z = np.ones((1, 3)), np.full((2, 1), 0.5)
    f64 = np.dtype("float64")
    outs = pair.c(x, y, z)
    pair.c(x, y, z)  # a returned value is kept for reuse until the next call, no longer
    gc.collect()  # garbage of earlier tests must not be freed while counting
    gc.disable()
    try:
        _count_refs(pair, x, y, z, f64, outs)
    finally:
        gc.enable()


def _count_refs(pair, x, y, z, f64, outs):
    before = [sys.getrefcount(a) for a in (x, y, z, f64)]
    out_before = [sys.getrefcount(o) for o in outs]
    for _ in range(10_000 // 10):
        for _ in range(10):
            pair.c(x, y, z)
    assert [sys.getrefcount(a) for a in (x, y, z, f64)] == before
    assert [sys.getrefcount(o) for o in outs] == out_before
    held = pair.c(x, y, z)
    refs = [weakref.ref(o) for o in held]
    pair.c(x, y, z)  # holds the values of this call, not of the one before
    del held
    assert all(r() is None for r in refs)
    vm = make_vm(pair.c.linked.program)  # views (no copy by Function) release their base
    refs = [weakref.ref(o) for o in vm([x, y, z])]
    del vm  # its memory plan's buffers and last outputs (kept across calls) hold the dtype
    assert all(r() is None for r in refs)
    assert [sys.getrefcount(a) for a in (x, y, z, f64)] == before


def test_fallback_without_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_COMPILEDIR", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    clinker.reset_available()
    try:
        assert not clinker.available()
        x = T.dmatrix("x")
        out = T.sum(T.exp(x) * 2.0, axis=0)
        fg = FunctionGraph([x], [out])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            linked = clinker.link_cpy(fg, fg.outputs)
        assert len(rec) == 1, [str(w.message) for w in rec]
        assert "/nonexistent/cc" in str(rec[0].message)
        assert not any(i.is_c for i in linked.impls)
        assert linked.notes and "C not used" in linked.notes[0]
        vm = make_vm(linked.program)
        v = np.arange(6.0).reshape(2, 3)
        np.testing.assert_allclose(vm([v])[0], np.sum(np.exp(v) * 2.0, axis=0))
    finally:
        monkeypatch.undo()
        clinker.reset_available()
    assert clinker.available()


def test_scalar_ops_without_c_fall_back(compiledir):
    x = T.lvector("x")
    out = T.pow(x, x)  # integer power has no C (negative exponents raise in numpy)
    f = graphc.function([x], [out, x + 1], mode=C_MODE)
    for node, impl in zip(f.linked.schedule, f.linked.impls):
        is_pow = getattr(node.op, "scalar_op", None) is ps.pow
        assert impl.is_c != is_pow, str(node)
    assert "run in Python: Elemwise{pow,no_inplace}" in f.linked.notes[0]
    np.testing.assert_array_equal(f(np.arange(4))[0], np.arange(4) ** np.arange(4))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_large_blocks_and_broadcast_runs(funcs, dtype):
    """Runs longer than the broadcast block (512) and the 4-stream sums."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 1500)) * 3).astype(dtype)
    y = (rng.standard_normal((1, 1500)) * 3).astype(dtype)
    z = (rng.standard_normal((3, 1)) * 3 + 7).astype(dtype)
    for args in ([x, y, z], [x, np.broadcast_to(z, (3, 1500)), y], [x[:, ::-3], z, y[:, :500]]):
        with np.errstate(all="ignore"):
            assert _expect_same(funcs[dtype], args, dtype) is None


def test_composite_with_special_constants(compiledir):
    a = ps.ScalarType("float64")()
    consts = [ps.as_scalar(np.float64(v)) for v in (np.inf, -np.inf, np.nan, -0.0, 1e-310)]
    outs = [ps.add(a, c) for c in consts] + [ps.minimum(a, consts[0]), ps.mul(a, consts[3])]
    x = T.dvector("x")
    y = Elemwise(ps.Composite([a], outs))(x)
    pair = Pair([x], list(y), [f"out{k}" for k in range(len(outs))])
    assert all(i.is_c for i in pair.c.linked.impls)
    v = np.array([1.0, -2.0, np.inf, -np.inf, np.nan, 0.0, -0.0])
    with np.errstate(all="ignore"):
        for name, g, w in zip(pair.names, pair.c(v), pair.py(v)):
            _compare(name, g, w, "float64")
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=name)


@given(st.text(max_size=300))
def test_c_string_is_one_valid_c_literal_of_printable_ascii(text):
    lit = c_string(text)
    assert re.fullmatch(r'"(?:[ !#-/0-9:->@-\[\]-~]|\\["\\?])*"', lit), lit
    body = re.sub(r'\\(["\\?])', r"\1", lit[1:-1])
    if len(text) <= 200:
        assert body == "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    else:
        assert len(body) == 200 and body.endswith("...")
