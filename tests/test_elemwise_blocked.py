"""Blocked contiguous kernels (``gen_elemwise._blocked_kernel``): bodies with long
vector-math chains run in blocks of four vectors, then one vector at a time, the last
partial vector in the plain loop.

Each graph is compiled twice, blocked and (with ``BLOCKED_FLOPS`` out of reach) as the
plain loop, and the two must agree bit for bit on every length around the block size, on
misaligned views, in place, with several outputs and with sums (those within rounding:
the blocks add their terms in another order)."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_checks import assert_same_floats, disassembly, every_kind_of_float, targets_avx512

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.c import gen_elemwise, vector_code
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

C_ONLY = graphc.Mode(linker="c|py", optimizer=None)
DTYPES = ("float64", "float32")


def _scalars(dtype: str, k: int) -> list:
    return [ps.ScalarType(dtype)(n) for n in "abc"[:k]]


def _outputs(a, b, c) -> list:
    """exp(a)*b + tanh(c) - a*a and tanh(c)*a: the fused benchmark's body, and a second
    output reading the same chain."""
    first = ps.sub(ps.add(ps.mul(ps.exp(a), b), ps.tanh(c)), ps.mul(a, a))
    return [first, ps.mul(ps.tanh(c), a)]


def _graphs(dtype: str) -> dict[str, tuple[list, list]]:
    """name -> (inputs, outputs) of the graphs the tests compile."""
    x, y, z = (T.tensor(dtype, (None,), name=n) for n in "xyz")
    a, b, c = _scalars(dtype, 3)
    two = Elemwise(ps.Composite([a, b, c], _outputs(a, b, c)))(x, y, z)
    a, b, c = _scalars(dtype, 3)
    inplace = Elemwise(ps.Composite([a, b, c], _outputs(a, b, c)[:1]), inplace_pattern={0: 0})
    a, b, c = _scalars(dtype, 3)
    sums = ElemwiseSums(ps.Composite([a, b, c], _outputs(a, b, c)), (0,), (1,))(x, y, z)
    return {
        "two outputs": ([x, y, z], list(two)),
        "in place": ([graphc.In(x, mutable=True), y, z], [inplace(x, y, z)]),
        "kept and summed": ([x, y, z], list(sums)),
    }


@contextlib.contextmanager
def _blocking(on: bool):
    """Kernels compiled inside are blocked as usual (``on``) or never."""
    saved = gen_elemwise.BLOCKED_FLOPS
    gen_elemwise.BLOCKED_FLOPS = saved if on else math.inf
    try:
        yield
    finally:
        gen_elemwise.BLOCKED_FLOPS = saved


def _compile(dtype: str, blocked: bool) -> dict[str, graphc.Function]:
    # the vector exp on any CPU: these tests are of bits, not speed
    with _blocking(blocked), pytest.MonkeyPatch.context() as mp:
        mp.setattr(vector_code, "writes_subnormals_at_full_speed", lambda: True)
        return {k: graphc.function(i, o, mode=C_ONLY) for k, (i, o) in _graphs(dtype).items()}


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[str, bool], dict[str, graphc.Function]]:
    return {(d, b): _compile(d, b) for d in DTYPES for b in (True, False)}


def test_the_blocked_kernel_is_the_one_compiled(compiled):
    for dtype in DTYPES:
        for name, f in compiled[(dtype, True)].items():
            assert "_b(" in f.linked.c_source, (dtype, name)
            # stored through restrict pointers, with local arrays for overlapping calls,
            # unless the node writes over its input (local arrays only)
            apart = name != "in place"
            assert ("restrict" in f.linked.c_source) == apart, (dtype, name)
            assert ("_l(" in f.linked.c_source) == apart, (dtype, name)
            # the AVX-512 blocks: float, outputs apart from the inputs, no sums
            vector = dtype == "float32" and name == "two outputs"
            assert ("gcv16_exp_f32(x0)" in f.linked.c_source) == vector, (dtype, name)
        for name, f in compiled[(dtype, False)].items():
            assert "_b(" not in f.linked.c_source, (dtype, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_short_chains_keep_the_plain_loop(dtype):
    # exp alone (24-34 flops) runs no faster blocked; the double tanh (56) does
    x, y = (T.tensor(dtype, (None,), name=n) for n in "xy")
    plain = graphc.function([x, y], T.exp(x) + y, mode=graphc.Mode(linker="c|py"))
    assert "_b(" not in plain.linked.c_source
    if dtype == "float64":
        long = graphc.function([x, y], T.tanh(x) * y, mode=graphc.Mode(linker="c|py"))
        assert "_b(" in long.linked.c_source


def _values(dtype: str, n: int, offset: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # offset: a view starting `offset` elements in (C-contiguous, not 64-byte aligned)
    return [rng.uniform(-3, 3, n + offset).astype(dtype)[offset:] for _ in range(3)]


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    n=st.integers(0, 200),
    offset=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_blocked_equals_the_plain_loop_bit_for_bit(compiled, dtype, n, offset, seed):
    blocked, plain = compiled[(dtype, True)], compiled[(dtype, False)]
    for name in ("two outputs", "kept and summed"):
        vals = _values(dtype, n, offset, seed)
        got, want = blocked[name](*vals), plain[name](*vals)
        np.testing.assert_array_equal(got[0], want[0])
        if name == "two outputs":
            np.testing.assert_array_equal(got[1], want[1])
        else:
            tol = 64 * float(np.finfo(dtype).eps) * (1 + float(np.abs(want[0]).sum()))
            assert abs(float(got[1]) - float(want[1])) <= tol
    xb, y, z = _values(dtype, n, offset, seed)
    xp = xb.copy()
    (out_b,) = blocked["in place"](xb, y, z)
    (out_p,) = plain["in place"](xp, y, z)
    np.testing.assert_array_equal(out_b, out_p)
    np.testing.assert_array_equal(xb, out_b)  # written into the input: the in-place path ran


def test_the_float_blocks_run_the_avx512_code(compiled):
    # vscalefps is only in the vector exp and tanh: gcc emits none from the scalar forms
    blocked = compiled[("float32", True)]["two outputs"]
    assert ("vscalefps" in disassembly(blocked)) == targets_avx512()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), shift=st.integers(0, 2))
def test_the_float_blocks_give_the_plain_loops_bits_on_every_kind_of_float(compiled, seed, shift):
    v = every_kind_of_float(4096, seed)
    x, y, z = (np.roll(v, 977 * k + shift) for k in range(3))
    got = compiled[("float32", True)]["two outputs"](x, y, z)
    want = compiled[("float32", False)]["two outputs"](x, y, z)
    for g, w in zip(got, want):
        assert_same_floats(g, w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_blocked_agrees_with_numpy(compiled, dtype):
    x, y, z = _values(dtype, 1000, 1, seed=3)
    wide = [np.float64(v) for v in (x, y, z)]
    first = np.exp(wide[0]) * wide[1] + np.tanh(wide[2]) - wide[0] ** 2
    second = np.tanh(wide[2]) * wide[0]
    got = compiled[(dtype, True)]["two outputs"](x, y, z)
    rtol = 8 * float(np.finfo(dtype).eps)
    np.testing.assert_allclose(got[0], first, rtol=rtol, atol=rtol * 20)
    np.testing.assert_allclose(got[1], second, rtol=rtol, atol=rtol)
    kept, total = compiled[(dtype, True)]["kept and summed"](x, y, z)
    np.testing.assert_array_equal(kept, got[0])
    assert float(total) == pytest.approx(float(second.sum()), rel=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_and_broadcast_operands(compiled, dtype):
    # the driver's other paths (strided kernel, block buffers for a broadcast operand)
    x, y, z = _values(dtype, 301, 0, seed=5)
    f = compiled[(dtype, True)]["two outputs"]
    plain = compiled[(dtype, False)]["two outputs"]
    for args in ((x[::2], y[::2], z[::2]), (x, np.broadcast_to(y[:1], x.shape), z)):
        for g, w in zip(f(*args), plain(*args)):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("width", [3, 8, 12, 40, 100])
def test_a_loop_step_over_short_rows(width):
    # a scan step of one element-wise node runs its kernel once per step (the fast loop)
    def build():
        X, h0, w = T.dmatrix("X"), T.dvector("h0"), T.dvector("w")
        hs, _ = graphc.scan(lambda xt, h, w: T.tanh(h * w + xt), sequences=X, outputs_info=h0,
                            non_sequences=w)  # fmt: skip
        return graphc.function([X, h0, w], hs)

    with _blocking(False):
        plain = build()
    blocked = build()
    rng = np.random.default_rng(width)
    args = rng.normal(size=(70, width)), rng.normal(size=width), rng.normal(size=width)
    np.testing.assert_array_equal(blocked(*args), plain(*args))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [40, 100, 301])
def test_a_state_updated_in_its_one_row(dtype, width):
    # only the last state is read: the loop keeps one row, and the step's kernel (not in
    # place itself) writes its output over its input: the blocks through local arrays
    def build():
        h0, w = (T.tensor(dtype, (None,), name=n) for n in ("h0", "w"))
        half = np.asarray(0.5, dtype)
        hs, _ = graphc.scan(lambda h, w: T.tanh(h * w + half) * T.exp(-h * h), outputs_info=h0,
                            non_sequences=w, n_steps=70)  # fmt: skip
        return graphc.function([h0, w], hs[-1])

    with _blocking(False):
        plain = build()
    blocked = build()
    rng = np.random.default_rng(width)
    args = [rng.normal(size=width).astype(dtype) for _ in range(2)]
    want = args[0].astype("float64")
    for _ in range(70):
        want = np.tanh(want * args[1] + 0.5) * np.exp(-want * want)
    got = blocked(*args)
    np.testing.assert_array_equal(got, plain(*args))
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-6)
