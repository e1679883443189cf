"""graphc's vector math raises no underflow: on x86 a floating-point operation that reads
or writes a subnormal takes a microcode assist (~50 ns per vector instruction), so
``vecmath.py`` forms subnormal results with integer operations. Checked through the
MXCSR flags (denormal operand, underflow) after a compiled loop over every range,
including the one where exp's result is subnormal: gcc must not have turned a select
back into an underflowing multiply (it did, computing both arms of ``sub ? 0 : n``). The
scalar forms, as CPUs that take such an assist run them: elsewhere (AMD) exp's AVX-512
form writes a subnormal result with vscalef (``graphc/linker/c/vector_code.py``)."""

from __future__ import annotations

import ctypes
import platform
import subprocess

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.c import vector_code
from graphc.linker.compiler import find_compiler

pytestmark = [
    pytest.mark.skipif(not c_available(), reason="no C compiler"),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="reads the x86 MXCSR"),
]

DE, UE = 0x02, 0x10  # MXCSR: denormal operand, underflow

_CSR = """#include <xmmintrin.h>
unsigned gc_test_csr(void) { return _mm_getcsr(); }
void gc_test_clear(void) { _mm_setcsr(_mm_getcsr() & ~0x3fu); }
"""


@pytest.fixture(scope="module")
def csr(tmp_path_factory):
    d = tmp_path_factory.mktemp("csr")
    (d / "csr.c").write_text(_CSR)
    subprocess.run([*find_compiler().argv, "-O1", "-shared", "-fPIC", "-o", str(d / "csr.so"),
                    str(d / "csr.c")], check=True)  # fmt: skip
    return ctypes.CDLL(str(d / "csr.so"))


def flags_of(csr, f, *args) -> int:
    csr.gc_test_clear()
    f(*args)
    return csr.gc_test_csr() & (DE | UE)


@pytest.mark.parametrize(("dtype", "lo", "hi"), [("float32", -110, 95), ("float64", -760, 720)])
def test_exp_raises_no_underflow_on_any_range(csr, monkeypatch, dtype, lo, hi):
    # exp as a CPU that takes an assist to write a subnormal runs it: the scalar form
    # (elsewhere the AVX-512 form writes one with vscalef)
    monkeypatch.setattr(vector_code, "writes_subnormals_at_full_speed", lambda: False)
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    f = graphc.function([x, y], T.exp(x), mode=graphc.Mode(linker="c|py"), on_unused_input="ignore")
    xs = np.linspace(lo, hi, 200_003).astype(dtype)
    ys = np.ones_like(xs)
    with np.errstate(all="ignore"):
        want = np.exp(xs)
    assert (np.abs(want[(want > 0)]) < np.finfo(dtype).smallest_normal).sum() > 1000
    assert flags_of(csr, f, xs, ys) == 0
    # the flags are read: a float multiply of a subnormal sets them
    tiny = np.full(64, np.finfo(dtype).smallest_subnormal, dtype)
    g = graphc.function([x, y], x * y, mode=graphc.Mode(linker="c|py"))
    assert flags_of(csr, g, tiny, np.full(64, 0.5, dtype)) != 0


@pytest.mark.parametrize("fn", ["sigmoid", "softplus"])
@pytest.mark.parametrize(("dtype", "lo", "hi"), [("float32", -110, 110), ("float64", -760, 760)])
def test_sigmoid_and_softplus_raise_no_underflow_where_exp_of_minus_abs_x_is_subnormal(
    csr, fn, dtype, lo, hi
):
    """Both take ``e = exp(-|x|)``: where e is tiny (subnormal, or small enough for log1p's
    e*e to underflow) the division, product and log1p get 0 instead, so nothing underflows;
    the results are e (sigmoid, x < 0), 1, x and e (softplus), as numpy's formulas round
    them. The denormal-operand flag is not checked: gcc may form ``1 + e`` for every lane
    before selecting, and a sum reading a subnormal sets that flag without a microcode
    assist, so the flag cannot tell it from a division that takes one (that those ranges
    cost what the others do is measured by benchmarks/bench_vecmath.py)."""
    x = T.vector("x", dtype=dtype)
    f = graphc.function([x], getattr(T, fn)(x), mode=graphc.Mode(linker="c|py"))
    xs = np.linspace(lo, hi, 200_003).astype(dtype)
    # graphc's own exp (within 1 ulp of exp, not numpy's bits below the normal range)
    e = graphc.function([x], T.exp(-abs(x)), mode=graphc.Mode(linker="c|py"))(xs)
    assert (e[e > 0] < np.finfo(dtype).smallest_normal).sum() > 1000
    assert flags_of(csr, f, xs) & UE == 0
    tiny = np.abs(xs) > (18.5 if dtype == "float32" else 38)
    want = np.where(xs >= 0, 1, e) if fn == "sigmoid" else np.where(xs > 0, xs, e)
    np.testing.assert_array_equal(f(xs)[tiny], want[tiny])


@pytest.mark.parametrize("fn", ["expm1", "tanh"])
@pytest.mark.parametrize(("dtype", "lo", "hi"), [("float32", -110, 110), ("float64", -760, 760)])
def test_expm1_and_tanh_raise_no_flag_on_any_range(csr, fn, dtype, lo, hi):
    """expm1 is computed on x clamped to where it rounds to -1 or overflows, tanh on |x|
    clamped to where it rounds to 1: no scale factor underflows and no operation reads
    a subnormal, whatever the input."""
    x = T.vector("x", dtype=dtype)
    f = graphc.function([x], getattr(T, fn)(x), mode=graphc.Mode(linker="c|py"))
    xs = np.linspace(lo, hi, 200_003).astype(dtype)
    assert flags_of(csr, f, xs) == 0
