"""Loops: a 2-layer LSTM training step and the per-step cost of a near-empty step, graphc's
scan side by side with PyTensor's scan and JAX's ``lax.scan`` (jit), where installed.

- LSTM: batch 32, 64 steps, 128 units, 2 layers, float64; the loss (mean of the last
  layer's hidden states, weighted) and its gradients with respect to all six weight arrays.
- Near-empty step: ``h = h + x[t]`` on a vector of 8, 2000 steps; time per step.

Times are medians of interleaved runs, with the interquartile spread over the median.

    python benchmarks/bench_scan.py             # also re-runs itself with 1 BLAS thread
    python benchmarks/bench_scan.py --repeat 5 --no-single-thread
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

try:
    from benchmarks.common import (
        cores_busy,
        interleaved_samples,
        median_spread,
        peer_parser,
        peers,
        report_peers,
    )
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import (  # type: ignore[no-redef]
        cores_busy,
        interleaved_samples,
        median_spread,
        peer_parser,
        peers,
        report_peers,
    )

BATCH, STEPS, UNITS, LAYERS = 32, 64, 128, 2
EMPTY_STEPS, EMPTY_SIZE = 2000, 8


def lstm_values(seed: int = 0) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Inputs (steps, batch, units), per layer (W, U, b), and the loss weights."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(STEPS, BATCH, UNITS))
    params = []
    for _ in range(LAYERS):
        params += [rng.normal(0, 0.08, (UNITS, 4 * UNITS)), rng.normal(0, 0.08, (UNITS, 4 * UNITS)),
                   np.zeros(4 * UNITS)]  # fmt: skip
    return x, params, rng.normal(size=(BATCH, UNITS))


def _cell(ops, pre, c_prev):
    """One LSTM cell update from the pre-activations (``ops``: a tensor namespace)."""
    u = UNITS
    i = ops.sigmoid(pre[:, :u])
    f = ops.sigmoid(pre[:, u : 2 * u])
    o = ops.sigmoid(pre[:, 2 * u : 3 * u])
    c = f * c_prev + i * ops.tanh(pre[:, 3 * u :])
    return o * ops.tanh(c), c


def _theano_style_lstm(lib, T, sigmoid_fn) -> Callable:
    """The LSTM loss and gradients in a library with Theano's API (graphc, PyTensor)."""

    class Ops:
        sigmoid = staticmethod(sigmoid_fn)
        tanh = staticmethod(T.tanh)

    x = T.tensor3("x")
    ws = T.matrix("ws")
    params = [T.matrix(f"W{k}") if k % 3 != 2 else T.vector(f"b{k}") for k in range(3 * LAYERS)]
    h = x
    for layer in range(LAYERS):
        W, U, b = params[3 * layer : 3 * layer + 3]
        proj = (T.dot(h.reshape((STEPS * BATCH, UNITS)), W) + b).reshape((STEPS, BATCH, 4 * UNITS))
        zeros = T.zeros((BATCH, UNITS))
        (h, _), _ = lib.scan(lambda p, hp, cp, U=U: _cell(Ops, p + T.dot(hp, U), cp),
                             sequences=proj, outputs_info=[zeros, zeros])  # fmt: skip
    loss = (h[-1] * ws).sum() + (h**2).mean()
    f = lib.function([x, *params, ws], [loss, *lib.grad(loss, params)])
    return lambda xv, pv, wv: f(xv, *pv, wv)


def graphc_lstm() -> Callable:
    import graphc
    import graphc.tensor as T

    return _theano_style_lstm(graphc, T, T.nnet.sigmoid)


def pytensor_lstm() -> Callable:
    import pytensor
    import pytensor.tensor as pt

    return _theano_style_lstm(pytensor, pt, pt.sigmoid)


def jax_lstm() -> Callable:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    class Ops:
        sigmoid = staticmethod(jax.nn.sigmoid)
        tanh = staticmethod(jnp.tanh)

    def loss_fn(params, x, ws):
        h = x
        for layer in range(LAYERS):
            W, U, b = params[3 * layer : 3 * layer + 3]
            proj = (h.reshape((STEPS * BATCH, UNITS)) @ W + b).reshape((STEPS, BATCH, 4 * UNITS))

            def step(carry, p, U=U):
                hn, cn = _cell(Ops, p + carry[0] @ U, carry[1])
                return (hn, cn), hn

            zeros = jnp.zeros((BATCH, UNITS))
            _, h = jax.lax.scan(step, (zeros, zeros), proj)
        return (h[-1] * ws).sum() + (h**2).mean()

    step = jax.jit(jax.value_and_grad(loss_fn))

    def run(xv, pv, wv):
        loss, grads = jax.block_until_ready(step(pv, xv, wv))
        return [np.asarray(loss), *(np.asarray(g) for g in grads)]

    return run


def empty_step_candidates() -> dict[str, Callable]:
    """``h = h + x[t]`` over EMPTY_STEPS steps, per candidate; numpy as a Python loop."""
    x = np.random.default_rng(1).normal(size=(EMPTY_STEPS, EMPTY_SIZE))
    h0 = np.zeros(EMPTY_SIZE)
    out: dict[str, Callable] = {}
    import graphc
    import graphc.tensor as T

    X, H = T.matrix("X"), T.vector("H")
    hs, _ = graphc.scan(lambda xt, h: h + xt, sequences=X, outputs_info=H)
    g = graphc.function([X, H], hs)
    out["graphc"] = lambda: g(x, h0)

    def numpy_loop():
        res = np.empty_like(x)
        h = h0
        for t in range(len(x)):
            h = h + x[t]
            res[t] = h
        return res

    out["numpy loop"] = numpy_loop
    if "pytensor" in peers():
        import pytensor
        import pytensor.tensor as pt

        PX, PH = pt.matrix("X"), pt.vector("H")
        phs, _ = pytensor.scan(lambda xt, h: h + xt, sequences=PX, outputs_info=PH)
        p = pytensor.function([PX, PH], phs)
        out["pytensor"] = lambda: p(x, h0)
    if "jax" in peers():
        import jax

        jax.config.update("jax_enable_x64", True)
        jstep = jax.jit(lambda x, h: jax.lax.scan(lambda c, xt: (c + xt, c + xt), h, x)[1])
        out["jax"] = lambda: jax.block_until_ready(jstep(x, h0))
    ref = np.cumsum(x, axis=0)
    for name, fn in out.items():
        np.testing.assert_allclose(np.asarray(fn()), ref, rtol=1e-12, err_msg=name)
    return out


def run(repeat: int, which: list[str]) -> dict:
    builders = {"graphc": graphc_lstm, "pytensor": pytensor_lstm, "jax": jax_lstm}
    xv, pv, wv = lstm_values()
    fns = {name: builders[name]() for name in ["graphc", *which]}
    ref = [np.asarray(v) for v in fns["graphc"](xv, pv, wv)]
    for name, fn in fns.items():
        for k, (a, b) in enumerate(zip(ref, fn(xv, pv, wv))):
            msg = f"{name} disagrees with graphc on output {k}"
            np.testing.assert_allclose(np.asarray(b), a, rtol=1e-7, atol=1e-9, err_msg=msg)
    # a BLAS-bound step: each sample starts after a pause (the previous candidate's BLAS or
    # JAX threads stop spinning) and an untimed call, as the suite's BLAS workloads do;
    # without it whichever candidate follows JAX's step shares a core with its threads
    cands = {n: (lambda fn=fn: fn(xv, pv, wv)) for n, fn in fns.items()}
    cpu: dict[str, list[float]] = {}
    samples = interleaved_samples(cands, repeat, setup=lambda: time.sleep(0.25), cpu=cpu)
    empty = median_spread(interleaved_samples(empty_step_candidates(), repeat))
    return {"lstm": median_spread(samples), "lstm_cores": cores_busy(samples, cpu),
            "empty": {k: (m / EMPTY_STEPS, s) for k, (m, s) in empty.items()}}  # fmt: skip


def render(results: dict, title: str) -> str:
    lines = [title]
    base = results["lstm"]["graphc"][0]
    cells = ", ".join(f"{k} {m * 1e3:.1f} ms ±{s:.0%} ({m / base:.2f}x graphc)"
                      for k, (m, s) in results["lstm"].items())  # fmt: skip
    lines.append(f"- 2-layer LSTM step (batch {BATCH}, {STEPS} steps, {UNITS} units), loss and "
                 f"gradients: {cells}")  # fmt: skip
    base = results["empty"]["graphc"][0]
    cells = ", ".join(f"{k} {m * 1e6:.2f} us ±{s:.0%} ({m / base:.2f}x graphc)"
                      for k, (m, s) in results["empty"].items())  # fmt: skip
    lines.append(f"- near-empty step (h + x[t], {EMPTY_SIZE} floats), time per step: {cells}")
    return "\n".join(lines)


def main(argv=None) -> None:
    args = peer_parser(__doc__).parse_args(argv)
    which = peers() if args.peers is None else args.peers
    report_peers(__file__, args, which, run(args.repeat, which), render, "float64")


if __name__ == "__main__":
    main()
