"""The element-wise fast loop (``graphc.scan_module.fastloop``): a step that is one
element-wise node runs as one C loop over that node's kernel. Its results must be those of
the compiled driver's general loop and of the Python reference loop, bit for bit; these
tests also check where it is taken and where not, and how a profiled loop counts it."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.scan_module import until
from graphc.scan_module.op import _Runner


def runner_of(f) -> _Runner:
    (r,) = [impl.perform for impl in f.linked.impls if isinstance(impl.perform, _Runner)]
    return r


def three_ways(f, *args) -> tuple[list[np.ndarray], bool]:
    """``f(*args)`` with the fast loop when it applies, checked bit for bit against the
    general loop and the Python reference loop; also whether the fast loop ran."""
    r = runner_of(f)
    runs = r.fast.runs if r.fast is not None else 0
    if r.fast is not None:
        r.fast.min_steps = 1  # short loops too (by default they run the general loop)
    got = [np.array(v, copy=True) for v in f(*args)]
    took = r.fast is not None and r.fast.runs == runs + 1
    fast, r.fast = r.fast, None
    try:
        general = [np.array(v, copy=True) for v in f(*args)]
        r.compiled_loop = False
        reference = [np.array(v, copy=True) for v in f(*args)]
    finally:
        r.fast, r.compiled_loop = fast, True
    for want in (general, reference):
        assert len(want) == len(got)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    return got, took


def _const(value, dtype):
    return T.constant(np.asarray(value, dtype=dtype))


def _mix(terms, dtype):
    """An element-wise function of ``terms`` that stays bounded (floats: through tanh, the
    vector math; integers: modulo a prime). One heavy function: fusion keeps one that
    reads another in a loop of its own."""
    s = terms[0]
    for t in terms[1:]:
        s = s + t
    if dtype.startswith("float"):
        return T.tanh(s * _const(0.5, dtype)) + s * _const(0.25, dtype)
    return s % _const(1009, dtype)


@st.composite
def loops(draw):
    dtype = draw(st.sampled_from(["float64", "float32", "int64"]))
    row = draw(st.sampled_from([(), (1,), (5,), (2, 3), (600,)]))
    taps = draw(st.lists(st.sampled_from([(-1,), (-2, -1), (-3, -1), (-2,)]), min_size=1,
                         max_size=2))  # fmt: skip
    return dict(
        dtype=dtype,
        row=row,
        steps=draw(st.sampled_from([0, 1, 2, 7, 40])),
        n_seqs=draw(st.integers(0, 2)),
        taps=taps,
        n_nit=draw(st.integers(0, 1)),
        n_nonseqs=draw(st.integers(0, 2)),
        scalar_const=draw(st.booleans()),
        backwards=draw(st.booleans()),
    )


def _build(c):
    dtype, row = c["dtype"], c["row"]
    nd = len(row)

    def var(name, extra):
        return T.tensor(dtype=dtype, shape=(None,) * (nd + extra), name=name)

    seqs = [var(f"s{k}", 1) for k in range(c["n_seqs"])]
    inits = [var(f"h{k}", int(taps != (-1,))) for k, taps in enumerate(c["taps"])]
    nonseqs = [var(f"w{k}", 0) for k in range(c["n_nonseqs"])]
    n_states = len(c["taps"])

    def step(*args):
        terms = list(args)
        if c["scalar_const"]:
            terms.append(_const(3, dtype))  # a one-element value the loop expands
        outs = [_mix(terms, dtype) + _const(k, dtype) for k in range(n_states)]
        outs += [terms[0] * _const(2, dtype) - terms[-1] for _ in range(c["n_nit"])]
        return outs

    info = [
        init if taps == (-1,) else dict(initial=init, taps=list(taps))
        for init, taps in zip(inits, c["taps"])
    ]
    info += [None] * c["n_nit"]
    outs, _ = graphc.scan(step, sequences=seqs, outputs_info=info, non_sequences=nonseqs,
                          n_steps=c["steps"], go_backwards=c["backwards"])  # fmt: skip
    outs = outs if isinstance(outs, list) else [outs]
    return graphc.function([*seqs, *inits, *nonseqs], outs), seqs, inits, nonseqs


def _values(c, rng):
    dtype, row, n = c["dtype"], c["row"], c["steps"]

    def draw(shape):
        if dtype == "int64":
            return rng.integers(-50, 50, size=shape).astype(dtype)
        return rng.normal(size=shape).astype(dtype)

    args = [draw((n + 2, *row)) for _ in range(c["n_seqs"])]
    for taps in c["taps"]:
        args.append(draw(row) if taps == (-1,) else draw((-min(taps), *row)))
    args += [draw(row) for _ in range(c["n_nonseqs"])]
    return args


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(loops(), st.integers(0, 2**32 - 1))
def test_the_fast_loop_is_the_general_loop_bit_for_bit(c, seed):
    f, *_ = _build(c)
    args = _values(c, np.random.default_rng(seed))
    r = runner_of(f)
    assert r.fast is not None  # each of these steps is one element-wise node
    _, took = three_ways(f, *args)
    # the step's constants, hoisted out of the loop, are one-element non-sequences: the
    # thunk's driver expands at most 8 into a block of 512 elements, the fast loop too
    (node,) = [n for n in f.maker.fgraph.apply_nodes if n.op is r.op]
    _, _, _, nonseqs = r.op.outer_split(node.inputs)
    n_elem = int(np.prod(c["row"]))
    n_small = sum(1 for v in nonseqs if np.size(getattr(v, "data", [])) == 1 and n_elem != 1)
    assert took == (c["steps"] > 0 and (n_small == 0 or (n_small <= 8 and n_elem <= 512)))


def test_common_steps_take_the_fast_loop():
    X, H = T.matrix("X"), T.vector("H")
    hs, _ = graphc.scan(lambda xt, h: h + xt, sequences=X, outputs_info=H)
    f = graphc.function([X, H], [hs])
    xv = np.random.default_rng(0).normal(size=(50, 8))
    fast = runner_of(f).fast
    runs = fast.runs
    f(xv[:10], np.zeros(8))
    assert fast.runs == runs  # a short loop: the general loop is cheaper
    (got,), took = three_ways(f, xv, np.zeros(8))
    assert took
    np.testing.assert_array_equal(got, np.cumsum(xv, axis=0))
    # long rows, vector math, a stacked output, float32
    X32, H32 = T.matrix("X", dtype="float32"), T.vector("H", dtype="float32")
    (hs, ys), _ = graphc.scan(lambda xt, h: [T.tanh(h) * xt - h, T.exp(h) * xt],
                              sequences=X32, outputs_info=[H32, None])  # fmt: skip
    f = graphc.function([X32, H32], [hs, ys])
    rng = np.random.default_rng(1)
    (hv, yv), took = three_ways(f, rng.normal(size=(30, 5000)).astype("float32"),
                               rng.normal(size=5000).astype("float32"))  # fmt: skip
    assert took and hv.shape == yv.shape == (30, 5000)


def test_a_until_loop_stops_where_the_general_loop_does():
    x0 = T.scalar("x0")
    out, _ = graphc.scan(lambda x: (x * 1.05, until(x * 1.05 > 4150.0)), outputs_info=x0,
                         n_steps=1000)  # fmt: skip
    f = graphc.function([x0], [out])
    (got,), took = three_ways(f, np.float64(1.0))
    assert took and got.shape == (171,) and got[-1] > 4150.0 >= got[-2]
    (got,), took = three_ways(f, np.float64(5000.0))  # stops after the first step
    assert took and got.shape == (1,)


def test_a_shared_variable_updated_in_the_loop_kept_last_only():
    acc = graphc.shared(np.zeros(3), name="acc")
    x = T.matrix("x")
    out, updates = graphc.scan(lambda v: (v * 2.0, {acc: acc + v}), sequences=x)
    f = graphc.function([x], [out], updates=updates)
    r = runner_of(f)
    assert r.op.info.state_last == (True,)
    r.fast.min_steps = 1
    xv = np.arange(12.0).reshape(4, 3)
    acc.set_value(np.ones(3))
    runs = r.fast.runs
    np.testing.assert_array_equal(f(xv)[0], xv * 2)
    assert r.fast.runs == runs + 1
    np.testing.assert_array_equal(acc.get_value(), 1 + xv.sum(axis=0))


def test_steps_that_are_not_one_element_wise_node_take_the_general_loop():
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=X,
                        outputs_info=h0, non_sequences=W)  # fmt: skip
    assert runner_of(graphc.function([X, W, h0], hs)).fast is None
    x16, h16 = T.matrix("x", dtype="float16"), T.vector("h", dtype="float16")
    hs16, _ = graphc.scan(lambda xt, h: h + xt, sequences=x16, outputs_info=h16)
    f16 = graphc.function([x16, h16], [hs16])
    assert runner_of(f16).fast is None  # float16 runs numpy: no kernel
    xv = np.random.default_rng(1).normal(size=(6, 3)).astype("float16")
    r = runner_of(f16)
    got = f16(xv, np.zeros(3, "float16"))[0]
    r.compiled_loop = False
    np.testing.assert_array_equal(got, f16(xv, np.zeros(3, "float16"))[0])
    hs_py, _ = graphc.scan(lambda xt, h: h + xt, sequences=X, outputs_info=h0)
    f_py = graphc.function([X, h0], hs_py, mode="FAST_COMPILE")  # the py linker
    assert runner_of(f_py).fast is None


def test_rows_that_are_not_contiguous_take_the_general_loop():
    X, H = T.matrix("X"), T.vector("H")
    hs, _ = graphc.scan(lambda xt, h: h * 0.5 + xt, sequences=X, outputs_info=H)
    f = graphc.function([X, H], [hs])
    xv = np.random.default_rng(2).normal(size=(9, 10))
    (got,), took = three_ways(f, xv[:, ::2], np.ones(5))  # rows of stride 2 elements
    assert not took
    (got2,), took = three_ways(f, np.ascontiguousarray(xv[:, ::2]), np.ones(5))
    assert took
    np.testing.assert_array_equal(got, got2)


def test_kernels_are_exported_for_element_wise_nodes_only():
    x, y = T.vector("x"), T.vector("y")
    kinds = {}
    for outs in ([x * y + x, T.dot(x, y)], [(x * y).sum()]):  # the sum: a loop with sums
        f = graphc.function([x, y], outs)
        for node, impl in zip(f.linked.schedule, f.linked.impls):
            assert impl.is_c
            kinds[type(node.op).__name__] = repr(impl.c_kernel)
    assert 'capsule object "graphc.ew_kernel"' in kinds.pop("Elemwise")
    assert len(kinds) >= 2 and set(kinds.values()) == {"None"}


# ---------------------------------------------------------------- profiling


def _growth(profile=True):
    x0 = T.scalar("x0")
    out, _ = graphc.scan(lambda x: (x * 1.05, until(x * 1.05 > 4150.0)), outputs_info=x0,
                         n_steps=1000)  # fmt: skip
    return graphc.function([x0], out[-1], profile=profile)


def _loop_record(f):
    f.profile.refresh()
    (node,) = [n for n in f.profile.functions[0].nodes if n.inner is not None]
    return node


def test_a_profiled_fast_loop_counts_each_step_within_a_stopwatch():
    f = _growth()
    fast = runner_of(f).fast
    wall = 0
    for _ in range(7):
        t0 = time.perf_counter_ns()
        f(1.0)
        wall += time.perf_counter_ns() - t0
    assert 0 < fast.runs < 7  # calls sampling shapes (1, 2, 4) run the VM's own steps
    node = _loop_record(f)
    assert node.calls == 7
    assert node.inner.calls == 7 * 171
    assert [n.calls for n in node.inner.nodes] == [7 * 171]
    inner_ns = sum(n.ns_total for n in node.inner.nodes)
    assert 0 < inner_ns <= node.inner.vm_ns <= node.ns_total <= wall


def test_a_memory_profile_runs_the_vms_own_steps():
    with graphc.config.change_flags(profile_memory=True):
        f = _growth()
    fast = runner_of(f).fast
    for _ in range(5):
        f(1.0)
    assert fast.runs == 0  # the memory records come from the VM's steps
    assert _loop_record(f).inner.calls == 5 * 171


def test_untimed_calls_count_no_step():
    with graphc.config.change_flags(profile_sample=3):
        f = _growth()
    fast = runner_of(f).fast
    for _ in range(9):
        f(1.0)
    assert fast.runs > 0
    node = _loop_record(f)
    assert node.inner.calls == 3 * 171  # calls 1, 4 and 7 are timed
    assert [n.calls for n in node.inner.nodes] == [3 * 171]


@pytest.mark.parametrize("profile", [False, True])
def test_the_profiled_and_unprofiled_fast_loops_agree(profile):
    f = _growth(profile)
    assert f(1.0) == _growth(False)(1.0)
