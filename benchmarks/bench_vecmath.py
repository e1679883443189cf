"""Vector math: graphc's generated exp/expm1/log/log1p/tanh/sigmoid/softplus loops against
numpy's, on uniform [0, 1), standard normal, wide uniform(-30, 30) and extreme
uniform(-1000, 1000) inputs (where exp overflows and underflows and tanh saturates).

Run: ``python benchmarks/bench_vecmath.py [--n N] [--fused-n N] [--repeats R]
[--dtypes float64 float32] [--only exp tanh ...]``.

Three candidates, timed in turns (medians of interleaved samples, IQR/median as the
spread): ``graphc`` (its own inline vector math, ``graphc/linker/c/vecmath.py``),
``graphc libm`` (the same graph compiled with ``config.c_vecmath=False``: the C library's
SIMD functions, glibc's libmvec, as before the vector math existed) and ``numpy`` (its
ufunc writing into a preallocated output; ``1 / (1 + exp(-x))`` and
``maximum(x, 0) + log1p(exp(-|x|))`` for sigmoid and softplus). The fused rows add JAX's
jitted expression (x64 enabled) where JAX is installed (wall-clock times, as for the
others: graphc runs the loop on one core unless ``openmp=True``).

- Each function alone: ns per element on ``--n`` elements (default 2**14, cache
  resident), the input at 8 offsets within a page in turn (see ``page_offsets``); ``log``
  and ``log1p`` take ``|x|``.
- The fused ``exp(x)*y + tanh(z) - x**2`` on ``--fused-n`` elements (default 1e6), x, y, z
  all drawn from the distribution: ms per call.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphc
import graphc.tensor as T

try:
    from benchmarks.common import interleaved_samples, median_spread
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples, median_spread  # type: ignore[no-redef]

FUNCTIONS = ("exp", "expm1", "log", "log1p", "tanh", "sigmoid", "softplus")
DISTRIBUTIONS = ("uniform", "normal", "wide", "extreme")
L = np.longdouble


def ulp_errors(got: np.ndarray, ref: np.ndarray, dtype: str) -> np.ndarray:
    """|got - ref| in ulps of ``ref`` (the smallest subnormal below the normal range);
    0 where both are the same NaN or infinity, inf where one is special and the other not
    or they differ."""
    fi = np.finfo(dtype)
    want = ref.astype(dtype)  # where the exact value rounds to (inf past the largest)
    special = ~np.isfinite(want) | ~np.isfinite(got)
    same_special = (np.isnan(want) & np.isnan(got)) | (want == got)
    _, e = np.frexp(np.abs(ref))
    e = np.maximum(e.astype(np.int64) - 1, int(np.log2(fi.smallest_normal)))
    ulp = np.ldexp(L(1), e - fi.nmant)
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(L) - ref) / ulp
    return np.where(special, np.where(same_special, 0.0, np.inf), err)


def largest_errors(cands: dict, fn: str, x: np.ndarray) -> dict[str, float]:
    """{candidate: its largest error in ulps} computing numpy's ``fn`` (``exp``, ``tanh``...)
    on ``x``, each candidate a function of one array, against 80-bit long double."""
    with np.errstate(all="ignore"):
        ref = getattr(np, fn)(x.astype(L))
    got = {k: np.asarray(c(x)) for k, c in cands.items()}
    return {k: float(ulp_errors(g, ref, str(x.dtype)).max()) for k, g in got.items()}


def draw(dist: str, n: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dist == "uniform":
        v = rng.random(n)
    elif dist == "normal":
        v = rng.standard_normal(n)
    elif dist == "wide":
        v = rng.uniform(-30, 30, n)
    else:  # exp overflows and underflows, tanh saturates
        v = rng.uniform(-1000, 1000, n)
    return v.astype(dtype)


def _numpy_function(fn: str, out: np.ndarray):
    if fn == "sigmoid":
        return lambda a: np.divide(1, np.add(1, np.exp(np.negative(a, out=out), out=out), out=out),
                                   out=out)  # fmt: skip
    if fn == "softplus":
        tmp = np.empty_like(out)
        return lambda a: np.add(
            np.maximum(a, 0, out=tmp),
            np.log1p(np.exp(np.negative(np.abs(a, out=out), out=out), out=out), out=out),
            out=out,
        )
    ufunc = getattr(np, fn)
    return lambda a: ufunc(a, out=out)


def _compile(build, inputs, vecmath: bool):
    with graphc.config.change_flags(c_vecmath=vecmath):
        f = graphc.function(inputs, build(*inputs))
    f.trust_input = True
    assert all(impl.is_c for impl in f.linked.impls), "expected C thunks"
    return f


def page_offsets(v: np.ndarray, copies: int = 8) -> list[np.ndarray]:
    """Copies of ``v`` starting at ``copies`` different offsets within a 4 KiB page.

    Where an input starts a little after an output modulo 4 KiB, the CPU takes loads as
    dependent on the stores just before them (4K aliasing) and a loop runs up to several
    times slower; which candidate meets that depends on where malloc put its output. Each
    sample runs over all the copies, so every candidate sees the same mix."""
    out = []
    for j in range(copies):
        raw = np.empty(v.nbytes + 8192, np.uint8)
        start = (-raw.ctypes.data) % 4096 + j * (4096 // copies)
        a = raw[start : start + v.nbytes].view(v.dtype)
        a[:] = v
        out.append(a)
    return out


def one_function(fn: str, dtype: str, dist: str, n: int, repeats: int, rng) -> dict:
    """{candidate: (ns per element, spread)} for ``fn`` alone."""
    x = T.tensor(dtype, (None,), name="x")
    v = draw(dist, n, dtype, rng)
    if fn in ("log", "log1p"):
        v = np.abs(v)
    vs = page_offsets(v)
    op = getattr(T, fn)
    fv, fl = _compile(op, [x], True), _compile(op, [x], False)
    np_fn = _numpy_function(fn, np.empty_like(v))
    cands = {
        "graphc": lambda: [fv(a) for a in vs],
        "graphc libm": lambda: [fl(a) for a in vs],
        "numpy": lambda: [np_fn(a) for a in vs],
    }
    number = max(1, 2_000_000 // (n * len(vs)))
    got = median_spread(interleaved_samples(cands, repeats, number=number, gc_off=True))
    return {k: (m / (n * len(vs)) * 1e9, s) for k, (m, s) in got.items()}


def jax_candidate(expr, *arrays: np.ndarray):
    """``expr`` jitted by JAX (x64 enabled) on ``arrays``, as a no-argument call; None when
    JAX is not installed."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jf = jax.jit(lambda *a: expr(*a, m=jax.numpy))
    ja = [jax.numpy.asarray(v) for v in arrays]
    return lambda: jf(*ja).block_until_ready()


def fused(dtype: str, dist: str, n: int, repeats: int, rng) -> dict:
    """{candidate: (ms per call, spread)} for ``exp(x)*y + tanh(z) - x**2``."""
    x, y, z = (T.tensor(dtype, (None,), name=s) for s in "xyz")
    xv, yv, zv = (draw(dist, n, dtype, rng) for _ in range(3))

    def expr(a, b, c, m=T):
        return m.exp(a) * b + m.tanh(c) - a**2

    fv, fl = _compile(expr, [x, y, z], True), _compile(expr, [x, y, z], False)
    cands = {
        "graphc": lambda: fv(xv, yv, zv),
        "graphc libm": lambda: fl(xv, yv, zv),
        "numpy": lambda: expr(xv, yv, zv, np),
    }
    jax_call = jax_candidate(expr, xv, yv, zv)
    if jax_call is not None:
        cands["jax"] = jax_call
    got = median_spread(interleaved_samples(cands, repeats, number=3, gc_off=True))
    return {k: (m * 1e3, s) for k, (m, s) in got.items()}


def _row(label: str, res: dict, unit: str) -> str:
    base = res["numpy"][0]
    cells = [
        f"{k} {m:.3g} {unit} ({m / base:.2f}x, IQR {s * 100:.0f}%)" for k, (m, s) in res.items()
    ]
    return f"  {label:28s} " + "; ".join(cells)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2**14, help="elements, functions alone")
    ap.add_argument("--fused-n", type=int, default=10**6, help="elements, fused expression")
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--dtypes", nargs="*", default=["float64", "float32"])
    ap.add_argument("--only", nargs="*", default=[*FUNCTIONS, "fused"],
                    help="functions (and/or 'fused') to time")  # fmt: skip
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"medians of {args.repeats} interleaved samples; ratios to numpy")
    for dtype in args.dtypes:
        for dist in DISTRIBUTIONS:
            print(f"{dtype}, {dist}:")
            for fn in FUNCTIONS:
                if fn in args.only:
                    res = one_function(fn, dtype, dist, args.n, args.repeats, rng)
                    print(_row(f"{fn} (ns/element)", res, "ns"), flush=True)
            if "fused" in args.only:
                res = fused(dtype, dist, args.fused_n, args.repeats, rng)
                print(_row("exp(x)*y + tanh(z) - x**2", res, "ms"), flush=True)


if __name__ == "__main__":
    main()
