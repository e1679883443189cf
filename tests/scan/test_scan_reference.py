"""scan against a numpy loop and finite differences, over generated step functions,
sequence lengths (0 and 1 included), taps, go_backwards and truncate_gradient, under py,
c|py and DEBUG_MODE."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.testing import numeric_grad

MODES = {
    "py": graphc.Mode(linker="py"),
    "c|py": graphc.Mode(linker="c|py"),
    "DEBUG_MODE": "DEBUG_MODE",
}

UNARY = {
    "tanh": (T.tanh, np.tanh),
    "sin": (T.sin, np.sin),
    "square": (lambda x: x * x, lambda x: x * x),
}


def _step(ns_unary, combine_w, n_seq_taps, n_state_taps, dot):
    """A step function usable symbolically (graphc) and numerically (numpy)."""

    def step(*args):
        seq_args = args[:n_seq_taps]
        state_args = args[n_seq_taps : n_seq_taps + n_state_taps]
        w, b = args[n_seq_taps + n_state_taps :]
        total = b
        for k, a in enumerate(seq_args):
            total = total + combine_w[k] * a
        for k, s in enumerate(state_args):
            total = total + (0.5 / (k + 1)) * dot(w, s)
        y = ns_unary(total)
        return y, y * 2.0 + 1.0

    return step


def _numpy_scan(step, seq, seq_taps, init, state_taps, w, b, go_backwards, n_steps=None):
    if go_backwards:
        seq = seq[::-1]
    lo, hi = min(seq_taps), max(seq_taps)
    n = len(seq) - (hi - lo) if n_steps is None else n_steps
    n = max(n, 0)
    lag = -min(state_taps)
    buf = list(init[:lag]) if lag > 1 or init.ndim == 2 else [init]
    ys = []
    for i in range(n):
        args = [seq[i + t - lo] for t in seq_taps]
        args += [buf[lag + i + t] for t in state_taps]
        h, y = step(*args, w, b)
        buf.append(h)
        ys.append(y)
    return np.array(buf[lag:]).reshape(n, *init.shape[-1:]), np.array(ys).reshape(n, init.shape[-1])


cases = st.fixed_dictionaries(
    {
        "length": st.integers(0, 5),
        "seq_taps": st.sampled_from([[0], [-1, 0], [0, 2], [-2, 1]]),
        "state_taps": st.sampled_from([[-1], [-2], [-1, -3]]),
        "unary": st.sampled_from(sorted(UNARY)),
        "go_backwards": st.booleans(),
        "truncate": st.sampled_from([-1, 1, 2]),
        "size": st.integers(1, 3),
        "seed": st.integers(0, 2**16),
    }
)


def _build(case):
    lo, hi = min(case["seq_taps"]), max(case["seq_taps"])
    d = case["size"]
    rng = np.random.default_rng(case["seed"])
    seq_v = rng.normal(size=(case["length"] + hi - lo, d))
    lag = -min(case["state_taps"])
    sit_sot = case["state_taps"] == [-1]
    init_v = rng.normal(size=(d,) if sit_sot else (lag, d))
    w_v = rng.normal(size=(d, d)) * 0.5
    b_v = rng.normal(size=d)
    weights = rng.normal(size=len(case["seq_taps"]))
    return seq_v, init_v, w_v, b_v, weights, sit_sot


@pytest.mark.parametrize("mode", sorted(MODES))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases)
def test_values_and_gradients_match_numpy(mode, case):
    seq_v, init_v, w_v, b_v, weights, sit_sot = _build(case)
    sym_u, np_u = UNARY[case["unary"]]
    n_seq, n_st = len(case["seq_taps"]), len(case["state_taps"])
    sym_step = _step(sym_u, weights, n_seq, n_st, T.dot)
    np_step = _step(np_u, weights, n_seq, n_st, np.dot)

    seq, w, b = T.matrix("seq"), T.matrix("w"), T.vector("b")
    init = T.vector("init") if sit_sot else T.matrix("init")
    info = init if sit_sot else dict(initial=init, taps=case["state_taps"])
    (hs, ys), _ = graphc.scan(
        sym_step,
        sequences=dict(input=seq, taps=case["seq_taps"]),
        outputs_info=[info, None],
        non_sequences=[w, b],
        go_backwards=case["go_backwards"],
        truncate_gradient=case["truncate"],
    )
    rng = np.random.default_rng(case["seed"] + 1)
    n = case["length"]
    c_h = rng.normal(size=(n, case["size"]))
    c_y = rng.normal(size=(n, case["size"]))
    cost = (hs * c_h).sum() + (ys * c_y).sum()
    f = graphc.function([seq, init, w, b], [hs, ys], mode=MODES[mode])
    h_v, y_v = f(seq_v, init_v, w_v, b_v)
    h_ref, y_ref = _numpy_scan(np_step, seq_v, case["seq_taps"], init_v, case["state_taps"],
                               w_v, b_v, case["go_backwards"])  # fmt: skip
    np.testing.assert_allclose(h_v, h_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y_v, y_ref, rtol=1e-10, atol=1e-12)

    if case["truncate"] >= 0 and n > case["truncate"]:
        return  # truncated gradients differ from the true ones by design (tested below)
    grads = graphc.grad(cost, [seq, init, w, b])
    fg = graphc.function([seq, init, w, b], grads, mode=MODES[mode])
    values = [seq_v, init_v, w_v, b_v]
    got = fg(*values)

    def ref_cost(*vals):
        h, y = _numpy_scan(np_step, vals[0], case["seq_taps"], vals[1], case["state_taps"],
                           vals[2], vals[3], case["go_backwards"])  # fmt: skip
        return (h * c_h).sum() + (y * c_y).sum()

    for k, g in enumerate(got):
        numeric = numeric_grad(ref_cost, values, k)
        # central differences carry ~1e-10 relative error of the cost in every element
        scale = max(1.0, float(np.abs(numeric).max(initial=0.0)))
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6 * scale,
                                   err_msg=f"gradient of input {k}")  # fmt: skip


@pytest.mark.parametrize("truncate", [1, 2, 3])
def test_truncate_gradient_backpropagates_only_the_last_steps(truncate):
    x, h0, w = T.vector("x"), T.scalar("h0"), T.scalar("w")
    hs, _ = graphc.scan(lambda xt, h, w: T.tanh(w * h + xt), sequences=x, outputs_info=h0,
                        non_sequences=w, truncate_gradient=truncate)  # fmt: skip
    cost = hs[-1]
    gx, gh0 = graphc.grad(cost, [x, h0])
    f = graphc.function([x, h0, w], [gx, gh0])
    xv = np.array([0.1, -0.2, 0.3, 0.05, -0.4])
    g_x, g_h0 = f(xv, 0.2, 0.7)
    # by hand: d h_T / d x_t through the last `truncate` steps only
    hs_v = []
    h = 0.2
    for xt in xv:
        h = np.tanh(0.7 * h + xt)
        hs_v.append(h)
    want = np.zeros(5)
    carry = 1.0
    for t in range(4, 4 - truncate, -1):
        carry_t = carry * (1 - hs_v[t] ** 2)
        want[t] = carry_t
        carry = carry_t * 0.7
    np.testing.assert_allclose(g_x, want, rtol=1e-12)
    assert g_h0 == 0.0  # five steps, fewer kept: nothing reaches the initial state


def test_n_steps_shorter_than_the_sequence_and_too_long():
    x = T.vector("x")
    k = T.iscalar("k")
    out, _ = graphc.scan(lambda v: v * 2, sequences=x, n_steps=k)
    f = graphc.function([x, k], out)
    np.testing.assert_array_equal(f(np.arange(5.0), 3), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="sequence 0 has 5 rows, fewer than the 7 steps"):
        f(np.arange(5.0), 7)


def _use_python_loop(f) -> None:
    """Run ``f``'s loop nodes with the Python reference loop instead of the compiled one."""
    for impl in f.linked.impls:
        if hasattr(impl.perform, "compiled_loop"):
            impl.perform.compiled_loop = False


@pytest.mark.parametrize("driver", ["compiled", "python"])
@pytest.mark.parametrize("mode", ["py", "c|py"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dtype=st.sampled_from(["float32", "float64", "int8", "int32", "int64", "uint16"]),
    length=st.integers(0, 6),
    width=st.integers(1, 4),
    backwards=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_dtypes_match_a_numpy_loop(driver, mode, dtype, length, width, backwards, seed):
    """A state and a stacked output of every dtype, strided sequence rows included."""
    rng = np.random.default_rng(seed)
    big = rng.integers(-3, 4, size=(length, 2 * width)).astype(dtype)
    seq_v = big[:, ::2]  # a strided view
    init_v = rng.integers(0, 3, size=width).astype(dtype)
    seq, init = T.matrix("seq", dtype=dtype), T.vector("init", dtype=dtype)
    (acc, prod), _ = graphc.scan(lambda r, a: [a + r, a * r], sequences=seq,
                                 outputs_info=[init, None], go_backwards=backwards)  # fmt: skip
    f = graphc.function([seq, init], [acc, prod], mode=MODES[mode])
    if driver == "python":
        _use_python_loop(f)
    got_acc, got_prod = f(seq_v, init_v)
    rows = seq_v[::-1] if backwards else seq_v
    a = init_v.copy()
    want_acc, want_prod = [], []
    for r in rows:
        with np.errstate(all="ignore"):
            want_prod.append(a * r)
            a = (a + r).astype(dtype)
        want_acc.append(a)
    assert got_acc.dtype == np.dtype(dtype) and got_prod.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got_acc, np.array(want_acc, dtype=dtype).reshape(length, width))
    np.testing.assert_array_equal(got_prod, np.array(want_prod, dtype=dtype).reshape(length, width))
