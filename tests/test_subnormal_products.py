"""float32 products and quotients of values that are subnormal, in fused loops.

An exp (sigmoid, softplus) computed inside a fused loop is subnormal for ordinary arguments
(exp(x), x in [-104, -87]), and the loop multiplies or divides by it: fused loops (C
linker) over inputs concentrated there, with subnormal and zero results, signed zeros,
inf and NaN, equal the unfused graph, numpy's float32 arithmetic on the same exp values
and the Python linker's, bit for bit (no flush to zero, no fma contraction).

Those operations are plain float ones, which take a microcode assist on a subnormal
operand or result, as numpy's do. Forming them in double instead (exact, and assist-free:
``(float)fma((double)a, (double)b, -0.0)``) made every float32 exp loop 36-48% slower for
a 3-6% gain where 0.8% of the inputs give a subnormal exp (benchmarks ``fused``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.linker import c_available

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
