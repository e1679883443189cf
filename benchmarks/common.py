"""What the benchmark scripts share: interleaved timing, the installed peers, the
peer-comparison command line, and the NumPy reference of the MLP training step.

The scripts run both as ``python benchmarks/<script>.py`` and as modules of the package
(``python -m benchmarks``), so they import this module under either name.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Collection

import numpy as np


def interleaved_samples(
    cands: dict[str, Callable[[], object]],
    repeat: int,
    *,
    number: int = 1,
    setup: Callable[[], None] | None = None,
    gc_off: bool = False,
    warm_up: bool = True,
    cpu: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """``repeat`` samples of the seconds per call of each candidate, taken in turns so that
    drifts (clock, heat, other load) hit every candidate alike. Every candidate is called
    once first unless ``warm_up`` is False. A sample times ``number`` calls, with the
    garbage collector off if ``gc_off``; with a ``setup``, it runs before each sample,
    followed by one untimed call (the candidate's BLAS threads wake up). A ``cpu`` dict
    receives each sample's CPU seconds per call, of every thread of the process."""
    if warm_up:
        for fn in cands.values():
            fn()
    samples: dict[str, list[float]] = {k: [] for k in cands}
    for _ in range(repeat):
        for name, fn in cands.items():
            if setup is not None:
                setup()
                fn()
            if gc_off:
                gc.disable()
            c0 = time.process_time() if cpu is not None else 0.0
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - t0) / number)
            if cpu is not None:
                cpu.setdefault(name, []).append((time.process_time() - c0) / number)
            if gc_off:
                gc.enable()
    return samples


def peers() -> list[str]:
    """The peer libraries that are installed, of PyTensor and JAX."""
    found = []
    for name in ("pytensor", "jax"):
        try:
            __import__(name)
            found.append(name)
        except ImportError:
            pass
    return found


def peer_parser(doc: str | None) -> argparse.ArgumentParser:
    """The command line of a script that times graphc beside its peers."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--peers", nargs="*", default=None, help="default: every installed peer")
    ap.add_argument("--no-single-thread", action="store_true",
                    help="do not re-run with OPENBLAS_NUM_THREADS=1")  # fmt: skip
    ap.add_argument("--json", action="store_true", help="print the results as JSON only")
    return ap


def size_parser(doc: str | None) -> argparse.ArgumentParser:
    """The command line of a script timing element-wise work: ``--n`` elements,
    ``--repeats`` samples."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeats", type=int, default=30)
    return ap


def report_peers(
    script: str,
    args: argparse.Namespace,
    which: list[str],
    results: dict,
    render: Callable[[dict, str], str],
    dtype: str,
    extra_args: tuple[str, ...] = (),
) -> None:
    """Print ``results`` (only as JSON with ``--json``); then, unless ``--no-single-thread``,
    run ``script`` again in a child process with one BLAS thread and print its results."""
    if args.json:
        print(json.dumps(results))
        return
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(render(results, f"{dtype}, median of {args.repeat} interleaved runs, "
                          f"OPENBLAS_NUM_THREADS={threads}"))  # fmt: skip
    if not args.no_single_thread:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")  # fmt: skip
        cmd = [sys.executable, script, "--repeat", str(args.repeat), "--json",
               "--peers", *which, *extra_args]  # fmt: skip
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        print(render(json.loads(out.splitlines()[-1]), "with OPENBLAS_NUM_THREADS=1:"))


def numpy_mlp_step(params: list[np.ndarray], xv: np.ndarray, yv: np.ndarray) -> float:
    """One SGD step (rate 0.01) of the 784-500-10 tanh MLP with softmax cross-entropy,
    updating ``params`` (w1, b1, w2, b2) in place; returns the cost before the step."""
    w1, b1, w2, b2 = params
    h = np.tanh(xv @ w1 + b1)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    n = len(yv)
    cost = -np.log(p[np.arange(n), yv]).mean()
    gz = p.copy()
    gz[np.arange(n), yv] -= 1
    gz /= n
    gh = (gz @ w2.T) * (1 - h * h)
    for q, g in zip(params, (xv.T @ gh, gh.sum(0), h.T @ gz, gz.sum(0))):
        q -= 0.01 * g
    return cost


class NumpyMlpStep:
    """The step of ``numpy_mlp_step`` written as a careful numpy programmer would for speed:
    every intermediate in a buffer made once (``out=``, in-place operators), so no call
    allocates (or page-faults) a temporary, whatever the allocator does with freed memory.
    Same results as ``numpy_mlp_step`` to rounding."""

    def __init__(self, params: list[np.ndarray], n: int):
        self.params = params
        w1, _, w2, _ = params
        self.h = np.empty((n, w1.shape[1]))
        self.z = np.empty((n, w2.shape[1]))
        self.gh = np.empty_like(self.h)
        self.gw1 = np.empty_like(w1)
        self.gw2 = np.empty_like(w2)
        self.rows = np.arange(n)

    def __call__(self, xv: np.ndarray, yv: np.ndarray) -> float:
        w1, b1, w2, b2 = self.params
        h, z, gh, rows, n = self.h, self.z, self.gh, self.rows, len(yv)
        np.matmul(xv, w1, out=h)
        h += b1
        np.tanh(h, out=h)
        np.matmul(h, w2, out=z)
        z += b2
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)  # p
        cost = -np.log(z[rows, yv]).mean()
        z[rows, yv] -= 1
        z /= n  # the gradient of the cost w.r.t. the logits
        np.matmul(z, w2.T, out=gh)
        np.matmul(h.T, z, out=self.gw2)
        np.multiply(h, h, out=h)
        np.subtract(1, h, out=h)
        gh *= h
        np.matmul(xv.T, gh, out=self.gw1)
        for q, g in ((w1, self.gw1), (w2, self.gw2)):
            g *= 0.01
            q -= g
        b1 -= 0.01 * gh.sum(0)
        b2 -= 0.01 * z.sum(0)
        return float(cost)


def median_spread(samples: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Per candidate: (median, interquartile range / median) of its samples."""
    out = {}
    for k, v in samples.items():
        med = statistics.median(v)
        q = np.percentile(v, [25, 75])
        out[k] = (med, float((q[1] - q[0]) / med) if med else 0.0)
    return out


def round_ratios(
    samples: dict[str, list[float]], only: Collection[str] | None = None
) -> dict[str, tuple[float, float, float]]:
    """Each candidate's time over the first one's (graphc's) within each round, where they
    ran moments apart: (median, first quartile, third quartile) of those ratios; of the
    candidates in ``only`` where given. On a shared machine the load drifts between rounds;
    a ratio of neighbours cancels most of it."""
    names = list(samples)
    base = samples[names[0]]
    out = {}
    for k in names[1:]:
        if only is not None and k not in only:
            continue
        rv = [a / b for a, b in zip(samples[k], base)]
        q1, q3 = np.percentile(rv, [25, 75])
        out[k] = (statistics.median(rv), float(q1), float(q3))
    return out


def ratio_note(ratios: dict[str, tuple[float, float, float]]) -> str:
    """The per-round ratios as one line: ``per-round time / graphc's: corrmm 1.100x (IQR
    1.050-1.150), ...``."""
    return "per-round time / graphc's: " + ", ".join(
        f"{k} {m:.3f}x (IQR {lo:.3f}-{hi:.3f})" for k, (m, lo, hi) in ratios.items()
    )


def cores_busy(wall: dict[str, list[float]], cpu: dict[str, list[float]]) -> dict[str, float]:
    """Per candidate: its median CPU time over its median wall time, the cores it kept busy
    (1.0 for one thread; more where a thread pool shares the work, as JAX's does)."""
    return {k: statistics.median(cpu[k]) / statistics.median(v) for k, v in wall.items()}


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in samples.items()}


def mlp_graph(lib, tensor, softmax, xent, mode, rng) -> tuple:
    """(SGD step function, [w1, b1, w2, b2]) of the 784-500-10 tanh MLP with ``softmax`` and
    the cross-entropy ``xent``, built by ``lib`` (graphc or PyTensor) with ``tensor`` its
    tensor module."""
    x, y = tensor.dmatrix("x"), tensor.lvector("y")
    w1 = lib.shared(rng.standard_normal((784, 500)) * 0.01, "w1")
    b1 = lib.shared(np.zeros(500), "b1")
    w2 = lib.shared(rng.standard_normal((500, 10)) * 0.01, "w2")
    b2 = lib.shared(np.zeros(10), "b2")
    h = tensor.tanh(tensor.dot(x, w1) + b1)
    p = softmax(tensor.dot(h, w2) + b2)
    cost = xent(p, y).mean()
    params = [w1, b1, w2, b2]
    grads = lib.grad(cost, params)
    step = lib.function([x, y], cost, updates=[(q, q - 0.01 * g) for q, g in zip(params, grads)],
                        mode=mode)  # fmt: skip
    return step, params
