"""LeNet's convolution layers, forward and backward, graphc side by side with PyTensor and JAX.

Layer 1: a batch of 500 1x28x28 images, 20 5x5 filters, then 2x2 max-pooling.
Layer 2: 500 20x12x12 inputs, 50 5x5 filters, then 2x2 max-pooling.
Each candidate computes ``y = max_pool(conv2d(x, w))`` and the gradients of ``sum(y)`` with
respect to ``x`` and ``w``; float32. Times are medians of interleaved runs. PyTensor has no
NCHW multi-channel convolution: its candidate is ``signal.convolve2d`` broadcast over
(image, filter, channel) pairs and summed over channels, with pooling by reshape + max; that
is 500 000 scipy calls per pass for layer 2 (minutes), so PyTensor runs layer 2 only with
``--pytensor-layer2``.

    python benchmarks/bench_conv.py                 # also re-runs itself with 1 BLAS thread
    python benchmarks/bench_conv.py --repeat 5 --no-single-thread
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import graphc
import graphc.tensor as T
from graphc.tensor.nnet import conv2d
from graphc.tensor.signal import pool

try:
    from benchmarks.common import interleaved_samples, medians, peer_parser, peers, report_peers
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, medians, peer_parser, peers, report_peers  # type: ignore[no-redef]

LAYERS = {
    "LeNet layer 1: 500x1x28x28 * 20x1x5x5, pool 2x2": ((500, 1, 28, 28), (20, 1, 5, 5)),
    "LeNet layer 2: 500x20x12x12 * 50x20x5x5, pool 2x2": ((500, 20, 12, 12), (50, 20, 5, 5)),
}
DTYPE = "float32"


def graphc_step(x_shape, w_shape) -> Callable:
    x, w = T.tensor4("x", dtype=DTYPE), T.tensor4("w", dtype=DTYPE)
    y = pool.pool_2d(conv2d(x, w, input_shape=x_shape, filter_shape=w_shape), (2, 2),
                     ignore_border=True)  # fmt: skip
    return graphc.function([x, w], [y, *graphc.grad(y.sum(), [x, w])])


def pytensor_step(x_shape, w_shape) -> Callable:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.signal import convolve2d

    x = pt.tensor("x", dtype=DTYPE, shape=x_shape)
    w = pt.tensor("w", dtype=DTYPE, shape=w_shape)
    # (N, 1, C, H, W) with (1, F, C, KH, KW) -> (N, F, C, OH, OW), summed over C.
    conv = convolve2d(x[:, None], w[None], mode="valid").sum(axis=2)
    n, f, oh, ow = x_shape[0], w_shape[0], x_shape[2] - w_shape[2] + 1, x_shape[3] - w_shape[3] + 1
    y = conv.reshape((n, f, oh // 2, 2, ow // 2, 2)).max(axis=(3, 5))
    mode = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")
    return pytensor.function([x, w], [y, *pytensor.grad(y.sum(), [x, w])], mode=mode)


def jax_step(x_shape, w_shape) -> Callable:
    import jax
    from jax import lax

    def layer(x, w):
        conv = lax.conv_general_dilated(x, w[:, :, ::-1, ::-1], (1, 1), "VALID",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))  # fmt: skip
        return lax.reduce_window(conv, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    @jax.jit
    def step(x, w):
        y, vjp = jax.vjp(layer, x, w)
        return (y, *vjp(np.ones(y.shape, DTYPE)))

    def run(x, w):
        return [np.asarray(v) for v in jax.block_until_ready(step(x, w))]

    return run


def check_agree(outs: dict[str, list]) -> None:
    """Every candidate computes the same values. Max-pooling ties (rare in float32) are
    allowed to differ: graphc, as Theano, sends the gradient to every maximum, the others
    to one."""
    ref = outs["graphc"]
    for name, got in outs.items():
        for what, a, b in zip(("y", "dx", "dw"), ref, got):
            close = np.isclose(a, b, rtol=2e-3, atol=2e-3 * max(1.0, float(np.abs(a).max())))
            if close.mean() < 0.999:
                raise AssertionError(f"{name} disagrees with graphc on {what}")


def run(repeat: int, which: list[str], pytensor_layer2: bool = False) -> dict:
    """``{layer: {candidate: median seconds}}`` for forward + backward of each layer."""
    builders = {"graphc": graphc_step, "pytensor": pytensor_step, "jax": jax_step}
    results = {}
    rng = np.random.default_rng(0)
    for label, (x_shape, w_shape) in LAYERS.items():
        xv = rng.standard_normal(x_shape).astype(DTYPE)
        wv = (rng.standard_normal(w_shape) * 0.1).astype(DTYPE)
        names = ["graphc", *which]
        if x_shape[1] > 1 and not pytensor_layer2 and "pytensor" in names:
            names.remove("pytensor")
        fns = {name: builders[name](x_shape, w_shape) for name in names}
        check_agree({name: [np.asarray(v) for v in fn(xv, wv)] for name, fn in fns.items()})
        cands = {name: (lambda fn=fn: fn(xv, wv)) for name, fn in fns.items()}
        results[label] = medians(interleaved_samples(cands, repeat))
    return results


def render(results: dict[str, dict[str, float]], title: str) -> str:
    lines = [title]
    for label, times in results.items():
        base = times["graphc"]
        cells = ", ".join(
            f"{k} {v * 1e3:.1f} ms ({v / base:.2f}x graphc)" for k, v in times.items()
        )
        lines.append(f"- {label}, forward+backward: {cells}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = peer_parser(__doc__)
    ap.add_argument("--pytensor-layer2", action="store_true", help="minutes per call")
    args = ap.parse_args(argv)
    which = peers() if args.peers is None else args.peers
    results = run(args.repeat, which, args.pytensor_layer2)
    extra = ("--pytensor-layer2",) if args.pytensor_layer2 else ()
    report_peers(__file__, args, which, results, render, DTYPE, extra)


if __name__ == "__main__":
    main()
