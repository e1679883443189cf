"""scan's other parts: until, shared and random updates inside the loop, map/reduce, loop
invariants, merging, empty loops, errors and the nested profile."""

from __future__ import annotations

import io
import json
import time

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.mode import get_mode
from graphc.scan_module import Scan
from graphc.tensor.shared_randomstreams import RandomStreams


def scan_nodes(f):
    return [n for n in f.linked.schedule if isinstance(n.op, Scan)]


def test_until_stops_after_the_step_whose_condition_holds():
    x0 = T.scalar("x0")
    out, _ = graphc.scan(lambda x: (x * 2, graphc.scan_module.until(x * 2 > 100)),
                         outputs_info=x0, n_steps=1000)  # fmt: skip
    f = graphc.function([x0], out)
    np.testing.assert_array_equal(f(3.0), [6, 12, 24, 48, 96, 192])
    assert f(200.0).tolist() == [400.0]
    g = graphc.function([x0], graphc.grad(out.sum(), x0))
    assert g(3.0) == 2 + 4 + 8 + 16 + 32 + 64  # d/dx0 of sum(x0 * 2**k), k = 1..6


def test_shared_update_inside_the_loop_is_applied_once_per_step():
    acc = graphc.shared(np.float64(0.0), name="acc")
    x = T.vector("x")
    out, updates = graphc.scan(lambda v: (v * 2, {acc: acc + v}), sequences=x)
    f = graphc.function([x], out, updates=updates)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.5])), [2.0, 4.0, 7.0])
    assert acc.get_value() == 6.5
    f(np.array([1.0]))
    assert acc.get_value() == 7.5


def test_a_failed_call_leaves_shared_values_unchanged():
    acc = graphc.shared(np.zeros(2), name="acc")
    x = T.matrix("x")
    out, updates = graphc.scan(lambda v: (v.sum(), {acc: acc + v}), sequences=x)
    f = graphc.function([x], out, updates=updates)
    f(np.ones((3, 2)))
    before = acc.get_value().copy()
    with pytest.raises(ValueError):
        f(np.ones((3, 5)))  # the update's shape no longer matches the state
    np.testing.assert_array_equal(acc.get_value(), before)


def test_random_draws_advance_each_step_and_reproduce_with_the_seed():
    def run(seed):
        srng = RandomStreams(seed=seed)
        out, updates = graphc.scan(lambda: srng.uniform((3,)), n_steps=4)
        f = graphc.function([], out, updates=updates)
        return f(), f()

    a1, a2 = run(7)
    b1, b2 = run(7)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert len({tuple(r) for r in a1}) == 4  # every step drew new numbers
    assert not np.array_equal(a1, a2)  # the stream's state was updated by the call
    assert ((a1 >= 0) & (a1 < 1)).all()


def test_gibbs_chain_with_binomial_draws():
    srng = RandomStreams(seed=3)
    W = graphc.shared(np.random.default_rng(0).normal(size=(6, 4)) * 0.1, name="W")
    v0 = T.matrix("v0")

    def gibbs(v):
        h = srng.binomial(size=(v.shape[0], 4), n=1, p=T.nnet.sigmoid(T.dot(v, W)),
                          dtype="float64")  # fmt: skip
        return srng.binomial(size=v.shape, n=1, p=T.nnet.sigmoid(T.dot(h, W.T)),
                             dtype="float64")  # fmt: skip

    chain, updates = graphc.scan(gibbs, outputs_info=v0, n_steps=20)
    f = graphc.function([v0], chain[-1], updates=updates)
    out = f(np.ones((5, 6)))
    assert out.shape == (5, 6)
    assert set(np.unique(out)) <= {0.0, 1.0}
    # samples are constants for grad: the chain's end does not depend on W differentiably
    g_end = graphc.grad(T.mean(chain[-1]), W)
    np.testing.assert_array_equal(graphc.function([v0], g_end)(np.ones((5, 6))), 0.0)
    chain_end = chain[-1]
    g = graphc.grad(T.mean(T.dot(chain_end, W)), W, consider_constant=[chain_end])
    assert graphc.function([v0], g, updates=updates)(np.ones((5, 6))).shape == (6, 4)


def test_map_reduce_foldl_foldr_match_numpy():
    x = T.vector("x")
    sq, _ = graphc.map(lambda v: v**2, x)
    total, _ = graphc.reduce(lambda v, acc: acc + v, x, T.constant(0.0))
    left, _ = graphc.foldl(lambda v, acc: acc * 2 + v, x, T.constant(0.0))
    right, _ = graphc.foldr(lambda v, acc: acc * 2 + v, x, T.constant(0.0))
    f = graphc.function([x], [sq, total, left, right])
    xv = np.array([1.0, 2.0, 3.0])
    a, b, c, d = f(xv)
    np.testing.assert_array_equal(a, xv**2)
    assert b == 6.0
    assert c == ((1 * 2 + 2) * 2 + 3)
    assert d == ((3 * 2 + 2) * 2 + 1)


def test_loop_invariant_work_is_computed_once_outside_the_loop():
    x, W = T.matrix("x"), T.matrix("W")
    out, _ = graphc.scan(lambda r, W: T.dot(r, T.exp(W) * 2), sequences=x, non_sequences=W)
    scan_op = [v.owner.op for v in graphc.graph.basic.ancestors([out])
               if v.owner is not None and isinstance(v.owner.op, Scan)][0]  # fmt: skip
    inner_ops = {type(n.op).__name__ for n in graphc.graph.basic.io_toposort(
        scan_op.inner.inputs, scan_op.inner.outputs)}  # fmt: skip
    assert "Elemwise" not in inner_ops  # exp(W) * 2 was moved out of the step
    f = graphc.function([x, W], out)
    xv, wv = np.ones((3, 2)), np.eye(2)
    np.testing.assert_allclose(f(xv, wv), xv @ (np.exp(wv) * 2))


def test_identical_loops_merge_into_one_node():
    x = T.vector("x")
    a, _ = graphc.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    b, _ = graphc.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    f = graphc.function([x], [a, b * 2])
    assert len(scan_nodes(f)) == 1
    ra, rb = f(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(ra, [1.0, 3.0])
    np.testing.assert_array_equal(rb, [2.0, 6.0])


def test_zero_steps_give_empty_outputs_of_the_right_shape_and_zero_gradients():
    x, h0 = T.matrix("x"), T.vector("h0")
    (hs, ys), _ = graphc.scan(lambda r, h: [h + r, (h * r).sum()], sequences=x,
                              outputs_info=[h0, None])  # fmt: skip
    g = graphc.grad(hs.sum() + ys.sum(), h0)
    f = graphc.function([x, h0], [hs, ys, g])
    a, b, c = f(np.zeros((0, 3)), np.ones(3))
    assert a.shape == (0, 3) and b.shape == (0,)
    np.testing.assert_array_equal(c, np.zeros(3))


@pytest.mark.parametrize("compiled", [True, False])
def test_bad_steps_are_reported_with_the_step_and_the_shapes(compiled):
    h0 = T.vector("h0")
    out, _ = graphc.scan(lambda h: T.concatenate([h, h]), outputs_info=h0, n_steps=2)
    f = graphc.function([h0], out)
    for impl in f.linked.impls:
        if hasattr(impl.perform, "compiled_loop"):
            impl.perform.compiled_loop = compiled
    with pytest.raises(ValueError, match=r"step 0 returned state 0 of shape \(4,\)"):
        f(np.ones(2))
    m = T.matrix("m")
    ys, _ = graphc.scan(lambda v: v[: T.cast(v[0], "int64")], sequences=m)
    g = graphc.function([m], ys)
    for impl in g.linked.impls:
        if hasattr(impl.perform, "compiled_loop"):
            impl.perform.compiled_loop = compiled
    with pytest.raises(ValueError, match=r"step 1 returned output 0 of shape \(1,\); step 0"):
        g(np.array([[2.0, 0.0], [1.0, 0.0]]))
    with pytest.raises(TypeError, match="dtype float32"):
        graphc.scan(lambda h: h * 2.0, outputs_info=T.fvector("h"), n_steps=2)
    with pytest.raises(ValueError, match="n_steps must be given"):
        graphc.scan(lambda h: h, outputs_info=h0)
    W = graphc.shared(np.ones(2), name="W")
    with pytest.raises(ValueError, match="strict=True"):
        graphc.scan(lambda h: h * W, outputs_info=h0, n_steps=2, strict=True)
    graphc.scan(lambda h, W: h * W, outputs_info=h0, n_steps=2, non_sequences=W, strict=True)


@pytest.mark.parametrize("go_backwards", [False, True])
def test_a_constant_negative_n_steps_runs_the_other_way(go_backwards):
    # Theano: a negative n_steps runs backwards (forwards when go_backwards is also set)
    m, h0 = T.dmatrix("m"), T.dvector("h0")

    def compiled(n_steps, backwards):
        hs, _ = graphc.scan(lambda row, h: 0.5 * h + row, sequences=m, outputs_info=h0,
                            n_steps=n_steps, go_backwards=backwards)  # fmt: skip
        return graphc.function([m, h0], [hs, graphc.grad(hs[-1].sum(), m)])

    mv, hv = np.arange(12.0).reshape(6, 2), np.ones(2)
    want, h = [], hv
    for row in (mv if go_backwards else mv[::-1])[:4]:
        h = 0.5 * h + row
        want.append(h)
    got, grad = compiled(-4, go_backwards)(mv, hv)
    np.testing.assert_allclose(got, want)
    same, same_grad = compiled(4, not go_backwards)(mv, hv)
    np.testing.assert_allclose(got, same)
    np.testing.assert_allclose(grad, same_grad)
    n = T.iscalar("n")
    hs, _ = graphc.scan(lambda h: h * 2.0, outputs_info=h0, n_steps=n)
    with pytest.raises(ValueError, match="negative n_steps runs backwards only when"):
        graphc.function([h0, n], hs)(hv, -2)


def test_theano_import_paths():
    import graphc as theano

    assert theano.scan_module.until is graphc.scan_module.until
    assert theano.scan is graphc.scan_module.scan
    out, upd = theano.scan(lambda v: v + 1, sequences=T.vector())
    assert isinstance(upd, dict) and not upd


def _rnn(profile):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=X,
                        outputs_info=h0, non_sequences=W, name="rnn")  # fmt: skip
    return graphc.function([X, W, h0], hs.sum(), profile=profile)


def test_nested_profile_adds_up_against_a_stopwatch():
    f = _rnn(True)
    rng = np.random.default_rng(0)
    args = rng.normal(size=(40, 200)), rng.normal(size=(200, 200)) * 0.05, rng.normal(size=200)
    calls = 6
    wall = 0
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        f(*args)
        wall += time.perf_counter_ns() - t0
    data = json.loads(f.profile.to_json())["functions"][0]
    (node,) = [n for n in data["nodes"] if n["inner"]]
    inner = node["inner"]
    assert node["calls"] == calls and inner["calls"] == 40 * calls
    assert inner["first_calls"] == 40  # the steps of the first call
    inner_nodes = sum(n["ns_total"] for n in inner["nodes"])
    assert inner_nodes <= inner["vm_ns"] <= node["ns_total"] <= data["vm_ns"] <= wall
    assert all(n["calls"] == 40 * calls for n in inner["nodes"])  # once per step
    buf = io.StringIO()
    f.profile.summary(file=buf)
    out = buf.getvalue()
    section = out[out.index("Scan Op profiles") :]
    assert "Scan{rnn} step (node" in section
    assert "(loop bookkeeping" in section and "(VM dispatch" in section


def test_loop_rows_add_up_to_the_loop_node():
    from graphc.profile.summaries.loops import loop_summaries

    f = _rnn(True)
    rng = np.random.default_rng(1)
    for _ in range(3):
        f(rng.normal(size=(10, 30)), rng.normal(size=(30, 30)), rng.normal(size=30))
    f.profile.refresh()
    (lp,) = loop_summaries(f.profile.functions)
    total = sum(r.exclusive_ns for r in lp.rows)
    assert total == pytest.approx(lp.ns / lp.calls, rel=0.02)
    assert lp.steps == 30


def test_chrome_trace_nests_each_step_inside_the_loop_node():
    with graphc.config.change_flags(profile_trace=True):
        f = _rnn(True)
    rng = np.random.default_rng(2)
    for _ in range(2):
        f(rng.normal(size=(5, 8)), rng.normal(size=(8, 8)), rng.normal(size=8))
    from graphc.profile.render.trace import chrome_trace

    doc = chrome_trace(f.profile)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    loops = [e for e in slices if e["cat"] == "node" and e["name"].startswith("Scan{rnn}")]
    steps = [e for e in slices if e["cat"] == "step"]
    assert len(loops) == 2 and len(steps) == 10
    for step in steps:  # each step lies inside one of the loop node's slices
        end = step["ts"] + step["dur"]
        assert any(lp["ts"] <= step["ts"] and end <= lp["ts"] + lp["dur"] + 1e-3 for lp in loops)
    inner_nodes = [e for e in slices if e["cat"] == "node" and "t-1" in e["name"]]
    assert inner_nodes  # the step's own nodes are in the trace too


def test_memory_line_reports_the_stacked_outputs():
    f = _rnn(True)
    rng = np.random.default_rng(3)
    f(rng.normal(size=(99, 64)), rng.normal(size=(64, 64)) * 0.1, rng.normal(size=64))
    buf = io.StringIO()
    f.profile.summary(file=buf)
    # the state's buffer: the initial row and 99 steps of 64 float64 = 51200 bytes
    assert "memory: stacked outputs 50KB" in buf.getvalue()


def test_gradient_through_per_step_dropout_matches_finite_differences():
    srng = RandomStreams(seed=11)
    x, W, h0 = T.matrix("x"), T.matrix("W"), T.vector("h0")

    def step(x_t, h, W):
        mask = srng.binomial(size=h.shape, n=1, p=0.7, dtype="float64")
        return T.tanh(T.dot(W, h) + x_t) * mask

    hs, updates = graphc.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    cost = (hs**2).sum()
    # without the updates the random state stays put: every call draws the same masks
    f = graphc.function([x, W, h0], cost, no_default_updates=True)
    g = graphc.function([x, W, h0], graphc.grad(cost, W), no_default_updates=True)
    rng = np.random.default_rng(4)
    xv, wv, hv = rng.normal(size=(6, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)
    eps = 1e-6
    numeric = np.zeros_like(wv)
    for idx in np.ndindex(wv.shape):
        d = np.zeros_like(wv)
        d[idx] = eps
        numeric[idx] = (f(xv, wv + d, hv) - f(xv, wv - d, hv)) / (2 * eps)
    np.testing.assert_allclose(g(xv, wv, hv), numeric, rtol=1e-6, atol=1e-8)
    assert np.abs(numeric).sum() > 0


def test_second_order_gradient_through_scan():
    x = T.vector("x")
    hs, _ = graphc.scan(lambda v, h: T.sin(h * v + v), sequences=x, outputs_info=T.constant(0.3))
    cost = hs.sum()
    H = graphc.gradient.hessian(cost, x)
    f = graphc.function([x], cost)
    h = graphc.function([x], H)
    xv = np.array([0.2, -0.5, 0.9])
    eps = 1e-4
    numeric = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):

            def at(di, dj, i=i, j=j):
                v = xv.copy()
                v[i] += di
                v[j] += dj
                return f(v)

            numeric[i, j] = (at(eps, eps) - at(eps, -eps) - at(-eps, eps) + at(-eps, -eps)) / (
                4 * eps * eps
            )
    np.testing.assert_allclose(h(xv), numeric, rtol=1e-5, atol=1e-6)


def test_random_state_used_in_a_loop_advances_without_passing_the_updates():
    srng = RandomStreams(seed=5)
    out, updates = graphc.scan(lambda: srng.normal((2,)), n_steps=3)
    f = graphc.function([], out)  # no updates given: the states' default updates apply
    a, b = f(), f()
    assert not np.array_equal(a, b)
    g = graphc.function([], out, updates=updates)
    c = g()
    assert not np.array_equal(b, c)


def test_a_state_read_only_at_its_last_row_keeps_only_its_last_row():
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = graphc.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A),
                                  non_sequences=A, n_steps=k)  # fmt: skip
    f = graphc.function([A, k], result[-1], updates=updates)
    (node,) = scan_nodes(f)
    assert node.op.info.state_last == (True,)
    np.testing.assert_array_equal(f(np.arange(5.0), 3), np.arange(5.0) ** 3)
    unopt = graphc.function([A, k], result[-1], mode=graphc.Mode(optimizer=None))
    assert scan_nodes(unopt)[0].op.info.state_last == (False,)
    np.testing.assert_array_equal(unopt(np.arange(5.0), 3), f(np.arange(5.0), 3))
    both = graphc.function([A, k], [result[-1], result], updates=updates)
    assert scan_nodes(both)[0].op.info.state_last == (False,)  # the whole output is used
    g = graphc.function([A, k], graphc.grad(result[-1].sum(), A))
    np.testing.assert_allclose(g(np.array([2.0, 3.0]), 3), 3 * np.array([2.0, 3.0]) ** 2)


def test_debugprint_shows_the_step_graph_under_the_loop():
    x = T.vector("x")
    o, _ = graphc.scan(lambda v, h: h + v * 2, sequences=x, outputs_info=T.constant(0.0))
    text = graphc.printing.debugprint(graphc.function([x], o), file="str")
    head, inner = text.split("Inner graphs of the scan ops:")
    assert "Scan{scan_fn} [id B]" in head
    assert "Scan{scan_fn} [id B]" in inner and " >   |x[t+0]" in inner


def test_rop_and_lop_through_scan_match_finite_differences():
    x, W, v, u = T.matrix("x"), T.matrix("W"), T.matrix("v"), T.vector("u")
    hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=x,
                        outputs_info=T.zeros_like(x[0]), non_sequences=W)  # fmt: skip
    y = hs[-1]
    jv = graphc.function([x, W, v], T.Rop(y, W, v))
    uj = graphc.function([x, W, u], T.Lop(y, W, u))
    fy = graphc.function([x, W], y)
    rng = np.random.default_rng(0)
    xv, wv = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)) * 0.5
    vv, uv = rng.normal(size=(3, 3)), rng.normal(size=3)
    eps = 1e-6
    numeric = (fy(xv, wv + eps * vv) - fy(xv, wv - eps * vv)) / (2 * eps)
    np.testing.assert_allclose(jv(xv, wv, vv), numeric, rtol=1e-6, atol=1e-9)
    # <u, J v> = <u J, v>: the two products agree
    assert np.dot(uv, jv(xv, wv, vv)) == pytest.approx(np.sum(uj(xv, wv, uv) * vv), rel=1e-9)


def test_independent_loops_over_the_same_steps_merge_into_one():
    x, W = T.matrix("x"), T.matrix("W")
    doubled, _ = graphc.scan(lambda v: v * 2, sequences=x)
    summed, _ = graphc.scan(lambda v, h: h + v, sequences=x, outputs_info=T.zeros_like(x[0]))
    projected, _ = graphc.scan(lambda v, W: T.dot(W, v), sequences=x, non_sequences=W)
    outs = [doubled, summed, projected.sum()]
    f = graphc.function([x, W], outs)
    unopt = graphc.function([x, W], outs, mode=graphc.Mode(optimizer=None))
    assert len(scan_nodes(f)) == 1 and len(scan_nodes(unopt)) == 3
    rng = np.random.default_rng(5)
    args = rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    for a, b in zip(f(*args), unopt(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # a loop that reads another's output cannot merge with it
    chained, _ = graphc.scan(lambda v: v + 1, sequences=summed)
    g = graphc.function([x], [summed, chained])
    assert len(scan_nodes(g)) == 2
    grads = graphc.grad(summed.sum() + doubled.sum(), x)
    np.testing.assert_allclose(graphc.function([x], grads)(args[0]),
                               np.arange(4, 0, -1)[:, None] * np.ones((4, 3)) + 2)  # fmt: skip


def _inner_functions(f):
    return [i.perform.inner_function for n, i in zip(f.linked.schedule, f.linked.impls)
            if isinstance(n.op, Scan)]  # fmt: skip


def test_scan_mode_compiles_the_step_with_that_mode():
    x = T.matrix("x")
    step = lambda v, h: T.tanh(h + v)  # noqa: E731
    h0 = T.zeros_like(x[0])
    own, _ = graphc.scan(step, sequences=x, outputs_info=h0, mode=graphc.Mode(linker="py"))
    named, _ = graphc.scan(step, sequences=x, outputs_info=h0, mode="FAST_COMPILE")
    inherited, _ = graphc.scan(step, sequences=x, outputs_info=h0)
    f = graphc.function([x], [own, named, inherited], mode=graphc.Mode(linker="c|py"))
    inner = _inner_functions(f)
    assert len(inner) == 3  # loops with different modes do not merge
    modes = sorted((fn.maker.mode.linker, fn.maker.mode.optimizer) for fn in inner)
    assert modes == sorted([("c|py", "fast_run"), ("py", "fast_run"),
                            (get_mode("FAST_COMPILE").linker, "fast_compile")])  # fmt: skip
    assert not any(i.is_c for fn in inner if fn.maker.mode.linker == "py" for i in fn.linked.impls)
    xv = np.random.default_rng(0).normal(size=(5, 3))
    want, h = [], np.zeros(3)
    for row in xv:
        h = np.tanh(h + row)
        want.append(h)
    for got in f(xv):
        np.testing.assert_allclose(got, want, rtol=1e-12)
