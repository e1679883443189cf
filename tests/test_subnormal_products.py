"""float32 products and quotients of values that may be subnormal, in fused loops.

An exp (sigmoid, softplus, pow) computed inside a fused loop can be subnormal for ordinary
arguments (exp(x), x in [-104, -87]); its float32 products and quotients are formed in
double and rounded once (``graphc/scalar/c_code.py``: ``_WIDE``), which must be the IEEE
float result bit for bit:

- fused loops (C linker) over inputs concentrated where exp underflows, with subnormal and
  zero results, signed zeros, inf and NaN, equal the unfused graph, numpy's float32
  arithmetic on the same exp values and the Python linker's, bit for bit;
- the generated C forms those products in double, and only those (products of loop inputs
  and float64 loops stay plain multiplies);
- gcc keeps the double operations (it narrows ``(float)((double)a * (double)b)`` back to a
  float multiply, which reads and writes subnormals with a microcode assist).
"""

from __future__ import annotations

import platform
import re
import subprocess
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.compiler import DEFAULT_CFLAGS, find_compiler, include_dirs
from graphc.scalar import basic as ps
from graphc.scalar.c_code import _WIDE_C, wide_for_op

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

F32 = np.float32
FUSED = graphc.Mode(linker="c|py")
UNFUSED = graphc.Mode(linker="c|py").excluding("fusion")
PY = graphc.Mode(linker="py", optimizer=None)
C_ONLY = graphc.Mode(linker="c|py", optimizer=None)

# (name, graph of x, y, z given the underflowing function u, numpy given u's values)
Expr = Callable
CASES: list[tuple[str, str, Expr, Expr]] = [
    ("exp(x)*y", "exp", lambda u, x, y, z: u(x) * y, lambda e, y, z: e * y),
    ("exp(x)*y + z", "exp", lambda u, x, y, z: u(x) * y + z, lambda e, y, z: e * y + z),
    ("y*exp(x) - z", "exp", lambda u, x, y, z: y * u(x) - z, lambda e, y, z: y * e - z),
    ("exp(x)*y*z", "exp", lambda u, x, y, z: u(x) * y * z, lambda e, y, z: (e * y) * z),
    ("exp(x)**2 * y", "exp", lambda u, x, y, z: T.sqr(u(x)) * y, lambda e, y, z: (e * e) * y),
    ("exp(x)/y", "exp", lambda u, x, y, z: u(x) / y, lambda e, y, z: e / y),
    ("y/exp(x) + z", "exp", lambda u, x, y, z: y / u(x) + z, lambda e, y, z: y / e + z),
    ("sigmoid(x)*y", "sigmoid", lambda u, x, y, z: u(x) * y, lambda e, y, z: e * y),
    ("softplus(x)*y - z", "softplus", lambda u, x, y, z: u(x) * y - z, lambda e, y, z: e * y - z),
    (
        "exp(x)*y + tanh(z) - x**2",
        "exp",
        lambda u, x, y, z: u(x) * y + T.tanh(z) - x**2,
        None,  # tanh: compared with the unfused graph only
    ),
]


def same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bit for bit (signed zeros and subnormals included); any NaN equals any NaN."""
    got, want = np.asarray(got, F32), np.asarray(want, F32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=what)
    bad = (got.view(np.int32) != want.view(np.int32)) & ~nan
    i = np.flatnonzero(bad)
    assert not i.size, f"{what}: {got[i[:5]]!r} != {want[i[:5]]!r}"


_fns: dict[str, tuple] = {}


def functions(name: str, ufn: str, graph: Expr) -> tuple:
    """The fused and unfused C functions of a case, the underflowing function alone (C)
    and the rest of the case as a Python-linked graph of its values (compiled once)."""
    if name not in _fns:
        x, y, z, e = (T.vector(s, dtype="float32") for s in "xyze")
        u = getattr(T, ufn)
        out = graph(u, x, y, z)
        fused = graphc.function([x, y, z], out, mode=FUSED, on_unused_input="ignore")
        unfused = graphc.function([x, y, z], out, mode=UNFUSED, on_unused_input="ignore")
        alone = graphc.function([x], u(x), mode=C_ONLY)
        rest = None  # the last case reads x outside u(x)
        if "tanh" not in name:
            rest = graphc.function([e, y, z], graph(lambda _: e, x, y, z), mode=PY,
                                   on_unused_input="ignore")  # fmt: skip
        _fns[name] = (fused, unfused, alone, rest)
    return _fns[name]


def underflow_args(n: int) -> st.SearchStrategy:
    """x mostly where exp underflows; y, z of every size, special values included."""
    lo, hi = (-104.0, -87.0)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 3.4e38]
    xs = st.one_of(st.floats(lo, hi, width=32), st.sampled_from([*specials, -87.3, -103.9]))
    ys = st.one_of(
        st.floats(-4.0, 4.0, width=32),
        st.floats(width=32, allow_nan=False),
        st.sampled_from(specials),
        st.floats(2.0**-10, 2.0**20, width=32),
    )
    arr = lambda s: st.lists(s, min_size=n, max_size=n).map(lambda v: np.array(v, F32))  # noqa: E731
    return st.tuples(arr(xs), arr(ys), arr(ys))


@pytest.mark.parametrize(("name", "ufn", "graph", "ref"), CASES, ids=[c[0] for c in CASES])
@settings(max_examples=30, deadline=None)
@given(args=underflow_args(64))
def test_fused_products_are_the_float_results_bit_for_bit(name, ufn, graph, ref, args):
    x, y, z = args
    fused, unfused, alone, rest = functions(name, ufn, graph)
    with np.errstate(all="ignore"):
        got = fused(x, y, z)
        same_bits(got, unfused(x, y, z), f"{name}: fused against unfused")
        e = alone(x)
        if ref is not None and rest is not None:
            same_bits(got, ref(e, y, z), f"{name}: against numpy")
            same_bits(got, rest(e, y, z), f"{name}: c|py against py")


def test_dense_underflow_range_has_subnormal_zero_and_signed_results():
    # the samples reach what the test is about: subnormal results and both zeros
    rng = np.random.default_rng(5)
    n = 100_000
    x = rng.uniform(-104, -87, n).astype(F32)
    y = (rng.choice([-1, 1], n) * np.exp(rng.uniform(-10, 10, n))).astype(F32)
    z = np.full(n, -0.0, F32)  # keeps the sign of a zero product
    name, ufn, graph, ref = CASES[1]
    fused, unfused, alone, rest = functions(name, ufn, graph)
    got = fused(x, y, z)
    with np.errstate(all="ignore"):
        want = ref(alone(x), y, z)
    same_bits(got, want, name)
    tiny = np.abs(got) < np.finfo(F32).smallest_normal
    assert (tiny & (got != 0)).sum() > 1000
    assert np.signbit(got[got == 0]).any() and (~np.signbit(got[got == 0])).any()


def _kernels(f) -> str:
    return "".join(re.findall(r"static void gc_ew_\w+_c\(.*?\n}\n", f.linked.c_source, re.S))


@pytest.mark.parametrize(
    ("name", "ufn", "graph", "ref"), CASES[:-1], ids=[c[0] for c in CASES[:-1]]
)
def test_products_of_underflowing_values_are_formed_in_double(name, ufn, graph, ref):
    fused = functions(name, ufn, graph)[0]
    k = _kernels(fused)
    assert "gc_mulw_npy_float32(" in k or "gc_divw_npy_float32(" in k, k
    # no float multiply or divide of a value computed in the loop is left
    assert not re.search(r"\bt\d+\)\) [*/]|[*/] \(\(npy_float32\)t\d+\)", k), k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_of_loop_inputs_and_float64_stay_plain(dtype):
    x, y, z = (T.vector(s, dtype=dtype) for s in "xyz")
    plain = graphc.function([x, y, z], (x * y + z) * x - y, mode=FUSED)
    assert "mulw" not in _kernels(plain) and " * " in _kernels(plain)
    f = graphc.function([x, y, z], T.exp(x) * y / z, mode=FUSED)
    assert ("gc_mulw_npy_float32(" in _kernels(f)) == (dtype == "float32")


def test_the_underflowing_ops_are_declared_on_the_ops():
    assert ps.Exp.underflows and ps.Sigmoid.underflows and ps.Softplus.underflows
    assert not ps.Tanh.underflows and not ps.Log.underflows and not ps.Mul.underflows
    assert wide_for_op.get(ps.Mul()) is not None and wide_for_op.get(ps.Add()) is None


_ASM_KERNEL = """
void mul_k(long n, const npy_float32 *a, const npy_float32 *b, npy_float32 *o) {
#pragma omp simd
    for (long i = 0; i < n; i++) o[i] = gc_mulw_npy_float32(a[i], b[i]);
}
void div_k(long n, const npy_float32 *a, const npy_float32 *b, npy_float32 *o) {
#pragma omp simd
    for (long i = 0; i < n; i++) o[i] = gc_divw_npy_float32(a[i], b[i]);
}
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="checks x86 instructions")
def test_gcc_keeps_the_double_operations_vectorized(tmp_path):
    src = tmp_path / "k.c"
    src.write_text("#include <math.h>\n#include <numpy/npy_common.h>\n" + _WIDE_C + _ASM_KERNEL)
    cc = find_compiler()
    flags = [f for f in DEFAULT_CFLAGS if f not in ("-shared", "-fPIC")]
    incs = [f"-I{d}" for d in include_dirs()]
    asm = subprocess.run([*cc.argv, *flags, *incs, "-S", "-o", "-", str(src)],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    for fn, op in (("mul_k", r"vfmadd\w*pd"), ("div_k", r"vdivpd")):
        body = asm.split(f"{fn}:", 1)[1].split(".cfi_endproc", 1)[0]
        assert not re.search(r"v(mul|div)[sp]s\b|vfn?m(add|sub)\w*[sp]s\b", body), body
        assert re.search(op, body) and "vcvtpd2ps" in body, body
