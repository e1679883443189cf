"""Multi-output fusion: a value with several consumers computed once, in one loop with them."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.graph.basic import Apply
from graphc.linker import c_available
from graphc.opt.engine import RewriteWarning
from graphc.opt.fusion import _fusable
from graphc.opt.fusion_multi import Reach, _grow
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums

pytestmark = pytest.mark.filterwarnings(f"error::{RewriteWarning.__module__}.RewriteWarning")
LINKERS = ["py"] + (["c|py", "c|py_nogc"] if c_available() else [])


def mode(linker, *excluding):
    return graphc.Mode(linker=linker, optimizer="fast_run").excluding(*excluding)


def multi_nodes(f):
    return [n for n in f.maker.fgraph.toposort()
            if isinstance(n.op, ElemwiseSums)
            or isinstance(n.op, Elemwise) and len(n.outputs) > 1]  # fmt: skip


def _multi_consumer(linker, *excluding):
    # sqrt, not tanh, after exp: two heavy functions chained stay in separate loops
    x, y = T.dvector("x"), T.dvector("y")
    t = T.exp(x)
    return graphc.function([x, y], [t * 2, t.sum(), T.sqrt(t) + y], mode=mode(linker, *excluding))


def _np_multi(x, y):
    t = np.exp(x)
    return [t * 2, t.sum(), np.sqrt(t) + y]


@pytest.mark.parametrize("linker", LINKERS)
def test_multi_consumer_graph_is_one_loop(linker):
    f = _multi_consumer(linker)
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 1, nodes  # one loop writes t*2 and sqrt(t)+y and sums t
    (node,) = nodes
    assert isinstance(node.op, ElemwiseSums)
    assert node.op.kept == (1, 2) and node.op.summed == (0,)  # t itself is never written
    names = [n.op.name for n in node.op.inner.nodes]
    assert names.count("exp") == 1 and names.count("sqrt") == 1  # exp computed once
    # without the sum in the loop: the loop writes t, which the sum rereads
    h = _multi_consumer(linker, "fuse_sum_into_loop")
    (loop, total) = h.maker.fgraph.toposort()
    assert isinstance(loop.op, Elemwise) and len(loop.outputs) == 3
    assert total.inputs[0] is loop.outputs[0]
    # unfused, the value stays a node of its own read by three others
    g = _multi_consumer(linker, "multi_fusion")
    assert len(g.maker.fgraph.toposort()) == 4 and not multi_nodes(g)
    rng = np.random.default_rng(0)
    for n in (5, 1000, 300_000):
        xv, yv = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        for fn in (f, h):
            for got, ref, want in zip(fn(xv, yv), g(xv, yv), _np_multi(xv, yv)):
                np.testing.assert_allclose(got, want, rtol=1e-10)
                np.testing.assert_allclose(got, ref, rtol=1e-10)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_of_values_also_read_elsewhere(linker, dtype):
    # t is summed, read by a dot, and read by an element-wise consumer; u only summed
    x, w = T.vector("x", dtype=dtype), T.matrix("w", dtype=dtype)
    t = x * x * 3 - 1
    u = T.exp(t)
    outs = [t.sum(), T.dot(w, t), u.sum(), (u * x).sum(axis=0)]
    f = graphc.function([x, w], outs, mode=mode(linker))
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, ElemwiseSums)]
    assert len(node.op.summed) == 3  # t, u and u * x: all sums of the loop
    rng = np.random.default_rng(2)
    xv, wv = rng.uniform(-1, 1, 40).astype(dtype), rng.uniform(-1, 1, (3, 40)).astype(dtype)
    tv = xv * xv * 3 - 1
    uv = np.exp(tv)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(f(xv, wv), [tv.sum(), wv @ tv, uv.sum(), (uv * xv).sum()]):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("nx", "ny"), [(1, 4), (4, 1), (1, 1), (0, 1), (1, 0)])
def test_axis_of_unknown_size_broadcast_at_run_time(linker, nx, ny):
    # exp(x) keeps x's shape when x has 1 element and y has 4: the loop runs over 4
    f = _multi_consumer(linker)
    assert multi_nodes(f)
    xv, yv = np.linspace(0, 1, nx), np.linspace(1, 2, ny)
    for got, want in zip(f(xv, yv), _np_multi(xv, yv)):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_consumers_whose_other_inputs_never_meet(linker):
    # exp(x) + z and exp(x) * w are fine for x of 1 element, z of 3 and w of 4, although
    # z and w do not broadcast together: the fused loop must not make them meet
    x, z, w = T.dvector("x"), T.dvector("z"), T.dvector("w")
    t = T.exp(x)
    f = graphc.function([x, z, w], [t + z, t * w, t], mode=mode(linker))
    assert multi_nodes(f)
    xv, zv, wv = np.array([0.5]), np.arange(3.0), np.arange(4.0)
    tv = np.exp(xv)
    for got, want in zip(f(xv, zv, wv), [tv + zv, tv * wv, tv]):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError):  # z against a 2-element x fails, fused or not
        f(np.ones(2), zv, wv)


@pytest.mark.parametrize("linker", LINKERS)
def test_matrix_with_broadcast_row_and_shared_value(linker):
    x, b = T.dmatrix("x"), T.drow("b")
    s = T.sqr(x) * b  # read by two consumers and a column sum
    outs = [T.exp(s), s - x, s.sum(axis=0)]
    f = graphc.function([x, b], outs, mode=mode(linker))
    (node,) = multi_nodes(f)
    assert len(node.outputs) == 3  # s (for the sum), exp(s), s - x
    rng = np.random.default_rng(1)
    xv, bv = rng.normal(size=(3, 5)), rng.normal(size=(1, 5))
    sv = np.square(xv) * bv
    for got, want in zip(f(xv, bv), [np.exp(sv), sv - xv, sv.sum(axis=0)]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_no_region_feeds_and_consumes_an_outside_node():
    # exp(x) and t * u both read t, but u = sum(t) sits between them: fusing them would
    # make the loop both feed and consume the sum
    x = T.dvector("x")
    t = T.exp(x)
    u = t.sum()
    out = [t * u, T.sin(t)]
    f = graphc.function([x], out, mode=mode("py"))
    fg = f.maker.fgraph
    order = fg.toposort()
    pos = {n: k for k, n in enumerate(order)}
    for n in order:  # a schedule exists, and every input comes from earlier
        for i in n.inputs:
            assert i.owner is None or pos[i.owner] < pos[n]
    # the sum joins the loop making t (and sin(t)); t * u is a second loop after it
    (total,) = [n for n in order if isinstance(n.op, ElemwiseSums)]
    readers = [n for n in order[pos[total] + 1 :] if isinstance(n.op, Elemwise)]
    assert len(readers) == 1 and "exp" not in str(readers[0].op)
    xv = np.linspace(0, 1, 6)
    tv = np.exp(xv)
    for got, want in zip(f(xv), [tv * tv.sum(), np.sin(tv)]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_siblings_reading_one_input_share_a_loop():
    x, y = T.dvector("x"), T.dvector("y")
    a, b = T.exp(x) + y, T.sin(x) * y  # no value in common, both read x and y
    c = a.sum() + b.sum()
    f = graphc.function([x, y], [c, a * 3.0, b - 1.0], mode=mode("py"))
    (node,) = multi_nodes(f)
    assert sorted(str(i) for i in node.inputs) == ["x", "y"]
    xv, yv = np.linspace(0, 1, 7), np.linspace(2, 3, 7)
    av, bv = np.exp(xv) + yv, np.sin(xv) * yv
    for got, want in zip(f(xv, yv), [av.sum() + bv.sum(), av * 3, bv - 1]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_gradient_through_fused_loops(linker):
    x = T.dvector("x")
    t = T.exp(x * 0.5)
    cost = (t * 2.0).sum() + (T.tanh(t) * t).sum() + (t**2).mean()
    g = graphc.grad(cost, x)
    f = graphc.function([x], [cost, g], mode=mode(linker))
    ref = graphc.function([x], [cost, g], mode=graphc.Mode(linker="py", optimizer=None))
    xv = np.linspace(-1, 1, 9)
    for got, want in zip(f(xv), ref(xv)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    # against finite differences of the fused cost itself
    eps = 1e-6
    fd = [(f(xv + eps * e)[0] - f(xv - eps * e)[0]) / (2 * eps) for e in np.eye(9)]
    np.testing.assert_allclose(f(xv)[1], fd, rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not c_available(), reason="needs the C linker")
def test_memory_plan_and_in_place_with_multi_output_loops():
    # repeated calls through planned buffers; the loop's output 0 may reuse a dying input
    x, y = T.dvector("x"), T.dvector("y")
    u = T.dot(x, y) * x  # an intermediate: can be overwritten
    t = T.exp(u)
    outs = [t.sum(), T.sqrt(t) + y, (t * u).sum()]
    f = graphc.function([x, y], outs, mode=mode("c|py"))
    assert multi_nodes(f)
    rng = np.random.default_rng(3)
    for _ in range(4):
        xv, yv = rng.uniform(-1, 1, 50), rng.uniform(-1, 1, 50)
        x0, y0 = xv.copy(), yv.copy()
        uv = np.dot(xv, yv) * xv
        tv = np.exp(uv)
        for got, want in zip(f(xv, yv), [tv.sum(), np.sqrt(tv) + yv, (tv * uv).sum()]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_array_equal(xv, x0)
        np.testing.assert_array_equal(yv, y0)


def test_profile_names_the_fused_node_by_its_expressions():
    x, y = T.dvector("x"), T.dvector("y")
    t = T.exp(x)
    f = graphc.function([x, y], [t * 2, t.sum(), T.sqrt(t) + y], mode=mode("py"), profile=True)
    f(np.ones(3), np.ones(3))
    buf = io.StringIO()
    f.profile.summary(file=buf, width=300)  # wide enough for the whole name on its row
    text = buf.getvalue()
    apply = text.split("\nApply\n", 1)[1]
    rows = [ln for ln in apply.splitlines() if "% " in ln and " Elemwise{Composite{" in ln]
    assert rows, text
    assert "exp(i0), (exp(i0) * 2), (sqrt(exp(i0)) + i1)" in rows[0]
    # and the row's source lines are those of every node it computes
    assert "test_multi_fusion.py" in text


def test_reach_bitsets_match_a_graph_walk():
    x, y = T.dvector("x"), T.dvector("y")
    a = T.exp(x)
    b = a + y
    c = a.sum() * b
    fg = graphc.function([x, y], [c, b], mode=mode("py", "fusion")).maker.fgraph
    reach = Reach(fg)
    for k, n in enumerate(reach.order):
        want = set()
        stack = [i.owner for i in n.inputs if i.owner is not None]
        while stack:
            p = stack.pop()
            if p not in want:
                want.add(p)
                stack += [i.owner for i in p.inputs if i.owner is not None]
        got = {m for j, m in enumerate(reach.order) if reach.anc[k] >> j & 1}
        assert got == want
        for m in want:
            assert reach.desc[reach.pos[m]] >> k & 1


def _contract_every_node(reach, members):
    """Contraction updating the bitsets of every node (a direct transcription of the
    definition: an ancestor of a member reaches all any member reaches, and vice versa)."""
    bits = au = du = 0
    for m in members:
        k = reach.pos[m]
        bits |= 1 << k
        au |= reach.anc[k]
        du |= reach.desc[k]
    au &= ~bits
    du &= ~bits
    for k in range(len(reach.order)):
        if reach.desc[k] & bits:
            reach.desc[k] |= bits | du
        if reach.anc[k] & bits:
            reach.anc[k] |= bits | au
    for m in members:
        reach.anc[reach.pos[m]], reach.desc[reach.pos[m]] = au, du


def _check_live_contraction(fg) -> int:
    """Take the regions multi_fusion would take, contracting each with ``live`` and with
    every node updated: the nodes that may still join a region must see the same bitsets,
    and the same regions must grow. Returns the number of regions."""
    fast, ref = Reach(fg), Reach(fg)
    seeds = [n for n in fast.order if _fusable(n)]
    live = 0
    for n in seeds:
        live |= fast.bit(n)
    taken: set = set()
    contracted = 0
    for seed in seeds:
        if seed in taken:
            continue
        members = _grow(fg, seed, fast, taken)
        assert members == _grow(fg, seed, ref, taken)
        if len(members) < 2:
            continue
        taken.update(members)
        for m in members:
            live &= ~fast.bit(m)
        fast.contract(members, live)
        _contract_every_node(ref, members)
        contracted += 1
        for n in seeds:
            k = fast.pos[n]
            if n not in taken:
                assert (fast.anc[k], fast.desc[k]) == (ref.anc[k], ref.desc[k])
    return contracted


@pytest.mark.parametrize("steps", [16, 40])
def test_contract_keeps_the_bitsets_of_live_nodes_exact(steps):
    # the regions of a gradient chain
    x = T.dvector("x")
    ws = [T.dscalar(f"w{i}") for i in range(steps)]
    y = x
    for w in ws:
        y = T.tanh(y * w + 0.5)
    g = graphc.grad(y.sum(), [x, *ws])
    m = mode("py", "fuse_multi_output", "inplace")
    fg = graphc.function([x, *ws], g, mode=m).maker.fgraph
    assert _check_live_contraction(fg) >= steps // 16
    # contract() without ``live`` updates every node, as the definition does
    a, b = Reach(fg), Reach(fg)
    some = [n for n in a.order if _fusable(n)][:3]
    a.contract(some)
    _contract_every_node(b, some)
    assert (a.anc, a.desc) == (b.anc, b.desc)


# ------------------------------------------------------------------ random DAGs

UNARY = {
    "float": ["exp", "tanh", "neg", "sin", "abs", "sqr"],
    "int": ["neg", "abs", "sqr"],
}
BINARY = ["add", "mul", "sub", "maximum"]
NP = {
    "exp": np.exp, "tanh": np.tanh, "neg": np.negative, "sin": np.sin, "abs": np.abs,
    "sqr": np.square, "add": np.add, "mul": np.multiply, "sub": np.subtract,
    "maximum": np.maximum,
}  # fmt: skip


@st.composite
def dags(draw):
    """Steps ``(op, i, j)`` over earlier values, and which values are outputs or summed."""
    n = draw(st.integers(2, 12))
    steps = [
        (draw(st.sampled_from(["u", "b", "b", "s"])), *(draw(st.integers(0, 99)) for _ in "ijw"))
        for _ in range(n)
    ]  # fmt: skip
    outs = draw(st.lists(st.integers(0, 99), min_size=1, max_size=4))
    sums = draw(st.lists(st.integers(0, 99), max_size=3))
    return steps, outs, sums


def _bounded(v, kind):
    return T.tanh(v) if kind == "float" else v


def _build_dag(spec, syms, vals, kind):
    steps, outs, sums = spec
    syms, vals = list(syms), list(vals)
    unary = UNARY[kind]
    for op, i, j, w in steps:
        a, av = syms[i % len(syms)], vals[i % len(vals)]
        b, bv = syms[j % len(syms)], vals[j % len(vals)]
        if op == "s":  # a reduction between regions: paths leave a region and come back
            if a.ndim == 0:
                continue
            name = "sum"
            s, v = a.sum(axis=0), np.sum(av, axis=0)
        elif op == "u":
            name = unary[w % len(unary)]
            s, v = getattr(T, name)(a), NP[name](av)
        else:
            name = BINARY[w % len(BINARY)]
            s, v = getattr(T, name)(a, b), NP[name](av, bv)
        if kind == "float" and name in ("exp", "sqr", "mul"):
            s, v = T.tanh(s), np.tanh(v)  # keep values bounded
        if kind == "int" and name in ("sqr", "mul"):
            s, v = s % 97, np.mod(v, 97)  # no overflow
        syms.append(s)
        vals.append(np.asarray(v).astype(s.dtype))
    made = len(syms) - 3
    pick = [3 + k % made for k in outs] if made else [0]
    out_s = [syms[k] for k in pick] + [syms[3 + k % made].sum() for k in sums if made]
    out_v = [vals[k] for k in pick] + [vals[3 + k % made].sum() for k in sums if made]
    return out_s, out_v


@settings(max_examples=15, deadline=None)
@given(dags(), st.sampled_from(["float64", "float32", "int64", "int32"]),
       st.booleans(), st.integers(0, 2**31 - 1))  # fmt: skip
def test_random_dags_agree_fused_unfused_and_numpy(spec, dtype, broadcast_x, seed):
    rng = np.random.default_rng(seed)
    kind = "int" if dtype.startswith("int") else "float"
    m = T.matrix("m", dtype=dtype)
    r = T.row("r", dtype=dtype)
    v = T.vector("v", dtype=dtype)
    shape = (1, 4) if broadcast_x else (3, 4)  # m broadcast at run time against the others
    if kind == "int":
        vals = [rng.integers(-9, 9, s).astype(dtype) for s in (shape, (1, 4), (4,))]
    else:
        vals = [rng.uniform(-1, 1, s).astype(dtype) for s in (shape, (1, 4), (4,))]
    with np.errstate(all="ignore"):
        outs, wants = _build_dag(spec, [m, r, v], vals, kind)
    tol = {"float32": 1e-5}.get(dtype, 1e-10)
    results = {}
    for linker in LINKERS:
        for excl in ((), ("multi_fusion",), ("fusion",)):
            f = graphc.function([m, r, v], outs, mode=mode(linker, *excl),
                                on_unused_input="ignore")  # fmt: skip
            fg = f.maker.fgraph
            order = fg.toposort()
            assert len(order) == len(fg.apply_nodes)  # a schedule of every node: no cycle
            pos = {n: k for k, n in enumerate(order)}
            for n in order:
                assert isinstance(n, Apply)
                assert all(i.owner is None or pos[i.owner] < pos[n] for i in n.inputs)
                if isinstance(n.op, Elemwise | ElemwiseSums):
                    assert len(n.inputs) <= 32
            before = [a.copy() for a in vals]
            results[linker, excl] = f(*vals)
            for a, b in zip(vals, before):
                np.testing.assert_array_equal(a, b)  # inputs never overwritten
    for key, res in results.items():
        for got, want, s in zip(res, wants, outs):
            assert np.shape(got) == np.shape(want), key
            assert np.asarray(got).dtype == s.dtype, key
            if kind == "int":
                np.testing.assert_array_equal(got, want.astype(s.dtype), err_msg=str(key))
            else:
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(key))
        ref = results[key[0], ("fusion",)]
        for got, want in zip(res, ref):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(key))


@pytest.mark.parametrize("linker", LINKERS)
def test_heavy_functions_chained_stay_in_separate_loops(linker):
    # tanh of exp: one loop would wait on exp within each element; two loops run faster
    x, y = T.dvector("x"), T.dvector("y")
    t = T.exp(x)
    outs = [t * 2, t.sum(), T.tanh(t) + y, T.tanh(T.log(x * x + 1.0)) * y]
    f = graphc.function([x, y], outs, mode=mode(linker))
    for node in f.maker.fgraph.toposort():
        if isinstance(node.op, Elemwise | ElemwiseSums):
            inner = node.op.inner if isinstance(node.op, ElemwiseSums) else node.op.scalar_op
            names = [n.op.name for n in getattr(inner, "nodes", ())] or [inner.name]
            assert not ({"exp", "log"} & set(names) and "tanh" in names), names
    xv, yv = np.linspace(-2, 2, 7), np.linspace(1, 3, 7)
    tv = np.exp(xv)
    want = [tv * 2, tv.sum(), np.tanh(tv) + yv, np.tanh(np.log(xv * xv + 1.0)) * yv]
    for got, ref in zip(f(xv, yv), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_heavy_functions_joined_through_a_cheap_value_stay_apart():
    # exp -> (*2, read twice) -> tanh: the path between the two goes through a shared cheap
    # value, which multi-output fusion would otherwise put in the same loop as both
    x, y = T.dvector("x"), T.dvector("y")
    u = T.exp(x) * 2.0
    outs = [u + y, T.tanh(u) * y]
    f = graphc.function([x, y], outs, mode=mode("py"))
    for node in f.maker.fgraph.toposort():
        if isinstance(node.op, Elemwise):
            names = [n.op.name for n in getattr(node.op.scalar_op, "nodes", ())]
            assert not ("exp" in names and "tanh" in names), names
    xv, yv = np.linspace(-1, 1, 5), np.linspace(1, 2, 5)
    uv = np.exp(xv) * 2.0
    for got, want in zip(f(xv, yv), [uv + yv, np.tanh(uv) * yv]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(dags())
def test_contract_keeps_the_bitsets_of_live_nodes_exact_in_random_dags(spec):
    m, r, v = T.dmatrix("m"), T.drow("r"), T.dvector("v")
    vals = [np.ones((3, 4)), np.ones((1, 4)), np.ones(4)]
    with np.errstate(all="ignore"):
        outs, _ = _build_dag(spec, [m, r, v], vals, "float")
    md = mode("py", "fuse_multi_output", "inplace")
    f = graphc.function([m, r, v], outs, mode=md, on_unused_input="ignore")
    _check_live_contraction(f.maker.fgraph)
