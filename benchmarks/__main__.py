"""The benchmark suite: every workload with graphc and, side by side, numpy, PyTensor and JAX
where installed; medians of interleaved runs; results as a table and as JSON.

    python -m benchmarks            # full run
    python -m benchmarks --quick    # about a minute, no peers unless --peers
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

import graphc
import graphc.tensor as T
from benchmarks.bench_openmp import references
from benchmarks.bench_vecmath import largest_errors
from benchmarks.common import (
    NumpyMlpStep,
    cores_busy,
    interleaved_samples,
    median_spread,
    mlp_graph,
    numpy_mlp_step,
    ratio_note,
    round_ratios,
)
from benchmarks.machine import describe, header, load_average
from benchmarks.roofline import Loop, bound_label, loop_of, shares
from benchmarks.table import PEERS, accuracy_text, cores_text


@dataclass
class Result:
    workload: str
    unit: str
    times: dict[str, float] = field(default_factory=dict)  # candidate -> median seconds
    spread: dict[str, float] = field(default_factory=dict)  # candidate -> IQR / median
    note: str = ""
    #: candidate -> share of the limit that binds the workload (roofline, element-wise
    #: loops): the least time its bytes and flops allow over its time (benchmarks/roofline.py)
    roofline: dict[str, float] = field(default_factory=dict)
    #: which limit: "bandwidth" or "peak FLOP rate" ("" when none applies), else per candidate
    bound: str = ""
    intensity: float | None = None  # flops per byte moved, of the roofline rows
    #: candidate -> largest error in ulps of (exp, tanh) alone on the row's inputs (the
    #: fused exp/tanh rows: what each candidate's speed is bought with)
    accuracy: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: candidate -> CPU time over wall time: the cores it kept busy (fused rows, LSTM)
    cores: dict[str, float] = field(default_factory=dict)
    #: peer -> its time over graphc's within each round: (median, first and third
    #: quartile) of those ratios (fused and convolution rows; ``common.round_ratios``)
    ratios: dict[str, tuple[float, float, float]] = field(default_factory=dict)


def interleaved(cands: dict[str, Callable[[], object]], repeat: int, number: int,
                setup: Callable[[], None] | None = None,
                cores: dict[str, float] | None = None,
                ratios: dict | None = None) -> tuple[dict, dict]:  # fmt: skip
    """Median and relative spread of per-call time for each candidate, interleaved; a
    ``cores`` dict receives each one's CPU time over wall time, a ``ratios`` dict the
    peers' per-round ratios to the first candidate (``round_ratios``)."""
    cpu: dict[str, list[float]] = {}
    samples = interleaved_samples(cands, repeat, number=number, setup=setup, gc_off=True,
                                  cpu=cpu)  # fmt: skip
    if cores is not None:
        cores.update(cores_busy(samples, cpu))
    if ratios is not None:
        ratios.update(round_ratios(samples, only=PEERS))
    both = median_spread(samples)
    return {k: m for k, (m, _) in both.items()}, {k: s for k, (_, s) in both.items()}


def _peers() -> dict[str, object]:
    found = {}
    try:
        import pytensor  # noqa: F401

        found["pytensor"] = pytensor
    except ImportError:
        pass
    try:
        import jax

        # without this JAX silently computes "float64" workloads in float32
        jax.config.update("jax_enable_x64", True)
        found["jax"] = jax
    except ImportError:
        pass
    return found


def _number(seconds_per_call: float, budget: float) -> int:
    return max(1, int(budget / max(seconds_per_call, 1e-7)))


# ------------------------------------------------------------------ workloads


def call_overhead(peers, quick) -> list[Result]:
    out = []
    for label, shape in (("scalar", ()), ("10-vector", (10,))):
        x = T.tensor("float64", shape, name="x")
        f = graphc.function([x], x + 1)
        ft = graphc.function([x], x + 1, trust_input=True)
        xv = np.ones(shape)
        cands = {"graphc": lambda: f(xv), "graphc trusted": lambda: ft(xv), "numpy": lambda: xv + 1}
        if "pytensor" in peers:
            import pytensor
            import pytensor.tensor as pt

            px = pt.tensor("x", dtype="float64", shape=shape)
            pf = pytensor.function([px], px + 1, mode=pytensor.compile.mode.Mode("cvm", "fast_run"))
            cands["pytensor"] = lambda: pf(xv)
        if "jax" in peers:
            import jax

            jf = jax.jit(lambda a: a + 1)
            jx = jax.numpy.asarray(xv)
            cands["jax"] = lambda: jf(jx).block_until_ready()
        med, spr = interleaved(cands, 5 if quick else 15, 2000)
        out.append(Result(f"x + 1, {label}, per call", "us", med, spr))
    return out


def _chain(x, n):
    y = x
    for i in range(n):
        y = (y * 1.0001) if i % 2 else (y + 0.5)
    return y


def chain(peers, quick, n=100) -> list[Result]:
    mode = graphc.Mode(optimizer="fast_run").excluding("fusion", "constant_folding", "canonicalize")
    x = T.dvector("x")
    f = graphc.function([x], _chain(x, n), mode=mode)
    fpy = graphc.function([x], _chain(x, n), mode=graphc.Mode(linker="py", optimizer=None))
    xv = np.ones(8)

    def numpy_chain():
        y = xv
        for i in range(n):
            y = (y * 1.0001) if i % 2 else (y + 0.5)
        return y

    cands = {"graphc": lambda: f(xv), "graphc py linker": lambda: fpy(xv), "numpy": numpy_chain}
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt

        px = pt.dvector("x")
        pm = pytensor.compile.mode.Mode("cvm", "fast_run").excluding("fusion")
        pf = pytensor.function([px], _chain(px, n), mode=pm)
        cands["pytensor"] = lambda: pf(xv)
    med, spr = interleaved(cands, 5 if quick else 15, 200)
    per_node = {k: v / n for k, v in med.items()}
    return [Result(f"{n}-node chain, per node", "ns", per_node, spr)]


def fused(peers, quick) -> list[Result]:
    out = []
    n = 10**6
    rng = np.random.default_rng(0)
    # the vector exp/tanh cost the same on every input range (numpy's and libmvec's do not)
    draws = {
        "": lambda size: rng.random(size),
        ", normal": lambda size: rng.standard_normal(size),
        ", uniform(-30, 30)": lambda size: rng.uniform(-30, 30, size),
        # exp overflows to inf and underflows to 0 (both dtypes), tanh saturates
        ", uniform(-1000, 1000)": lambda size: rng.uniform(-1000, 1000, size),
    }
    for dtype in ("float64", "float32"):
        x, y, z = (T.tensor(dtype, (None,), name=s) for s in "xyz")
        exp_tanh = lambda a, b, c, m: m.exp(a) * b + m.tanh(c) - a**2  # noqa: E731
        # the other input ranges last: numpy's time on the earlier rows depends on what the
        # process allocated and freed before (glibc reuses freed blocks for its temporaries)
        exprs = [
            ("exp(x)*y + tanh(z) - x**2", exp_tanh, ""),
            ("(x*y + z)*x - y", lambda a, b, c, m: (a * b + c) * a - b, ""),
        ] + [(f"exp(x)*y + tanh(z) - x**2{d}", exp_tanh, d) for d in draws if d]
        for label, fn, dist in exprs:
            xv, yv, zv = (draws[dist](n).astype(dtype) for _ in range(3))
            f = graphc.function([x, y, z], fn(x, y, z, T))
            fnf = graphc.function([x, y, z], fn(x, y, z, T), mode=graphc.Mode().excluding("fusion"))
            with graphc.config.change_flags(openmp=True):
                fomp = graphc.function([x, y, z], fn(x, y, z, T))
            cands = {
                "graphc": lambda f=f: f(xv, yv, zv),
                "graphc openmp": lambda f=fomp: f(xv, yv, zv),
                "graphc no fusion": lambda f=fnf: f(xv, yv, zv),
                "numpy": lambda fn=fn: fn(xv, yv, zv, np),
            }
            if "exp" in label:  # the C library's SIMD exp/tanh instead of graphc's
                with graphc.config.change_flags(c_vecmath=False):
                    flibm = graphc.function([x, y, z], fn(x, y, z, T))
                cands["graphc libm"] = lambda f=flibm: f(xv, yv, zv)
            if "pytensor" in peers:
                import pytensor
                import pytensor.tensor as pt

                px, py_, pz = (pt.tensor(s, dtype=dtype, shape=(None,)) for s in "xyz")
                pf = pytensor.function([px, py_, pz], fn(px, py_, pz, pt))
                cands["pytensor"] = lambda pf=pf: pf(xv, yv, zv)
            if "jax" in peers:
                import jax

                jf = jax.jit(lambda a, b, c, fn=fn: fn(a, b, c, jax.numpy))
                ja, jb, jc = (jax.numpy.asarray(v) for v in (xv, yv, zv))
                cands["jax"] = lambda jf=jf, ja=ja, jb=jb, jc=jc: jf(ja, jb, jc).block_until_ready()
            cands.update(references(n, dtype))
            cores: dict[str, float] = {}
            ratios: dict = {}
            med, spr = interleaved(cands, 5 if quick else 11, 3, setup=_settle, cores=cores,
                                   ratios=ratios)  # fmt: skip
            accuracy = _exp_tanh_accuracy(xv, zv, peers) if "exp" in label else {}
            out.append(Result(f"{label}, 1e6 {dtype}", "ms", med, spr, accuracy=accuracy,
                              cores=cores, ratios=ratios,
                              **_roofline(med, loop_of(f, n, dtype), n, dtype)))  # fmt: skip
    out.append(_multi_consumer(peers, quick))
    return out


def _exp_tanh_accuracy(x: np.ndarray, z: np.ndarray, peers) -> dict[str, tuple[float, float]]:
    """{candidate: largest error in ulps of exp on ``x``, of tanh on ``z``}: graphc's vector
    math, the C library's, numpy's and JAX's, each function alone."""
    v = T.tensor(str(x.dtype), (None,), name="v")
    fns = ("exp", "tanh")
    cands: dict[str, dict[str, Callable]] = {
        "graphc": {fn: graphc.function([v], getattr(T, fn)(v)) for fn in fns},
        "numpy": {fn: getattr(np, fn) for fn in fns},
    }
    with graphc.config.change_flags(c_vecmath=False):
        cands["graphc libm"] = {fn: graphc.function([v], getattr(T, fn)(v)) for fn in fns}
    if "jax" in peers:
        import jax

        cands["jax"] = {fn: jax.jit(getattr(jax.numpy, fn)) for fn in fns}
    errs = [largest_errors({k: c[fn] for k, c in cands.items()}, fn, a)
            for fn, a in zip(fns, (x, z))]  # fmt: skip
    return {k: (errs[0][k], errs[1][k]) for k in cands}


def _settle() -> None:
    """Before each sample: the threads of a threaded candidate (JAX's pool, OpenMP's workers,
    the triad's team) still run for a while after its call returns, and the candidate timed
    next measured 20-60% slower than when it ran first. Each sample then follows an untimed
    call of its own candidate (``interleaved_samples``)."""
    time.sleep(0.02)


def _roofline(med: dict[str, float], loop: Loop, n: int, dtype: str) -> dict:
    """Result fields: each candidate's share of the limit that binds the workload's loop
    (``loop``: its bytes and flops), the bandwidth being the rate of the triad timed beside
    it over arrays of the same size (on all threads for an OpenMP candidate)."""
    triad_bytes = 24 * (n * np.dtype(dtype).itemsize // 8)
    fields = shares(med, loop, dtype, triad_bytes)
    return {**fields, "intensity": loop.intensity} if fields else {}


def _multi_consumer(peers, quick) -> Result:
    """``t = exp(x); [t*2, t.sum(), tanh(t)+y]``: t has three consumers. graphc: one loop
    writes t*2 and tanh(t)+y and sums t; "sum not in loop": that loop writes t for a
    separate sum; "no multi-output": t is a node of its own (as before multi-output fusion)."""
    rng = np.random.default_rng(1)
    xv, yv = rng.uniform(-1, 1, 10**6), rng.uniform(-1, 1, 10**6)

    def graph(lib, tensor):
        x, y = tensor.dvector("x"), tensor.dvector("y")
        t = tensor.exp(x)
        return [x, y], [t * 2, t.sum(), tensor.tanh(t) + y]

    f = graphc.function(*graph(graphc, T))
    g = graphc.function(*graph(graphc, T), mode=graphc.Mode().excluding("multi_fusion"))
    h = graphc.function(*graph(graphc, T), mode=graphc.Mode().excluding("fuse_sum_into_loop"))

    def np_multi():
        t = np.exp(xv)
        return [t * 2, t.sum(), np.tanh(t) + yv]

    cands = {
        "graphc": lambda: f(xv, yv),
        "graphc, sum not in loop": lambda: h(xv, yv),
        "graphc no multi-output": lambda: g(xv, yv),
        "numpy": np_multi,
    }
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt

        pf = pytensor.function(*graph(pytensor, pt))
        cands["pytensor"] = lambda: pf(xv, yv)
    cands.update(references(10**6, "float64"))
    med, spr = interleaved(cands, 5 if quick else 11, 3, setup=_settle)
    return Result("t=exp(x); [t*2, t.sum(), tanh(t)+y], 1e6 float64", "ms", med, spr,
                  **_roofline(med, loop_of(f, 10**6, "float64"), 10**6, "float64"))  # fmt: skip


def _logreg_graph(lib, tensor, sigmoid, n_features, mode, rng, profile=None):
    """The training step of examples/logistic_regression.py, for graphc or PyTensor (same
    API, as graphc follows Theano's)."""
    x, y = tensor.dmatrix("x"), tensor.dvector("y")
    w = lib.shared(rng.standard_normal(n_features) * 0.01, name="w")
    b = lib.shared(np.float64(0.0), name="b")
    p_1 = sigmoid(tensor.dot(x, w) + b)
    xent = -y * tensor.log(p_1) - (1 - y) * tensor.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = lib.grad(cost, [w, b])
    kw = {} if profile is None else {"profile": profile}
    updates = [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
    step = lib.function([x, y], [p_1 > 0.5, xent.mean()], updates=updates, mode=mode, **kw)
    return step, w, b


def _pytensor_mode():
    import pytensor

    return pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")


def _logreg_setup(plain: str, profiled: str) -> tuple:
    """(rng, inputs, targets, initial weights, {plain: step, profiled: profiled step}) of
    the graphc logistic-regression step on 400 x 784."""
    from graphc.tensor import nnet

    rng = np.random.default_rng(1)
    dx = rng.standard_normal((400, 784))
    dy = (rng.random(400) > 0.5).astype("float64")
    w0 = rng.standard_normal(784) * 0.01
    models = {
        plain: _logreg_graph(graphc, T, nnet.sigmoid, 784, "FAST_RUN", rng),
        profiled: _logreg_graph(graphc, T, nnet.sigmoid, 784, "FAST_RUN", rng, True),
    }
    return rng, dx, dy, w0, models


def logreg(peers, quick) -> list[Result]:
    rng, dx, dy, w0, models = _logreg_setup("graphc", "graphc profiled")
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt

        models["pytensor"] = _logreg_graph(pytensor, pt, pt.sigmoid, 784, _pytensor_mode(), rng)
        models["pytensor profiled"] = _logreg_graph(
            pytensor, pt, pt.sigmoid, 784, _pytensor_mode(), rng, True
        )
    state = {"w": w0.copy(), "b": np.zeros(())}

    def numpy_step():
        wv, bv = state["w"], state["b"]
        p = 1 / (1 + np.exp(-(dx @ wv + bv)))
        xent = -dy * np.log(p) - (1 - dy) * np.log(1 - p)
        gz = (p - dy) / len(dy)
        wv -= 0.1 * (dx.T @ gz + 0.02 * wv)
        bv -= 0.1 * gz.sum()
        return p > 0.5, xent.mean()

    cands = {name: (lambda f=f: f(dx, dy)) for name, (f, _, _) in models.items()}
    cands["numpy"] = numpy_step
    if "jax" in peers:
        import jax
        import jax.numpy as jnp

        def loss(params, x, y):
            p = jax.nn.sigmoid(x @ params[0] + params[1])
            xent = -y * jnp.log(p) - (1 - y) * jnp.log(1 - p)
            return xent.mean() + 0.01 * (params[0] ** 2).sum(), (p > 0.5, xent.mean())

        @jax.jit
        def jax_step(params, x, y):
            grads, aux = jax.grad(loss, has_aux=True)(params, x, y)
            return [q - 0.1 * g for q, g in zip(params, grads)], aux

        jstate = {"p": [jnp.asarray(w0), jnp.asarray(0.0)]}
        jx, jy = jnp.asarray(dx), jnp.asarray(dy)

        def run_jax():
            jstate["p"], aux = jax_step(jstate["p"], jx, jy)
            aux[1].block_until_ready()

        cands["jax"] = run_jax

    def reset():  # repeated SGD on one batch drives values into denormals
        for _, w, b in models.values():
            w.set_value(w0)
            b.set_value(np.float64(0.0))
        state["w"][:] = w0
        state["b"][...] = 0.0
        time.sleep(0.25)  # idle OpenBLAS threads of the previous candidate keep spinning

    med, spr = interleaved(cands, 7 if quick else 21, 20, setup=reset)
    out = [Result("logreg step 400x784", "us", med, spr)]
    limits = _one_blas_thread()
    if limits is not None:
        with limits:
            med, spr = interleaved(cands, 7 if quick else 21, 20, setup=reset)
        out.append(Result("logreg step, BLAS on 1 thread (threadpoolctl)", "us", med, spr))
    return out


def mlp(peers, quick) -> list[Result]:
    from graphc.tensor import nnet

    rng = np.random.default_rng(2)
    models = {"graphc": mlp_graph(graphc, T, nnet.softmax, nnet.categorical_crossentropy,
                                   "FAST_RUN", rng)}  # fmt: skip
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.special import softmax as pt_softmax

        def pt_xent(p, y):
            return -pt.log(p[pt.arange(y.shape[0]), y])

        models["pytensor"] = mlp_graph(pytensor, pt, lambda z: pt_softmax(z, axis=-1), pt_xent,
                                        _pytensor_mode(), rng)  # fmt: skip
    xv = rng.standard_normal((128, 784))
    yv = rng.integers(0, 10, 128)
    initial = [q.get_value() for q in models["graphc"][1]]
    cands = {name: (lambda f=f: f(xv, yv)) for name, (f, _) in models.items()}
    npp = [v.copy() for v in initial]

    cands["numpy"] = lambda: numpy_mlp_step(npp, xv, yv)
    npb = [v.copy() for v in initial]  # the same step with every temporary preallocated
    cands["numpy out="] = lambda s=NumpyMlpStep(npb, len(yv)): s(xv, yv)
    if "jax" in peers:
        import jax
        import jax.numpy as jnp

        def loss(ps, x, y):
            h = jnp.tanh(x @ ps[0] + ps[1])
            logp = jax.nn.log_softmax(h @ ps[2] + ps[3])
            return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

        @jax.jit
        def jax_step(ps, x, y):
            c, g = jax.value_and_grad(loss)(ps, x, y)
            return [q - 0.01 * gq for q, gq in zip(ps, g)], c

        jstate = {"p": [jnp.asarray(v) for v in initial]}
        jx, jy = jnp.asarray(xv), jnp.asarray(yv)

        def run_jax():
            jstate["p"], c = jax_step(jstate["p"], jx, jy)
            c.block_until_ready()

        cands["jax"] = run_jax

    def reset():
        for _, params in models.values():
            for q, v in zip(params, initial):
                q.set_value(v)
        for q, v in zip(npp + npb, initial + initial):
            q[...] = v
        time.sleep(0.25)

    def vs_buffered(med: dict) -> str:
        # numpy's plain step is slower when the allocator returns its temporaries' pages to
        # the system (a fresh process) than when it keeps them (after bigger arrays were
        # freed); the step with preallocated buffers does not depend on it
        return f"graphc / numpy out= {med['graphc'] / med['numpy out=']:.2f}x"

    med, spr = interleaved(cands, 5 if quick else 15, 5, setup=reset)
    out = [Result("MLP 784-500-10 step, batch 128", "ms", med, spr, vs_buffered(med))]
    limits = _one_blas_thread()
    if limits is not None:  # every BLAS pool in the process (numpy's, scipy's, XLA aside)
        with limits:
            med, spr = interleaved(cands, 5 if quick else 15, 5, setup=reset)
        out.append(Result("MLP step, BLAS on 1 thread (threadpoolctl)", "ms", med, spr,
                          vs_buffered(med)))  # fmt: skip
    return out


def _one_blas_thread():
    """A ``threadpool_limits(1)`` context, or None without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("threadpoolctl missing: no 1-thread BLAS rows (pip install threadpoolctl)")
        return None
    return threadpool_limits(1)


# The n-node chain y whose compile time is measured, built with the tensor module T.
_CHAIN = """
n = int(sys.argv[1])
x = T.dvector("x")
y = x
for i in range(n):
    y = T.tanh(y) * 1.5 + 0.25 if i % 3 == 0 else (y * 1.01 if i % 3 == 1 else y - 0.5)
"""

_COMPILE_SNIPPET = (
    "\nimport time, sys, numpy as np, graphc, graphc.tensor as T"
    + _CHAIN
    + """t0 = time.perf_counter(); f = graphc.function([x], y); t1 = time.perf_counter()
g = graphc.function([x], y); t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""
)


_COMPILE_PYTENSOR = (
    "\nimport time, sys, pytensor, pytensor.tensor as T"
    + _CHAIN
    + """mode = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")
t0 = time.perf_counter(); f = pytensor.function([x], y, mode=mode); t1 = time.perf_counter()
g = pytensor.function([x], y, mode=mode); t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""
)

_COMPILE_JAX = """
import time, sys, numpy as np, jax, jax.numpy as T
jax.config.update("jax_enable_x64", True)
n = int(sys.argv[1])
def fn(x):
    y = x
    for i in range(n):
        y = T.tanh(y) * 1.5 + 0.25 if i % 3 == 0 else (y * 1.01 if i % 3 == 1 else y - 0.5)
    return y
xv = np.ones(8)
t0 = time.perf_counter(); jax.jit(fn).lower(xv).compile(); t1 = time.perf_counter()
jax.jit(lambda x: fn(x)).lower(xv).compile(); t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


# The gradient of an n-step chain (3n+ nodes once differentiated), built with T and LIB.
_GRAD_CHAIN = """
n = int(sys.argv[1])
x = T.dvector("x")
ws = [T.dscalar(f"w{i}") for i in range(n)]
y = x
for w in ws:
    y = T.tanh(y * w + 0.5)
y = LIB.grad(y.sum(), [x] + ws)
"""

_GRAD_SNIPPET = (
    "\nimport time, sys, graphc, graphc.tensor as T"
    + _GRAD_CHAIN.replace("LIB", "graphc")
    + """t0 = time.perf_counter(); f = graphc.function([x] + ws, y); t1 = time.perf_counter()
g = graphc.function([x] + ws, y); t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""
)

_GRAD_PYTENSOR = (
    "\nimport time, sys, pytensor, pytensor.tensor as T"
    + _GRAD_CHAIN.replace("LIB", "pytensor")
    + """mode = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")
t0 = time.perf_counter(); f = pytensor.function([x] + ws, y, mode=mode); t1 = time.perf_counter()
g = pytensor.function([x] + ws, y, mode=mode); t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""
)


def _last_error_line(e: subprocess.CalledProcessError) -> str:
    lines = [ln for ln in (e.stderr or "").splitlines() if "Error" in ln]
    return lines[-1].strip() if lines else f"exit status {e.returncode}"


def _compile_runs(snippet: str, n: int, env: dict) -> tuple[float, float, float]:
    """Cold (empty cache, new process), warm (filled cache, new process), hot (same
    process, second compile) seconds."""
    cmd = [sys.executable, "-c", snippet, str(n)]

    def run() -> list[float]:
        done = subprocess.run(cmd, env=env, text=True, capture_output=True)
        if done.returncode:
            raise subprocess.CalledProcessError(done.returncode, cmd, done.stdout, done.stderr)
        return [float(v) for v in done.stdout.split()[-2:]]

    cold, hot = run()
    warm, _ = run()
    return cold, warm, hot


def _cold_warm_hot(snippets: dict[str, str], n: int, times: dict, notes: list) -> None:
    """Add each library's cold, warm and hot compile of its ``snippets`` entry to ``times``
    (a failure, e.g. PyTensor's RecursionError, is a result: it goes to ``notes``)."""
    for lib, snippet in snippets.items():
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ)
            if lib == "graphc":
                env["GRAPHC_COMPILEDIR"] = cache
            else:
                env["PYTENSOR_FLAGS"] = f"base_compiledir={cache}"
            try:
                cold, warm, hot = _compile_runs(snippet, n, env)
            except subprocess.CalledProcessError as e:
                if lib == "graphc":
                    raise
                notes.append(f"{lib} failed: {_last_error_line(e)}")
                continue
            times.update({f"{lib} cold": cold, f"{lib} warm": warm, f"{lib} hot": hot})


def compile_time(peers, quick) -> list[Result]:
    out = []
    for n in (10, 100) if quick else (10, 100, 1000):
        times: dict[str, float] = {}
        notes: list[str] = []
        snippets = {"graphc": _COMPILE_SNIPPET}
        if "pytensor" in peers:
            snippets["pytensor"] = _COMPILE_PYTENSOR
        _cold_warm_hot(snippets, n, times, notes)
        if "jax" in peers:
            try:
                cold, _, hot = _compile_runs(_COMPILE_JAX, n, dict(os.environ))
                times.update({"jax first": cold, "jax again": hot})
            except subprocess.CalledProcessError as e:
                notes.append(f"jax failed: {_last_error_line(e)}")
        out.append(Result(f"compile {n} nodes", "s", times, note="; ".join(notes)))
    return out


def compile_grad_time(peers, quick) -> list[Result]:
    """FAST_RUN compile of the gradient of an n-step chain: cold, warm and hot, in fresh
    processes (graphc and PyTensor; JAX traces its gradients instead)."""
    out = []
    for n in (100,) if quick else (200, 800):
        times: dict[str, float] = {}
        notes: list[str] = []
        snippets = {"graphc": _GRAD_SNIPPET}
        if "pytensor" in peers:
            snippets["pytensor"] = _GRAD_PYTENSOR
        _cold_warm_hot(snippets, n, times, notes)
        out.append(Result(f"compile the gradient of a {n}-step chain", "s", times,
                          note="; ".join(notes)))  # fmt: skip
    return out


def paired_ratios(cands: dict[str, Callable[[], object]], repeat: int, number: int,
                  setup: Callable[[], None] | None = None) -> tuple[dict, dict, dict]:  # fmt: skip
    """Medians and spreads as :func:`interleaved`, plus each candidate's ratio to the first
    one (the baseline) taken within each round, where the candidates ran seconds apart:
    median and IQR of those per-round ratios. On a shared machine the load drifts between
    rounds; a ratio of neighbours cancels most of it. The order rotates every round."""
    names = list(cands)
    samples: dict[str, list[float]] = {k: [] for k in names}
    for fn in cands.values():
        fn()
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn = cands[name]
            if setup is not None:
                setup()
                fn()
            gc.disable()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - t0) / number)
            gc.enable()
    base = samples[names[0]]
    med, spread, ratios = {}, {}, {}
    for k, v in samples.items():
        med[k] = statistics.median(v)
        q = np.percentile(v, [25, 75])
        spread[k] = float((q[1] - q[0]) / med[k]) if med[k] else 0.0
        rv = [a / b for a, b in zip(v, base)]
        ratios[k] = (statistics.median(rv), *(float(x) for x in np.percentile(rv, [25, 75])))
    return med, spread, ratios


def _ratio_note(ratios: dict, limits: dict[str, float]) -> str:
    return "; ".join(
        f"{k}/{next(iter(ratios))} per round: median {m:.3f}x (IQR {lo:.3f}-{hi:.3f})"
        + (f", goal <= {limits[k]}x" if k in limits else "")
        for k, (m, lo, hi) in list(ratios.items())[1:]
    )


#: One call in this many is timed in the sampled (always-on) profiling workloads.
SAMPLE = 100


def _warm_sampled(call: Callable[[], object]) -> None:
    """Run a sampled function past its one-off timed calls (the first call, and the timed
    calls 1, 2, 4, 8, 16 that also record shapes): what an always-on profile costs in the
    steady state of a long-running job."""
    for _ in range(17 * SAMPLE):
        call()


def profiling_overhead(peers, quick) -> list[Result]:
    """What profiling costs, side by side with the same graph unprofiled: the
    logistic-regression step (BLAS-bound) and a 200-node chain of tiny nodes (the VM's
    per-node cost), with timing and with timing + memory, and sampled (profile_sample:
    one call in SAMPLE timed, the always-on mode)."""
    from graphc.tensor import nnet

    _, dx, dy, w0, models = _logreg_setup("unprofiled", "profiled")
    sampled = f"sampled 1/{SAMPLE}"
    with graphc.config.change_flags(profile_sample=SAMPLE):
        models[sampled] = _logreg_graph(graphc, T, nnet.sigmoid, 784, "FAST_RUN",
                                        np.random.default_rng(1), True)  # fmt: skip

    def reset():  # as in logreg(): fresh weights (both candidates call the same BLAS, so
        for _, w, b in models.values():  # neither waits for the other's threads)
            w.set_value(w0)
            b.set_value(np.float64(0.0))

    # Short samples, many rounds: on a loaded machine a sample either runs undisturbed or
    # is preempted, and the per-round median ignores the preempted minority.
    cands = {name: (lambda f=f: f(dx, dy)) for name, (f, _, _) in models.items()}
    _warm_sampled(cands[sampled])
    # a round runs SAMPLE calls of each: exactly one timed call of the sampled step per
    # round, so the per-round ratio carries its cost (a shorter round would leave most
    # rounds without one and the median would not see it)
    med, spr, ratios = paired_ratios(cands, 15 if quick else 60, SAMPLE, setup=reset)
    out = [Result("logreg step 400x784, profiled / unprofiled", "us", med, spr,
                  note=_ratio_note(ratios, {"profiled": 1.03, sampled: 1.01}))]  # fmt: skip

    mode = graphc.Mode().excluding("fusion", "inplace", "constant_folding", "canonicalize")
    x = T.dvector("x")
    y = _chain(x, 200)
    f = graphc.function([x], y, mode=mode)
    fp = graphc.function([x], y, mode=mode, profile=True)
    with graphc.config.change_flags(profile_memory=True):
        fm = graphc.function([x], y, mode=mode, profile=True)
    with graphc.config.change_flags(profile_sample=SAMPLE):
        fs = graphc.function([x], y, mode=mode, profile=True)
    with graphc.config.change_flags(profile_budget=0.01):
        fb = graphc.function([x], y, mode=mode, profile=True)
    xv = np.ones(8)
    cands = {"unprofiled": lambda: f(xv), "timing": lambda: fp(xv), "timing+memory": lambda: fm(xv),
             sampled: lambda: fs(xv), "budget 1%": lambda: fb(xv)}  # fmt: skip
    _warm_sampled(cands[sampled])
    _warm_sampled(cands["budget 1%"])
    med, spr, ratios = paired_ratios(cands, 30 if quick else 120, SAMPLE)
    note = _ratio_note(ratios, {"timing": 1.3, "timing+memory": 1.5, sampled: 1.01,
                                "budget 1%": 1.01})  # fmt: skip
    note += f"; budget 1%: 1 call in {fb._clock.every} timed"
    out.append(Result("200-node chain, profiled / unprofiled", "us", med, spr, note=note))
    from benchmarks.bench_profile_loops import run as loop_overhead

    for label, (lmed, (r, lo, hi)) in loop_overhead(20 if quick else 80).items():
        lnote = (
            f"profiled/unprofiled per round: median {r:.3f}x (IQR {lo:.3f}-{hi:.3f}), goal <= 1.3x"
        )
        out.append(Result(f"{label}, profiled / unprofiled", "us", lmed, note=lnote))
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt

        px = pt.dvector("x")
        pmode = pytensor.compile.mode.Mode("cvm", "fast_run").excluding("fusion", "inplace")
        pf = pytensor.function([px], _chain(px, 200), mode=pmode)
        pp = pytensor.function([px], _chain(px, 200), mode=pmode, profile=True)
        pcands = {"unprofiled": lambda: pf(xv), "timing": lambda: pp(xv)}
        med, spr = interleaved(pcands, 5 if quick else 15, 200)
        out.append(Result("PyTensor 200-node chain, profile=True / unprofiled", "us", med, spr))
    return out


def peak_memory(peers, quick) -> list[Result]:
    """Peak bytes allocated during one MLP step (tracemalloc sees numpy's allocator, which
    graphc's C code and PyTensor use too; JAX's XLA buffers are not visible to it)."""
    import tracemalloc

    from graphc.tensor import nnet

    rng = np.random.default_rng(2)
    xv = rng.standard_normal((128, 784))
    yv = rng.integers(0, 10, 128)
    models = {"graphc": mlp_graph(graphc, T, nnet.softmax, nnet.categorical_crossentropy,
                                   "FAST_RUN", rng)[0]}  # fmt: skip
    if "pytensor" in peers:
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.special import softmax as pt_softmax

        models["pytensor"] = mlp_graph(pytensor, pt, lambda z: pt_softmax(z, axis=-1),
                                        lambda p, y: -pt.log(p[pt.arange(y.shape[0]), y]),
                                        _pytensor_mode(), rng)[0]  # fmt: skip
    # From before the first call: buffers a function keeps between calls (a memory plan,
    # spare update buffers) are allocated then, so a steady-state call alone would hide them.
    peaks = {}
    for name, step in models.items():
        tracemalloc.start()
        step(xv, yv)
        step(xv, yv)
        peaks[name] = float(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return [Result("MLP first two steps, peak memory (tracemalloc)", "MB", peaks)]


def conv(peers, quick) -> list[Result]:
    from benchmarks.bench_conv import run

    results = run(3 if quick else 7, sorted(peers))
    note = "PyTensor: signal.convolve2d over (image, filter, channel) pairs; layer 1 only"
    return [
        Result(f"{label}, forward+backward", "ms", times, note=note if "pytensor" in peers else "")
        for label, times in results.items()
    ]


def conv_ops(peers, quick) -> list[Result]:
    from benchmarks.bench_conv import op_run

    dtypes = ("float32",) if quick else ("float32", "float64")
    ratios: dict = {}
    results = op_run(3 if quick else 7, sorted(peers), dtypes, ratios=ratios)
    note = "corrmm: Theano's CorrMM (PyTensor <= 2.8, else the Theano 0.8.2 venv)"
    return [
        Result(
            label,
            "ms",
            {k: m for k, (m, _) in t.items()},
            {k: s for k, (_, s) in t.items()},
            note=note,
            ratios=ratios.get(label, {}),
        )  # fmt: skip
        for label, t in results.items()
    ]


def loops(peers, quick) -> list[Result]:
    from benchmarks.bench_scan import BATCH, STEPS, UNITS, run

    results = run(3 if quick else 7, sorted(peers))
    lstm, empty = results["lstm"], results["empty"]
    return [
        Result(
            f"2-layer LSTM step (scan), loss and gradients, batch {BATCH}, {STEPS} steps, "
            f"{UNITS} units",
            "ms",
            {k: m for k, (m, _) in lstm.items()},
            {k: s for k, (_, s) in lstm.items()},
            cores=results["lstm_cores"],
        ),  # fmt: skip
        Result(
            "scan, near-empty step (h + x[t]), time per step",
            "us",
            {k: m for k, (m, _) in empty.items()},
            {k: s for k, (_, s) in empty.items()},
        ),  # fmt: skip
    ]


def openmp(peers, quick) -> list[Result]:
    """Serial against OpenMP element-wise loops, idle and with a spinning process on the
    second core; the share of the limit that binds each loop (the bandwidth of a triad
    timed beside it, or the peak FLOP rate: benchmarks/roofline.py)."""
    from benchmarks.bench_openmp import run

    out = []
    for dtype in ("float64", "float32"):
        res = run(10**6, 7 if quick else 15, dtype, wait=5.0 if quick else 30.0)
        for label, r in res["exprs"].items():
            for load in ("idle", "busy"):
                keep = ("serial", "openmp", "triad", "triad openmp")
                times = {k: m for k, (m, _) in r[load].items() if k in keep}
                sp = {k: s for k, (_, s) in r[load].items() if k in keep}
                note = (f"openmp speed-up {times['serial'] / times['openmp']:.2f}x, "
                        f"{r['split'][load]:.0%} of its runs split")  # fmt: skip
                if load == "idle" and "free_core" in r:
                    note += f"; the triad's own speed-up before it: {r['free_core']:.2f}x"
                    if r["free_core"] < 1.5:
                        note += " (no free second core within the wait: not an idle machine)"
                    left = r.get("left_out", {})
                    if left.get("triad"):
                        med = {k: statistics.median(v) for k, v in left.items()}
                        k = len(left["triad"])
                        note += (f"; {k} round{'s' if k > 1 else ''} taken again, the triad on "
                                 f"all threads under 1.5x in them (openmp "
                                 f"{med['serial'] / med['openmp']:.2f}x there)")  # fmt: skip
                what = "idle" if load == "idle" else "second core busy (spinning process)"
                lim = r["limits"][load]
                bound = bound_label({k: b for k, (b, _) in lim.items()})
                out.append(Result(f"openmp {label}, 1e6 {dtype}, {what}", "ms", times, sp, note,
                                  roofline={k: v for k, (_, v) in lim.items()}, bound=bound,
                                  intensity=r["intensity"] if lim else None))  # fmt: skip
    return out


WORKLOADS = {
    "call": call_overhead,
    "chain": chain,
    "fused": fused,
    "logreg": logreg,
    "mlp": mlp,
    "compile": compile_time,
    "compile_grad": compile_grad_time,
    "profiling": profiling_overhead,
    "memory": peak_memory,
    "conv": conv,
    "conv_ops": conv_ops,
    "scan": loops,
    "openmp": openmp,
}

_SCALE = {"us": 1e6, "ms": 1e3, "ns": 1e9, "s": 1.0, "MB": 1e-6}


def render(results: list[Result]) -> str:
    lines = []
    for r in results:
        base = r.times.get("numpy") or r.times.get("unprofiled") or next(iter(r.times.values()))
        cells = ", ".join(
            f"{k} {v * _SCALE[r.unit]:.3g} {r.unit} ({v / base:.2f}x"
            + (f", IQR {r.spread[k] * 100:.0f}%)" if k in r.spread else ")")
            for k, v in r.times.items()
        )
        if r.roofline:
            what = r.bound if ":" not in r.bound else f"binding limit ({r.bound})"
            cells += (
                f"; {r.intensity:.3g} flops/byte; share of the "
                + what
                + ": "
                + ", ".join(f"{k} {v:.0%}" for k, v in r.roofline.items())
            )
        if r.accuracy:
            cells += "; largest error in ulps, exp / tanh: " + accuracy_text(r.accuracy)
        if r.cores:
            cells += "; " + cores_text(r.cores)
        if r.ratios:
            cells += "; " + ratio_note(r.ratios)
        lines.append(f"- {r.workload}: {cells}" + (f" [{r.note}]" if r.note else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="about a minute")
    ap.add_argument("--peers", action="store_true", help="include PyTensor/JAX in --quick")
    ap.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), help="workloads to run")
    ap.add_argument("--json", default="bench-results/benchmarks.json")
    args = ap.parse_args(argv)
    peers = _peers() if (args.peers or not args.quick) else {}
    load_before = load_average()
    results: list[Result] = []
    for name in args.only or list(WORKLOADS):
        try:
            results.extend(WORKLOADS[name](peers, args.quick))
        except Exception as e:  # noqa: BLE001 - one failing workload must not hide the rest
            results.append(Result(name, "s", note=f"failed: {type(e).__name__}: {e}"))
            print(f"workload {name} failed: {e!r}", file=sys.stderr)
    kind = "quick" if args.quick else "full"
    info = describe(peers)
    line = header(info, (load_before, load_average()))
    print(f"graphc benchmarks ({kind}; {line})")
    print(render([r for r in results if r.times]))
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    run = {"quick": args.quick, "machine": info, "machine_line": line,
           "results": [asdict(r) for r in results]}  # fmt: skip
    with open(args.json, "w") as fh:
        json.dump(run, fh, indent=1)
    return 1 if any(r.note.startswith("failed") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
