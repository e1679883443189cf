"""``W - lr * dot(a, b)`` as one Gemm into the update's recycled buffer: the rewrite, numpy's
broadcasting kept, and failures (shapes, an injected fault in the last node, one of several
updates) that leave every shared value bit-identical."""

from __future__ import annotations

import numpy as np
import pytest
from alloc_checks import peak_growth
from graph_checks import check_infer_shape

import graphc
import graphc.tensor as T
from graphc.graph.basic import Apply, Op
from graphc.tensor.blas import Gemm

LINKERS = ["c|py", "vm", "py"]  # Cython VM + C thunks, Python VM + C thunks, Python only


def _ops(f):
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


def _update_exprs(w, a, b):
    return {
        "sub": lambda: w - 0.01 * T.dot(a, b),
        "add_neg": lambda: w + (-0.01) * T.dot(a, b),
        "transposed": lambda: w - 0.01 * T.dot(a.T, b.T),
        "scaled_z": lambda: 0.5 * w - T.dot(a, b) * 0.01,
    }


def _np_update(kind, w, a, b):
    if kind == "transposed":
        return w - 0.01 * (a.T @ b.T)
    if kind == "scaled_z":
        return 0.5 * w - (a @ b) * 0.01
    return w - 0.01 * (a @ b)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("kind", ["sub", "add_neg", "transposed", "scaled_z"])
def test_update_is_one_gemm_into_a_recycled_buffer(linker, kind):
    rng = np.random.default_rng(1)
    w = graphc.shared(rng.normal(size=(6, 5)), name="w")
    a, b = T.dmatrix("a"), T.dmatrix("b")
    f = graphc.function(
        [a, b], [], updates=[(w, _update_exprs(w, a, b)[kind]())], mode=graphc.Mode(linker=linker)
    )
    ops = _ops(f)
    assert ops.count("Gemm") == 1 and "Dot22" not in ops and "Elemwise" not in ops, ops
    if kind == "transposed":
        av, bv = rng.normal(size=(3, 6)), rng.normal(size=(5, 3))
    else:
        av, bv = rng.normal(size=(6, 3)), rng.normal(size=(3, 5))
    seen = set()
    for _ in range(5):
        want = _np_update(kind, w.get_value(), av, bv)
        f(av, bv)
        np.testing.assert_allclose(w.get_value(borrow=True), want, rtol=1e-13, atol=1e-15)
        seen.add(w.get_value(borrow=True).ctypes.data)
    if linker != "py":  # C thunks write into the replaced value: two buffers alternate
        assert len(seen) == 2


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("zs", "xs", "ys"),
    [((6, 5), (6, 3), (3, 5)),  # equal shapes: the BLAS path
     ((1, 5), (6, 3), (3, 5)),  # Z broadcasts over rows
     ((6, 1), (6, 3), (3, 5)),  # Z broadcasts over columns
     ((1, 1), (6, 3), (3, 5)),
     ((6, 5), (1, 3), (3, 5)),  # the product broadcasts
     ((6, 5), (6, 3), (3, 1)),
     ((6, 5), (1, 3), (3, 1))],
)  # fmt: skip
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_gemm_keeps_numpy_broadcasting(linker, zs, xs, ys, beta):
    rng = np.random.default_rng(2)
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    expr = (z if beta == 1 else beta * z) - 0.25 * T.dot(x, y)
    f = graphc.function([z, x, y], [expr, expr.shape], mode=graphc.Mode(linker=linker))
    assert "Gemm" in _ops(f)
    zv, xv, yv = rng.normal(size=zs), rng.normal(size=xs), rng.normal(size=ys)
    for _ in range(2):  # the second call gets the first call's output buffer back
        got, shape = f(zv, xv, yv)
        np.testing.assert_allclose(got, beta * zv - 0.25 * (xv @ yv), rtol=1e-13, atol=1e-15)
        assert got.shape == tuple(shape) == np.broadcast_shapes(zs, (xs[0], ys[1]))


@pytest.mark.parametrize(
    ("zs", "xs", "ys"),
    [((6, 5), (6, 3), (3, 5)), ((1, 5), (6, 3), (3, 5)), ((6, 5), (1, 3), (3, 1))],
)
def test_broadcasting_gemm_infers_its_shape(zs, xs, ys):
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    out = Gemm(broadcast=True)(z, -0.5, x, y, 1.0)
    rng = np.random.default_rng(6)
    check_infer_shape(out, {z: rng.normal(size=zs), x: rng.normal(size=xs), y: rng.normal(size=ys)})


@pytest.mark.parametrize("linker", LINKERS)
def test_gemm_rejects_shapes_numpy_rejects(linker):
    z, x, y = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
    f = graphc.function([z, x, y], z - 0.25 * T.dot(x, y), mode=graphc.Mode(linker=linker))
    with pytest.raises(ValueError):
        f(np.ones((4, 5)), np.ones((6, 3)), np.ones((3, 5)))  # 4 rows against 6
    with pytest.raises(ValueError):
        f(np.ones((6, 5)), np.ones((6, 3)), np.ones((4, 5)))  # inner sizes differ


def test_beta_zero_ignores_z_when_broadcasting():
    nan = np.full((1, 4), np.nan)
    x, y = np.ones((3, 2)), np.ones((2, 4))
    for linker in LINKERS:
        zv, xv, yv = T.dmatrix("z"), T.dmatrix("x"), T.dmatrix("y")
        out = Gemm(broadcast=True)(zv, 1.0, xv, yv, 0.0)
        f = graphc.function([zv, xv, yv], out, mode=graphc.Mode(linker=linker, optimizer=None))
        np.testing.assert_array_equal(f(nan, x, y), np.full((3, 4), 2.0))


def test_broadcasting_gemm_is_never_in_place():
    with pytest.raises(TypeError):
        Gemm(inplace=True, broadcast=True)


_FAULT = {"on": False}


class _Fault(Op):
    """Identity that raises while ``_FAULT["on"]``: a node failing for no shape reason."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        if _FAULT["on"]:
            raise RuntimeError("injected fault")
        output_storage[0][0] = np.array(inputs[0], copy=True)


def _bits(*shared):
    return [s.get_value().tobytes() for s in shared]


def _two_layer(linker, last_fault=False):
    """SGD on two weight matrices; with ``last_fault`` a third update is computed from the
    first's new value through ``_Fault`` (so it runs after that Gemm)."""
    rng = np.random.default_rng(3)
    w1 = graphc.shared(rng.normal(size=(8, 6)), name="w1")
    w2 = graphc.shared(rng.normal(size=(6, 4)), name="w2")
    c = graphc.shared(np.zeros(()), name="c")
    x = T.dmatrix("x")
    h = T.tanh(T.dot(x, w1))
    cost = (T.dot(h, w2) ** 2).sum()
    g1, g2 = graphc.grad(cost, [w1, w2])
    new_w1 = w1 - 0.01 * g1
    updates = [(w1, new_w1), (w2, w2 - 0.01 * g2)]
    if last_fault:
        updates.append((c, _Fault()(new_w1.sum())))
    f = graphc.function([x], cost, updates=updates, mode=graphc.Mode(linker=linker))
    return f, (w1, w2, c), rng


@pytest.mark.parametrize("linker", LINKERS)
def test_failure_in_the_last_node_after_the_gemms_changes_nothing(linker):
    f, shared, rng = _two_layer(linker, last_fault=True)
    assert _ops(f).count("Gemm") == 2
    order = [type(n.op) for n in f.maker.fgraph.toposort()]
    assert order[-1] is _Fault and order.index(Gemm) < len(order) - 1
    x = rng.normal(size=(5, 8))
    for _ in range(3):  # the recycled buffers are in use
        f(x)
    before = _bits(*shared)
    _FAULT["on"] = True
    try:
        with pytest.raises(RuntimeError, match="injected fault"):
            f(x)
    finally:
        _FAULT["on"] = False
    assert _bits(*shared) == before
    f(x)  # and the function still works, from the unchanged values
    assert _bits(*shared) != before


@pytest.mark.parametrize("linker", LINKERS)
def test_failure_in_one_of_several_gemm_updates_changes_nothing(linker):
    rng = np.random.default_rng(4)
    w = graphc.shared(rng.normal(size=(5, 4)), name="w")
    v = graphc.shared(rng.normal(size=(3, 3)), name="v")
    a, b, m = T.dmatrix("a"), T.dmatrix("b"), T.dmatrix("m")
    f = graphc.function(
        [a, b, m], [], updates=[(w, w - 0.1 * T.dot(a, b)), (v, v - 0.1 * T.dot(v, m))],
        mode=graphc.Mode(linker=linker),
    )  # fmt: skip
    assert _ops(f).count("Gemm") == 2
    good = (rng.normal(size=(5, 2)), rng.normal(size=(2, 4)), np.eye(3))
    for _ in range(3):
        f(*good)
    before = _bits(w, v)
    with pytest.raises(ValueError):  # the first Gemm succeeds, the second one's shapes fail
        f(good[0], good[1], np.eye(4))
    assert _bits(w, v) == before
    with pytest.raises(ValueError):  # the first one fails
        f(good[0], rng.normal(size=(3, 4)), np.eye(3))
    assert _bits(w, v) == before
    with pytest.raises(ValueError):  # the update would change w's shape: numpy rejects it too
        f(rng.normal(size=(2, 2)), rng.normal(size=(2, 4)), np.eye(3))
    assert _bits(w, v) == before
    want_w = w.get_value() - 0.1 * (good[0] @ good[1])
    f(*good)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=1e-13)


@pytest.mark.parametrize("linker", ["c|py", "vm"])
def test_steady_state_gemm_update_allocates_nothing_big(linker):
    rng = np.random.default_rng(5)
    w = graphc.shared(rng.normal(size=(200, 100)), name="w")
    a, b = T.dmatrix("a"), T.dmatrix("b")
    f = graphc.function(
        [a, b], [], updates=[(w, w - 0.01 * T.dot(a.T, b))], mode=graphc.Mode(linker=linker)
    )
    av, bv = rng.normal(size=(8, 200)), rng.normal(size=(8, 100))
    for _ in range(3):
        f(av, bv)
    _, growth = peak_growth(lambda: f(av, bv))
    assert growth < w.get_value(borrow=True).nbytes // 4  # neither a product nor a new w


def test_gemm_replaces_the_dot_and_the_axpy_in_the_sgd_updates():
    f, _, _ = _two_layer("c|py")
    ops = _ops(f)
    # forward x.w1 and h.w2, backward g.w2^T stay products; the two weight gradients are
    # each folded with their update into one Gemm
    assert ops.count("Gemm") == 2 and ops.count("Dot22") == 3, ops
