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
    python benchmarks/bench_conv.py --ops           # forward, grad inputs, grad filters

``--ops`` times the convolution and its two gradients one by one on LeNet's layers and on
VGG-like 3x3 layers (64 to 64 channels, batch 32, 32x32 and 56x56), float32 and float64,
beside Theano's CorrMM (from PyTensor <= 2.8's ``pytensor.tensor.nnet``, else from Theano
0.8.2 itself in a worker process of the venv ``scripts/theano_reference.sh`` makes,
``$THEANO_VENV``; left out when neither is there) and JAX, medians and IQR of interleaved
runs.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import graphc
import graphc.tensor as T
from graphc.tensor.nnet import conv2d
from graphc.tensor.signal import pool

try:
    from benchmarks.bench_blas import openblas_core
    from benchmarks.common import (
        interleaved_samples,
        median_spread,
        medians,
        peer_parser,
        peers,
        ratio_note,
        report_peers,
        round_ratios,
    )
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from bench_blas import openblas_core  # type: ignore[no-redef]
    from common import (  # type: ignore[no-redef]
        interleaved_samples,
        median_spread,
        medians,
        peer_parser,
        peers,
        ratio_note,
        report_peers,
        round_ratios,
    )

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


OP_LAYERS = {
    "LeNet layer 1, 500x1x28x28 * 20x1x5x5": ((500, 1, 28, 28), (20, 1, 5, 5), "valid"),
    "LeNet layer 2, 500x20x12x12 * 50x20x5x5": ((500, 20, 12, 12), (50, 20, 5, 5), "valid"),
    "VGG-like 32x64x32x32 * 64x64x3x3, half": ((32, 64, 32, 32), (64, 64, 3, 3), "half"),
    "VGG-like 32x64x56x56 * 64x64x3x3, half": ((32, 64, 56, 56), (64, 64, 3, 3), "half"),
}
"""Each layer's convolution and its two gradients timed one by one (``op_run``)."""
OPS = ("forward", "grad inputs", "grad filters")


def graphc_ops(x_shape, w_shape, border, dtype) -> tuple:
    """graphc's forward, gradient w.r.t. the input (filters, output gradient) and w.r.t. the
    filters (input, output gradient), each a function of its own."""
    from graphc.tensor.conv import Conv2dGradInputs, Conv2dGradWeights

    x, w, g = (T.tensor4(n, dtype=dtype) for n in "xwg")
    in_hw, k_hw = (T.as_tensor_variable(np.array(s[2:], "int64")) for s in (x_shape, w_shape))
    return (
        graphc.function([x, w], conv2d(x, w, border_mode=border)),
        graphc.function([w, g], Conv2dGradInputs(border_mode=border)(w, g, in_hw)),
        graphc.function([x, g], Conv2dGradWeights(border_mode=border)(x, g, k_hw)),
    )


def corrmm_ops(x_shape, w_shape, border, dtype) -> tuple:
    """The same three with Theano's CorrMM C code, as PyTensor carried it until 2.8 (its
    ``tensor.nnet``, removed in 2.9): ImportError on a newer PyTensor."""
    import pytensor
    from pytensor.tensor import tensor4
    from pytensor.tensor.nnet import abstract_conv as ac

    x, w, g = (tensor4(n, dtype=dtype) for n in "xwg")
    mode = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")
    kw = {"border_mode": border}
    outs = (
        ([x, w], ac.conv2d(x, w, x_shape, w_shape, **kw)),
        ([w, g], ac.conv2d_grad_wrt_inputs(g, w, x_shape, w_shape, **kw)),
        ([x, g], ac.conv2d_grad_wrt_weights(x, g, w_shape, x_shape, **kw)),
    )
    fns = tuple(pytensor.function(ins, out, mode=mode) for ins, out in outs)
    names = {type(n.op).__name__ for f in fns for n in f.maker.fgraph.toposort()}
    if not {"CorrMM", "CorrMM_gradInputs", "CorrMM_gradWeights"} <= names:
        raise ImportError(f"PyTensor did not use CorrMM: {sorted(names)}")
    return fns


THEANO_VENV = Path(os.environ.get("THEANO_VENV", Path.home() / ".cache/graphc/theano-0.8.2"))


class _Worker:
    """A ``benchmarks/corrmm_worker.py`` process under the Theano 0.8.2 venv."""

    live: list[subprocess.Popen] = []
    dirs: list[Path] = []

    def __init__(self, build: list):
        python = THEANO_VENV / "bin" / "python"
        if not (python.exists() and (THEANO_VENV / "theanorc").exists()):
            raise ImportError(
                f"no Theano 0.8.2 venv at {THEANO_VENV} (scripts/theano_reference.sh)"
            )
        self.tmp = Path(tempfile.mkdtemp(prefix="graphc-corrmm-"))
        _Worker.dirs.append(self.tmp)
        env = dict(os.environ, THEANORC=str(THEANO_VENV / "theanorc"))
        # its own compile directory: the shared venv is only read
        env["THEANO_FLAGS"] = f"base_compiledir={Path('build/theano-corrmm').resolve()}"
        # the venv's OpenBLAS 0.3.18 runs its generic kernels on CPUs it does not know
        # (about 4x slower here): give it the kernels numpy's OpenBLAS picked
        core = os.environ.get("OPENBLAS_CORETYPE") or openblas_core()
        if core:
            env["OPENBLAS_CORETYPE"] = core
        worker = Path(__file__).with_name("corrmm_worker.py")
        self.proc = subprocess.Popen([str(python), str(worker)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)  # fmt: skip
        _Worker.live.append(self.proc)
        self.ask({"build": build})
        self.sent: dict[int, tuple] = {}

    def ask(self, req: dict) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        if not self.proc.stdout.readline():
            raise RuntimeError("the CorrMM worker exited (see its stderr)")

    def call(self, op: int, *args: np.ndarray):
        """Run op on args; the result only on the first call with these args."""
        if self.sent.get(op) != tuple(map(id, args)):
            paths = [str(self.tmp / f"{op}-{i}.npy") for i in range(len(args))]
            for path, a in zip(paths, args):
                np.save(path, a)
            self.ask({"args": [op, *paths]})
            self.sent[op] = tuple(map(id, args))
            out = str(self.tmp / f"{op}-out.npy")
            self.ask({"run": op, "out": out})
            return np.load(out)
        self.ask({"run": op, "out": None})
        return None


@atexit.register
def _stop_workers() -> None:
    for proc in _Worker.live:
        proc.kill()
    for tmp in _Worker.dirs:
        shutil.rmtree(tmp, ignore_errors=True)


def corrmm_theano_ops(x_shape, w_shape, border, dtype) -> tuple:
    """The same three with Theano 0.8.2's CorrMM, in a worker process of its venv (each
    call's time includes a pipe round trip, tens of microseconds): ImportError without it."""
    worker = _Worker([list(x_shape), list(w_shape), border, dtype])
    return tuple(lambda *a, op=op: worker.call(op, *a) for op in range(3))


def corrmm_any_ops(x_shape, w_shape, border, dtype) -> tuple:
    """CorrMM from PyTensor <= 2.8, else from Theano 0.8.2's venv."""
    try:
        return corrmm_ops(x_shape, w_shape, border, dtype)
    except ImportError:
        return corrmm_theano_ops(x_shape, w_shape, border, dtype)


def jax_ops(x_shape, w_shape, border, dtype) -> tuple:
    """The same three with ``lax.conv_general_dilated`` and its VJPs, jitted."""
    import jax
    from jax import lax

    pad = {"valid": "VALID", "half": "SAME"}[border]

    def conv(x, w):
        return lax.conv_general_dilated(x, w[:, :, ::-1, ::-1], (1, 1), pad,
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))  # fmt: skip

    x0, w0 = np.zeros(x_shape, dtype), np.zeros(w_shape, dtype)
    jitted = (
        jax.jit(conv),
        jax.jit(lambda w, g: jax.vjp(lambda x: conv(x, w), x0)[1](g)[0]),
        jax.jit(lambda x, g: jax.vjp(lambda w: conv(x, w), w0)[1](g)[0]),
    )
    return tuple(lambda *a, f=f: np.asarray(jax.block_until_ready(f(*a))) for f in jitted)


def rotated_samples(cands: dict[str, Callable[[], object]], repeat: int) -> dict[str, list]:
    """``repeat`` seconds per call of each candidate, taken in turns whose order rotates
    every round (no candidate always runs after the same one)."""
    names = list(cands)
    samples: dict[str, list[float]] = {k: [] for k in names}
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            cands[name]()
            samples[name].append(time.perf_counter() - t0)
    return samples


def op_run(
    repeat: int,
    which: list[str],
    dtypes=("float32", "float64"),
    layers=None,
    ratios: dict | None = None,
) -> dict:
    """``{"<layer>, <op>, <dtype>": {candidate: (median seconds, IQR / median)}}``: graphc,
    ``corrmm`` (where PyTensor <= 2.8 or Theano 0.8.2's venv is there) and ``jax``,
    interleaved in rotating order; each candidate's results are checked against graphc's
    first. ``ratios``, if given, receives each key's :func:`round_ratios`."""
    if "jax" in which:
        import jax

        jax.config.update("jax_enable_x64", True)
    builders = {"graphc": graphc_ops, "corrmm": corrmm_any_ops, "jax": jax_ops}
    rng = np.random.default_rng(0)
    results = {}
    for dtype in dtypes:
        for label in layers or OP_LAYERS:
            x_shape, w_shape, border = OP_LAYERS[label]
            cands = {}
            for name in ["graphc", "corrmm", *which]:
                if name in builders and name not in cands:
                    try:
                        cands[name] = builders[name](x_shape, w_shape, border, dtype)
                    except ImportError:
                        pass
            xv = rng.standard_normal(x_shape).astype(dtype)
            wv = (rng.standard_normal(w_shape) * 0.1).astype(dtype)
            gv = rng.standard_normal(cands["graphc"][0](xv, wv).shape).astype(dtype)
            args = ((xv, wv), (wv, gv), (xv, gv))
            tol = 1e-3 if dtype == "float32" else 1e-9
            for i, op in enumerate(OPS):
                want = np.asarray(cands["graphc"][i](*args[i]))
                for name, fns in cands.items():
                    got = np.asarray(fns[i](*args[i]))
                    if not np.allclose(got, want, rtol=tol, atol=tol * np.abs(want).max()):
                        raise AssertionError(f"{name} disagrees with graphc: {label}, {op}")
                calls = {k: (lambda f=fns[i], a=args[i]: f(*a)) for k, fns in cands.items()}
                samples = rotated_samples(calls, repeat)
                results[f"{label}, {op}, {dtype}"] = median_spread(samples)
                if ratios is not None:
                    ratios[f"{label}, {op}, {dtype}"] = round_ratios(samples)
    return results


def render_ops(results: dict, title: str, ratios: dict | None = None) -> str:
    lines = [title]
    for label, times in results.items():
        base = times["graphc"][0]
        cells = ", ".join(
            f"{k} {m * 1e3:.1f} ms ({m / base:.2f}x graphc, IQR {s * 100:.0f}%)"
            for k, (m, s) in times.items()
        )
        if ratios and ratios.get(label):
            cells += f"; {ratio_note(ratios[label])}"
        lines.append(f"- {label}: {cells}")
    return "\n".join(lines)


def render_op_run(run_: dict, title: str) -> str:
    """:func:`render_ops` of ``{"times": op_run's results, "ratios": its ratios}``."""
    return render_ops(run_["times"], title, run_["ratios"])


def main(argv=None) -> None:
    ap = peer_parser(__doc__)
    ap.add_argument("--pytensor-layer2", action="store_true", help="minutes per call")
    ap.add_argument("--ops", action="store_true",
                    help="time forward and both gradients one by one, float32 and float64, "
                         "beside CorrMM (PyTensor <= 2.8) and JAX")  # fmt: skip
    args = ap.parse_args(argv)
    which = peers() if args.peers is None else args.peers
    if args.ops:
        ratios: dict = {}
        run_ = {"times": op_run(args.repeat, which, ratios=ratios), "ratios": ratios}
        report_peers(__file__, args, which, run_, render_op_run, "float32/float64", ("--ops",))
        return
    results = run(args.repeat, which, args.pytensor_layer2)
    extra = ("--pytensor-layer2",) if args.pytensor_layer2 else ()
    report_peers(__file__, args, which, results, render, DTYPE, extra)


if __name__ == "__main__":
    main()
