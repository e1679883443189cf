"""graphc's vector math (graphc/linker/c/vecmath.py) in the generated element-wise loops.

- accuracy: every function, float64 and float32, against a reference computed in
  ``np.longdouble`` (80-bit on x86), within the ulp bounds the module states, on dense
  samples of uniform, normal, wide, huge, tiny, subnormal and threshold inputs and on
  hypothesis' floats over the whole range;
- special values (NaN, +-inf, +-0, overflow, underflow, out-of-domain) bit for bit as
  numpy gives them (NaN only as NaN);
- the C linker against the Python one (numpy) for strided and broadcast inputs, and the
  generated C really calls these functions (or the C library's with ``c_vecmath`` off);
- the checks fail on a broken polynomial or a broken special-case select (the C is
  recompiled with one of each).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from benchmarks.bench_vecmath import ulp_errors
from graphc.linker import c_available
from graphc.linker.c import gen_elemwise, vecmath
from graphc.linker.c.vecmath import FUNCTIONS, ULP_BOUNDS, VECMATH
from graphc.scalar import basic as ps

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

DTYPES = ("float64", "float32")
L = np.longdouble
C_MODE = graphc.Mode(linker="c|py", optimizer=None)
PY_MODE = graphc.Mode(linker="py", optimizer=None)


def reference(fn: str, x: np.ndarray) -> np.ndarray:
    """``fn(x)`` in 80-bit long double (errors far below a float64 ulp)."""
    xl = np.asarray(x).astype(L)
    with np.errstate(all="ignore"):
        if fn == "sigmoid":
            return 1 / (1 + np.exp(-xl))
        if fn == "softplus":
            return np.maximum(xl, 0) + np.log1p(np.exp(-np.abs(xl)))
        return getattr(np, fn)(xl)


def domain(fn: str, v: np.ndarray) -> np.ndarray:
    """Inputs inside the function's domain (for the accuracy samples)."""
    if fn == "log":
        return np.abs(v)
    if fn == "log1p":
        return np.where(v < -1, -v, v).astype(v.dtype)
    return v


def samples(dtype: str, n: int = 20_000) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(17)
    fi = np.finfo(dtype)
    big = 89.0 if dtype == "float32" else 710.0
    small = -104.0 if dtype == "float32" else -746.0
    log_lo, log_hi = np.log(float(fi.smallest_subnormal)), np.log(float(fi.max))
    sign = rng.choice([-1.0, 1.0], n)
    edges = [np.sqrt(0.5), np.sqrt(2), np.sqrt(2) - 1, np.sqrt(0.5) - 1, 1.0, -1.0]
    out = {
        "uniform": rng.random(n),
        "normal": rng.standard_normal(n),
        "wide": rng.uniform(-30, 30, n),
        "exp range": rng.uniform(small, big, n),
        "huge": sign * np.exp(rng.uniform(np.log(big), log_hi, n)),
        "tiny": sign * np.exp(rng.uniform(np.log(float(fi.smallest_normal)), -1, n)),
        "subnormal": sign * rng.uniform(0, float(fi.smallest_normal), n),
        "all magnitudes": sign * np.exp(rng.uniform(log_lo, log_hi, n)),
        # around the reduction's boundaries (multiples of ln2/2) and log's split points
        "boundaries": rng.choice(np.concatenate([np.arange(-40, 41) * np.log(2) / 2, edges]), n)
        + rng.uniform(-1e-3, 1e-3, n),
    }
    return {k: v.astype(dtype) for k, v in out.items()}


_compiled: dict[tuple[str, str, bool], object] = {}


def compiled(fn: str, dtype: str, vecmath: bool = True):
    """The C-linked Elemwise of ``fn`` over a vector (one compile per process)."""
    key = (fn, dtype, vecmath)
    if key not in _compiled:
        x = T.vector("x", dtype=dtype)
        with graphc.config.change_flags(c_vecmath=vecmath):
            f = graphc.function([x], getattr(T, fn)(x), mode=C_MODE)
        assert all(impl.is_c for impl in f.linked.impls)
        _compiled[key] = f
    return _compiled[key]


def worst(fn: str, dtype: str, f, values: np.ndarray) -> tuple[float, float]:
    """(largest ulp error, the input where it occurs) of ``f`` on ``values``."""
    got = np.asarray(f(values))
    err = ulp_errors(got, reference(fn, values), dtype)
    i = int(np.argmax(err))
    return float(err[i]), float(values[i])


SWEPT = [("exp", -104.0, 89.0), ("expm1", -30.0, 89.0), ("tanh", -10.5, 10.5),
         ("sigmoid", -20.0, 20.0)]  # fmt: skip


@pytest.mark.parametrize(("fn", "lo", "hi"), SWEPT)
def test_float32_accuracy_on_every_127th_float_of_the_active_range(fn, lo, hi):
    """float32 can be swept: every 127th float between ``lo`` and ``hi`` (where the
    function is not a constant; 1e-4 in magnitude and up for the ulp-sized remainder),
    about 2.5 million inputs a function, within the stated bound."""
    f = compiled(fn, "float32")
    bits = np.arange(np.float32(1e-4).view(np.int32), np.float32(max(-lo, hi)).view(np.int32),
                     127, dtype=np.int32)  # fmt: skip
    mag = bits.view(np.float32)
    v = np.concatenate([mag[mag <= hi], -mag[mag <= -lo]])
    err, at = worst(fn, "float32", f, v)
    assert err <= ULP_BOUNDS["float32"][fn], f"{fn}({at!r}) float32 is {err:.3f} ulp off"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_accuracy_within_the_stated_bound_on_every_range(fn, dtype):
    f = compiled(fn, dtype)
    bound = ULP_BOUNDS[dtype][fn]
    for name, v in samples(dtype).items():
        err, at = worst(fn, dtype, f, domain(fn, v))
        assert err <= bound, f"{fn}({at!r}) {dtype} is {err:.3f} ulp off ({name} inputs)"


def _floats(dtype: str):
    return st.lists(
        st.floats(width=64 if dtype == "float64" else 32, allow_nan=True, allow_infinity=True),
        min_size=1,
        max_size=64,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCTIONS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_accuracy_on_arbitrary_floats(fn, dtype, data):
    values = np.array(data.draw(_floats(dtype)), dtype=dtype)
    err, at = worst(fn, dtype, compiled(fn, dtype), values)
    assert err <= ULP_BOUNDS[dtype][fn], f"{fn}({at!r}) {dtype} is {err:.3f} ulp off"


def special_inputs(dtype: str) -> np.ndarray:
    fi = np.finfo(dtype)
    tiny = float(fi.smallest_subnormal)
    vals = [
        np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 4 * tiny, -4 * tiny,
        float(fi.smallest_normal), -float(fi.smallest_normal), float(fi.max), -float(fi.max),
        1.0, -1.0, -2.0, 1e-30, -1e-30, 1e30, -1e30,
        1000.0, -1000.0, 750.0, -750.0, 720.0, -760.0, 100.0, -100.0, 200.0, -200.0,
        30.0, -30.0, 50.0, -50.0,
    ]  # fmt: skip
    return np.array(vals, dtype=dtype)


def numpy_values(fn: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if fn == "sigmoid":
            return ps.Sigmoid().impl(x)
        if fn == "softplus":
            return ps.Softplus().impl(x)
        return getattr(np, fn)(x)


def special_mismatches(fn: str, dtype: str, f) -> list[str]:
    """Inputs whose result is not numpy's bit for bit where numpy's result is a special
    value (NaN, +-inf, +-0, +-1 from saturation) or the input itself (tiny arguments)."""
    x = special_inputs(dtype)
    got, want = np.asarray(f(x)), numpy_values(fn, x)
    bad = []
    for xi, g, w in zip(x, got, want):
        exact = np.isnan(w) or np.isinf(w) or w == 0 or abs(w) == 1 or w == xi
        if not exact:
            continue
        same = np.isnan(g) if np.isnan(w) else (g == w and np.signbit(g) == np.signbit(w))
        if not same:
            bad.append(f"{fn}({xi!r}) = {g!r}, numpy {w!r}")
    return bad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_special_values_as_numpy(fn, dtype):
    assert special_mismatches(fn, dtype, compiled(fn, dtype)) == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_values_cover_each_case(dtype):
    """The special-value check above compares these results exactly."""
    x = special_inputs(dtype)
    want = {fn: numpy_values(fn, x) for fn in FUNCTIONS}
    idx = {float(v): i for i, v in enumerate(x) if not np.isnan(v)}
    assert np.isnan(want["log"][idx[-1.0]]) and want["log"][idx[0.0]] == -np.inf
    assert want["exp"][idx[1000.0]] == np.inf and want["exp"][idx[-1000.0]] == 0
    assert want["log1p"][idx[-1.0]] == -np.inf and want["expm1"][idx[-100.0]] == -1
    assert np.signbit(want["tanh"][idx[-0.0]]) and np.signbit(want["expm1"][idx[-0.0]])
    assert want["tanh"][idx[-30.0]] == -1 and want["sigmoid"][idx[-1000.0]] == 0
    tiny = float(np.finfo(dtype).smallest_subnormal)
    assert want["expm1"][idx[-tiny]] == -tiny and want["log1p"][idx[tiny]] == tiny


def _strided_broadcast(fn: str, dtype: str):
    """``fn(x)`` of a strided matrix, and ``fn(a) * b`` fused with a broadcast row."""
    x = T.matrix("x", dtype=dtype)
    a, b = T.matrix("a", dtype=dtype), T.vector("b", dtype=dtype)
    op = getattr(T, fn)
    outs = [op(x), op(a) * b]
    return [x, a, b], outs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_c_linker_agrees_with_numpy_on_strided_and_broadcast_inputs(fn, dtype):
    inputs, outs = _strided_broadcast(fn, dtype)
    fc = graphc.function(inputs, outs, mode=graphc.Mode(linker="c|py"))
    fp = graphc.function(inputs, outs, mode=graphc.Mode(linker="py"))
    assert all(impl.is_c for impl in fc.linked.impls)
    assert (
        f"gc_vm_{fn}_npy_{dtype}((npy_{dtype})" in fc.linked.c_source
    )  # a call, not the definition
    rng = np.random.default_rng(3)
    base = rng.standard_normal((40, 70)) * 8
    base[::7, ::5] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-310, 800.0, -800.0, 3.0, -3.0,
                      0.5, -0.5, 100.0, -100.0][: base[::7, ::5].shape[1]]  # fmt: skip
    base = domain(fn, base).astype(dtype)
    x = base[::-2, 1::3]  # negative and non-unit strides
    a = base[:, :9].copy()
    b = domain(fn, rng.standard_normal(9)).astype(dtype)
    got, want = fc(x, a, b), fp(x, a, b)
    # numpy's own functions are within about 1 ulp of the exact value too
    tol = (ULP_BOUNDS[dtype][fn] + 2) * float(np.finfo(dtype).eps)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=tol, atol=float(np.finfo(dtype).smallest_normal))


def _contiguous_kernels(f) -> str:
    """The contiguous kernels' C, with the block functions of the blocked ones."""
    kernel = r"(?:static|GCVM_INLINE) void gc_ew_\w+_[bc]\(.*?\n}\n"
    return "".join(re.findall(kernel, f.linked.c_source, re.S))


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_calls_in_one_loop_use_the_out_of_line_simd_clones(dtype, monkeypatch):
    # Past INLINE_CALLS, a kernel calls gc_vmo_* (one SIMD clone each) instead of inlining
    # every use; the values are those of the inline code, within rounding.
    x = T.vector("x", dtype=dtype)
    y = sum(T.tanh(x * (k + 1)) + T.exp(-x * k) for k in range(6))
    v = np.linspace(-3, 3, 1001).astype(dtype)
    f = graphc.function([x], y, mode=graphc.Mode(linker="c|py"))
    call = f"gc_vmo_tanh_npy_{dtype}((npy_{dtype})"  # a call, not the definition
    assert call in _contiguous_kernels(f)
    monkeypatch.setattr(vecmath, "INLINE_CALLS", 10**6)
    inline = graphc.function([x], y, mode=graphc.Mode(linker="c|py"))
    assert call not in _contiguous_kernels(inline)
    assert call in inline.linked.c_source  # the strided loops always call out of line
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(f(v), inline(v), rtol=8 * eps, atol=8 * eps)
    np.testing.assert_allclose(f(v), graphc.function([x], y, mode=graphc.Mode(linker="py"))(v),
                               rtol=64 * eps, atol=64 * eps)  # fmt: skip


@pytest.mark.parametrize("fn", ["exp", "tanh"])
def test_c_vecmath_off_uses_the_c_library(fn):
    f = compiled(fn, "float64", vecmath=False)
    src = f.linked.c_source
    assert f"gc_vm_{fn}_npy_float64((npy_float64)" not in src
    assert f"({fn}((npy_float64)x0)" in src
    x = samples("float64")["normal"]
    np.testing.assert_allclose(f(x), numpy_values(fn, x), rtol=1e-15)


def _broken(*edits: tuple[str, str]):
    """The support code with ``(old, new)`` edits to the vector math, in turn."""
    text = VECMATH
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return tuple(text if s is VECMATH else s for s in gen_elemwise.SUPPORT)


def test_double_tanh_folds_its_factor_two_without_changing_a_bit(monkeypatch):
    # 2|x| multiplied in, as before the fold: the reduction of 2h, s for 2s, Q unscaled
    edits = [("gcvm_reduce_w_f64(h, 2.0, &n, &rc)", "gcvm_reduce_f64(2.0 * h, &n, &rc)"),
             ("s2 = gcvm_double((n + 1024) << 52)", "s2 = s"),
             ("gcvm_qs_f64(r, 2.0, 2.0)", "gcvm_q_f64(r)")]  # fmt: skip
    x = T.dvector("x")
    folded = graphc.function([x], T.tanh(x), mode=C_MODE)
    monkeypatch.setattr(gen_elemwise, "SUPPORT", _broken(*edits))
    multiplied = graphc.function([x], T.tanh(x), mode=C_MODE)
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**63, 200_000, dtype=np.int64).view(np.float64)  # any double
    tiny = np.ldexp(rng.random(100_000) + 1.0, rng.integers(-1080, -480, 100_000))
    xs = np.concatenate([*samples("float64").values(), bits, tiny, -tiny,
                         rng.uniform(-25, 25, 200_000)])  # fmt: skip
    np.testing.assert_array_equal(folded(xs).view(np.int64), multiplied(xs).view(np.int64))


@pytest.mark.parametrize(
    ("fn", "dtype", "old", "new", "check"),
    [
        # the highest coefficient of exp's (and expm1's) polynomial dropped
        (
            "exp",
            "float64",
            "fma(0x1.af389eea54156p-26 * g * h8 * h, z,",
            "fma(0.0, z,",
            "accuracy",
        ),  # fmt: skip
        ("tanh", "float32", "fmaf(0x1.6d10fcp-10f, r2,", "fmaf(0.0f, r2,", "accuracy"),
        # one coefficient of log's polynomial off in its 8th significant digit
        ("log", "float64", "0x1.7462b51cb66b1p-3);", "0x1.7462b6p-3);", "accuracy"),
        # special-case selects removed
        ("log", "float64", "    y = x < 0.0 ? NAN : y;\n", "", "special"),
        # exp's cap at inf's bits removed (inf in, NaN out) and its NaN select
        ("exp", "float32", "yn = b < 0x7f800000 ? b : 0x7f800000;", "yn = b;", "special"),
        (
            "exp",
            "float64",
            "x != x ? gcvm_double(gcvm_bits_f64(x) | 0x0008000000000000LL) : gcvm_double(y)",
            "gcvm_double(y)",
            "special",
        ),  # fmt: skip
        (
            "tanh",
            "float64",
            "copysign(fma(res, w, q), x)",
            "(x < 0 ? -1 : 1) * fma(res, w, q)",
            "special",
        ),  # fmt: skip
    ],
)
def test_the_checks_fail_on_broken_vector_math(monkeypatch, fn, dtype, old, new, check):
    monkeypatch.setattr(gen_elemwise, "SUPPORT", _broken((old, new)))
    # the scalar forms (the AVX-512 kernels' are held to their bits in test_vector_code.py)
    monkeypatch.setattr(gen_elemwise, "vector_code", lambda *args: None)
    x = T.vector("x", dtype=dtype)
    f = graphc.function([x], getattr(T, fn)(x), mode=C_MODE)
    if check == "accuracy":
        errs = [worst(fn, dtype, f, domain(fn, v))[0] for v in samples(dtype).values()]
        assert max(errs) > ULP_BOUNDS[dtype][fn]
    else:
        assert special_mismatches(fn, dtype, f) != []
