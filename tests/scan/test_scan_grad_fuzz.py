"""Random scan steps against central finite differences: first derivatives of every input
and a Hessian-vector product (by grad of grad or by Rop), over steps that read hoistable
outer-only expressions (``W.T``, ``W[0]``, ``s * s``, ``exp(b)``, ``sum(W)``), tied weights,
several non-sequences, sit-sot and mit-sot states, sequences with taps, a stacked output
(possibly a state's Variable again), loops run backwards and loops stopped early by
``until``; the gradient is also run with the Python reference loop and must
match the compiled loop driver bit for bit. A quarter of ``--fuzz-examples`` examples
(each compiles three gradient graphs through every rewrite, ~1 s; ``make fuzz``: 500).
Tolerances: rtol 1e-6 (first order), 1e-5 (Hessian-vector products)."""

from __future__ import annotations

import numpy as np
import pytest
from fd_reference import fd_grad, fd_hvp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.scan_module import until
from graphc.scan_module.op import _Runner

pytestmark = pytest.mark.fuzz

MODE = graphc.Mode(linker="py")  # the step graphs, not the C code, are under test here

#: per non-sequence kind, terms of the step's pre-activation from (non-sequence, tap, row)
TERMS = {
    "W": [
        lambda W, h, x: T.dot(W, h),
        lambda W, h, x: T.dot(W.T, h),
        lambda W, h, x: T.dot(W, h) + T.dot(W.T, h),
        lambda W, h, x: W[0] * h,
        lambda W, h, x: T.sum(W) * h * 0.2,
        lambda W, h, x: T.dot(W * W, x),
    ],
    "b": [
        lambda b, h, x: b * h,
        lambda b, h, x: b * b * h,
        lambda b, h, x: T.exp(b) * 0.5,
        lambda b, h, x: b * x,
    ],
    "s": [
        lambda s, h, x: s * h,
        lambda s, h, x: s * (s * h),
        lambda s, h, x: (s * s) * h + T.sin(s) * x,
    ],
}
SHAPES = {"W": lambda d: (d, d), "b": lambda d: (d,), "s": lambda d: ()}

steps = st.fixed_dictionaries(
    {
        "d": st.integers(1, 3),
        "n": st.integers(1, 4),
        "seq_taps": st.lists(st.sampled_from([(0,), (-1, 0), (0, 2)]), max_size=2),
        "state_taps": st.lists(
            st.sampled_from([(-1,), (-2,), (-1, -3), (-2, -1)]), min_size=1, max_size=2
        ),
        "nonseqs": st.lists(st.sampled_from(sorted(TERMS)), min_size=1, max_size=3),
        "terms": st.lists(st.tuples(*[st.integers(0, 99)] * 4), min_size=1, max_size=5),
        "nit": st.sampled_from([None, "sin", "same"]),  # "same": state 0's Variable again
        "backwards": st.booleans(),
        "stop_after": st.sampled_from([None, 0, 2]),  # until(step index >= this)
        "hvp_by": st.sampled_from(["grad", "rop"]),
        "hvp_of": st.integers(0, 99),
        "seed": st.integers(0, 2**16),
    }
)


def _step_fn(case):
    """The step function: every term adds to one pre-activation; each state is the
    ``tanh`` of it plus its own first tap; the stacked output is a product of them (or
    state 0's value itself); with
    ``stop_after``, an integer step counter (the last state) stops the loop early."""
    n_seq_rows = sum(len(t) for t in case["seq_taps"])
    n_taps = sum(len(t) for t in case["state_taps"])

    def step(*args):
        rows = list(args[:n_seq_rows])
        taps = list(args[n_seq_rows : n_seq_rows + n_taps])
        nonseqs = list(args[n_seq_rows + n_taps :])
        if case["stop_after"] is not None:
            counter = nonseqs.pop(0)  # the counter's tap comes after the states' taps
        total = 0.1
        for i, j, k, m in case["terms"]:
            kind = case["nonseqs"][i % len(nonseqs)]
            term = TERMS[kind][j % len(TERMS[kind])]
            x = rows[m % len(rows)] if rows else taps[m % len(taps)] * 0.5
            total = total + term(nonseqs[i % len(nonseqs)], taps[k % len(taps)], x)
        outs, pos = [], 0
        for tk in case["state_taps"]:
            outs.append(T.tanh(total + 0.3 * taps[pos]))
            pos += len(tk)
        if case["nit"] is not None:
            outs.append(outs[0] if case["nit"] == "same" else T.sin(total) * taps[0])
        if case["stop_after"] is None:
            return outs
        return [*outs, counter + 1], until(T.ge(counter, case["stop_after"]))

    return step


def _build(case):
    """Symbolic inputs, the scalar cost and numeric values for them."""
    d, rng = case["d"], np.random.default_rng(case["seed"])
    seqs, vals = [], []
    for k, taps in enumerate(case["seq_taps"]):
        seqs.append(T.matrix(f"x{k}"))
        vals.append(rng.normal(size=(case["n"] + max(taps) - min(taps), d)))
    inits = []
    for k, taps in enumerate(case["state_taps"]):
        lag = -min(taps)
        inits.append(T.vector(f"h{k}") if taps == (-1,) else T.matrix(f"h{k}"))
        vals.append(rng.normal(size=(d,) if taps == (-1,) else (lag, d)))
    nonseqs = []
    for k, kind in enumerate(case["nonseqs"]):
        shape = SHAPES[kind](d)
        nonseqs.append(T.TensorType("float64", (None,) * len(shape))(f"{kind}{k}"))
        vals.append(rng.normal(size=shape) * 0.4)
    outs, _ = graphc.scan(
        _step_fn(case),
        sequences=[{"input": s, "taps": list(t)} for s, t in zip(seqs, case["seq_taps"])],
        outputs_info=[{"initial": h, "taps": list(t)} for h, t in zip(inits, case["state_taps"])]
        + [None] * (case["nit"] is not None)
        + ([] if case["stop_after"] is None else [T.constant(np.int64(0))]),
        non_sequences=nonseqs,
        n_steps=case["n"],
        go_backwards=case["backwards"],
        return_list=True,
    )
    cost = 0.0
    for o in outs[: len(outs) - (case["stop_after"] is not None)]:
        # a fixed projection and a square: every output row matters
        proj = T.constant(rng.normal(size=(case["n"], d)))[: o.shape[0]]
        cost = cost + (o * proj).sum() + 0.2 * (o**2).sum()
    return seqs + inits + nonseqs, cost, vals


def _with_both_loops(f, args):
    """``f(*args)`` by the compiled loop driver, checked equal to the Python loop's."""
    runners = [i.perform for i in f.linked.impls if isinstance(i.perform, _Runner)]
    got = [np.array(v, copy=True) for v in f(*args)]
    for r in runners:
        r.compiled_loop = False
    try:
        want = f(*args)
    finally:
        for r in runners:
            r.compiled_loop = True
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    return got


def check_case(case):
    inputs, cost, vals = _build(case)
    f = graphc.function(inputs, cost, mode=MODE, on_unused_input="ignore")
    grads = graphc.grad(cost, inputs, disconnected_inputs="ignore")
    grads = _with_both_loops(graphc.function(inputs, grads, mode=MODE), vals)
    for k, x in enumerate(inputs):
        np.testing.assert_allclose(grads[k], fd_grad(f, vals, k), rtol=1e-6, atol=1e-7,
                                   err_msg=f"gradient of {x} in {case}")  # fmt: skip
    k = case["hvp_of"] % len(inputs)  # a sequence, an initial state or a non-sequence
    w = inputs[k]
    v = w.type("v")
    g = graphc.grad(cost, w, disconnected_inputs="ignore")
    if case["hvp_by"] == "rop":
        hvp = T.Rop(g, w, v, disconnected_outputs="ignore")
    else:
        hvp = graphc.grad((g * v).sum(), w, disconnected_inputs="ignore")
    vv = np.random.default_rng(case["seed"] + 1).normal(size=vals[k].shape)
    got = graphc.function([*inputs, v], hvp, mode=MODE, on_unused_input="ignore")(*vals, vv)
    np.testing.assert_allclose(got, fd_hvp(f, vals, k, vv), rtol=1e-5, atol=1e-6,
                               err_msg=f"Hessian-vector product in {w} in {case}")  # fmt: skip


def test_fuzz_scan_gradients_match_finite_differences(fuzz_examples):
    n = max(5, fuzz_examples // 4)

    @settings(max_examples=n, deadline=None, derandomize=n <= 200,
              suppress_health_check=list(HealthCheck), database=None)  # fmt: skip
    @given(steps)
    def run(case):
        check_case(case)

    run()
