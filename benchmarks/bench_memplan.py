"""Memory plan: graphs fusion cannot collapse, against numpy.

Run: ``python benchmarks/bench_memplan.py [--n N] [--repeats R]``. Prints medians of
interleaved calls (and the spread, min-max) of graphc FAST_RUN with fusion excluded under
gc (the memory plan), the same with ``c|py_nogc`` (every intermediate kept), and numpy,
for ``(x + y) * z - x`` in float64 and float32, ``sum(exp(x))`` (one pass, and exp then
sum), and the multi-consumer graph
``t = exp(x); [t * 2, t.sum(), tanh(t) + y]`` (fusion on: one loop writing t * 2 and
tanh(t) + y and summing t; that loop writing t for a separate sum; and without multi-output
fusion, as before it: t a node of its own read by three); then the Theano-tutorial MLP
step (784-500-10, batch 128, SGD on 4 shared variables) against a hand-written numpy step,
with the tracemalloc peaks of graphc's first two steps (buffers it keeps between calls are
made then) and of one numpy step.
"""

from __future__ import annotations

import statistics
import tracemalloc

import numpy as np

import graphc
import graphc.tensor as T

try:
    from benchmarks.common import (
        NumpyMlpStep,
        interleaved_samples,
        mlp_graph,
        numpy_mlp_step,
        size_parser,
    )
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import NumpyMlpStep, interleaved_samples, mlp_graph, numpy_mlp_step, size_parser  # type: ignore[no-redef]


def _chain(dtype: str, linker: str):
    x, y, z = (T.vector(n, dtype=dtype) for n in "xyz")
    mode = graphc.Mode(linker=linker, optimizer="fast_run").excluding("fusion")
    f = graphc.function([x, y, z], (x + y) * z - x, mode=mode)
    f.trust_input = True
    return f


def _multi(dtype: str, linker: str, *excluding: str):
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    t = T.exp(x)
    mode = graphc.Mode(linker=linker).excluding(*excluding)
    f = graphc.function([x, y], [t * 2, t.sum(), T.tanh(t) + y], mode=mode)
    f.trust_input = True
    return f


def _np_multi(x, y):
    t = np.exp(x)
    return [t * 2, t.sum(), np.tanh(t) + y]


def _run(title: str, cands: dict, args: list, repeats: int) -> None:
    times = interleaved_samples({k: (lambda fn=fn: fn(*args)) for k, fn in cands.items()}, repeats)
    base = statistics.median(times["numpy"])
    print(f"{title}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(
            f"  {name:24s} {med * 1e3:8.3f} ms  ({min(ts) * 1e3:.3f}-{max(ts) * 1e3:.3f})"
            f"  {med / base:5.2f}x numpy"
        )


def _mlp(rng) -> tuple:
    from graphc.tensor import nnet

    return mlp_graph(graphc, T, nnet.softmax, nnet.categorical_crossentropy, None, rng)


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def mlp(repeats: int) -> None:
    rng = np.random.default_rng(2)
    xv, yv = rng.standard_normal((128, 784)), rng.integers(0, 10, 128)
    f, params = _mlp(rng)
    npp = [q.get_value() for q in params]
    # the first two calls of a fresh function: buffers kept between calls are made then
    fresh = _mlp(np.random.default_rng(2))[0]
    peak = _peak(lambda: (fresh(xv, yv), fresh(xv, yv)))
    buffered = NumpyMlpStep([q.get_value() for q in params], len(yv))
    cands = {"graphc FAST_RUN": lambda: f(xv, yv), "numpy": lambda: numpy_mlp_step(npp, xv, yv),
             "numpy, out= buffers": lambda: buffered(xv, yv)}  # fmt: skip
    _run("MLP step 784-500-10, batch 128", cands, [], repeats)
    print(f"  {'graphc FAST_RUN':24s} peak of its first two steps: {peak / 1e6:.2f} MB")
    print(f"  {'numpy':24s} peak of one step: {_peak(cands['numpy']) / 1e6:.2f} MB")


def main() -> None:
    a = size_parser(__doc__).parse_args()
    rng = np.random.default_rng(0)
    for dtype in ("float64", "float32"):
        args = [rng.uniform(-1, 1, a.n).astype(dtype) for _ in range(3)]
        cands = {
            "graphc no fusion (plan)": _chain(dtype, "c|py"),
            "graphc no fusion nogc": _chain(dtype, "c|py_nogc"),
            "numpy": lambda x, y, z: (x + y) * z - x,
        }
        want = (args[0] + args[1]) * args[2] - args[0]
        for name, fn in cands.items():
            np.testing.assert_allclose(fn(*args), want, rtol=1e-5, err_msg=name)
        _run(f"(x + y) * z - x, {a.n} {dtype}", cands, args, a.repeats)
    x = T.dvector("x")
    fused = graphc.function([x], T.exp(x).sum())  # one pass: Sum{Composite{exp(i0)}}
    split = graphc.function([x], T.exp(x).sum(), mode=graphc.Mode().excluding("reduce_fusion"))
    for fn in (fused, split):
        fn.trust_input = True
    args = [rng.normal(size=a.n)]
    cands = {"graphc (one pass)": fused, "graphc exp, then sum": split,
             "numpy": lambda v: np.exp(v).sum()}  # fmt: skip
    _run(f"sum(exp(x)), {a.n} float64 normal", cands, args, a.repeats)
    args = [rng.uniform(-1, 1, a.n) for _ in range(2)]
    cands = {
        "graphc FAST_RUN": _multi("float64", "c|py"),
        "graphc, sum not in loop": _multi("float64", "c|py", "fuse_sum_into_loop"),
        "graphc no multi-output": _multi("float64", "c|py", "multi_fusion"),
        "numpy": _np_multi,
    }
    for name, fn in cands.items():
        for got, want in zip(fn(*args), _np_multi(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
    _run(f"t = exp(x); [t*2, t.sum(), tanh(t)+y], {a.n} float64", cands, args, a.repeats)
    mlp(a.repeats)


if __name__ == "__main__":
    main()
