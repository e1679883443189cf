"""Random draws: a dropout mask (binomial n=1, p=0.5), a uniform and a normal matrix,
1000x1000 float64, per call, side by side: graphc c|py (C thunk), graphc py (numpy perform), numpy
``Generator(Philox)`` directly, and PyTensor / JAX when installed.

Run: ``python benchmarks/bench_random.py [--repeats N]``. Prints the median over
interleaved repeats of the per-call time and each candidate's ratio to numpy.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphc
from graphc.tensor.random.utils import RandomStream

try:
    from benchmarks.common import interleaved_samples, medians
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, medians  # type: ignore[no-redef]

SHAPE = (1000, 1000)


def graphc_draw(kind: str, linker: str):
    s = RandomStream(1)  # the Philox streams: the ones with C thunks
    if kind == "mask":
        out = s.binomial(1, 0.5, size=SHAPE, dtype="float64")
    elif kind == "normal":
        out = s.normal(size=SHAPE)
    else:
        out = s.uniform(size=SHAPE)
    optimizer = "fast_run" if linker != "py" else "None"
    return graphc.function([], out, mode=graphc.Mode(linker=linker, optimizer=optimizer))


def numpy_draw(kind: str):
    gen = np.random.Generator(np.random.Philox(1))
    if kind == "mask":
        return lambda: gen.binomial(1, 0.5, size=SHAPE).astype("float64")
    if kind == "normal":
        return lambda: gen.normal(0.0, 1.0, size=SHAPE)
    return lambda: gen.uniform(0.0, 1.0, size=SHAPE)


def pytensor_draw(kind: str):
    try:
        import pytensor
        from pytensor.tensor.random.utils import RandomStream
    except ImportError:
        return None
    s = RandomStream(1)
    if kind == "mask":
        out = s.binomial(1, 0.5, size=SHAPE)
    elif kind == "normal":
        out = s.normal(0.0, 1.0, size=SHAPE)
    else:
        out = s.uniform(0.0, 1.0, size=SHAPE)
    return pytensor.function([], out)


def jax_draw(kind: str):
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    state = {"key": jax.random.PRNGKey(1)}

    @jax.jit
    def step(key):
        key, sub = jax.random.split(key)
        if kind == "mask":
            return key, jax.random.bernoulli(sub, 0.5, SHAPE).astype("float64")
        if kind == "normal":
            return key, jax.random.normal(sub, SHAPE, dtype="float64")
        return key, jax.random.uniform(sub, SHAPE, dtype="float64")

    def call():
        state["key"], out = step(state["key"])
        return out.block_until_ready()

    return call


def measure(cands: dict, repeats: int, number: int = 5) -> dict[str, float]:
    return medians(interleaved_samples(cands, repeats, number=number, gc_off=True))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    for kind in ("mask", "uniform", "normal"):
        cands = {
            "graphc c|py": graphc_draw(kind, "c|py"),
            "graphc py": graphc_draw(kind, "py"),
            "numpy": numpy_draw(kind),
            "PyTensor": pytensor_draw(kind),
            "JAX": jax_draw(kind),
        }
        med = measure({k: v for k, v in cands.items() if v is not None}, args.repeats)
        print(f"{kind} {SHAPE[0]}x{SHAPE[1]} float64 (median of {args.repeats}):")
        for name, t in med.items():
            print(f"  {name:12s} {t * 1e3:8.2f} ms   {t / med['numpy']:5.2f}x numpy")


if __name__ == "__main__":
    main()
