"""The AVX-512 contiguous kernels (``graphc/linker/c/vector_code.py``): which bodies get
them, and that they give the scalar loops' results. The strided kernel of the same node
runs the scalar code, so a strided view of the same values is the reference: every kind
of float, every length around the vector (the masked last vector), in place."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_checks import assert_same_floats, disassembly, every_kind_of_float, targets_avx512

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.linker.c import vector_code as vc
from graphc.linker.c.vector_code import vector_code
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import Elemwise

pytestmark = pytest.mark.skipif(not c_available(), reason="no C compiler")

C_ONLY = graphc.Mode(linker="c|py", optimizer=None)


def _scalars(dtype: str, k: int) -> list:
    return [ps.ScalarType(dtype)(n) for n in "abc"[:k]]


DTYPES = ("float32", "float64")


def _bodies(dtype: str) -> dict[str, ps.Composite]:
    """Float bodies with vector code: exp and tanh alone (double tanh alone keeps the scalar
    loop), together (a blocked kernel), and exp with every covered arithmetic Op, two
    outputs and a constant of another dtype (the scalar rules convert it)."""
    a, b = _scalars(dtype, 2)
    two = ps.ScalarType("int8").make_constant(2)
    bodies = {
        "exp": ps.Composite([a, b], [ps.exp(a)]),
        "exp and tanh": ps.Composite([a, b], [ps.mul(ps.exp(a), ps.tanh(b))]),
        "mixed": ps.Composite([a, b], [
            ps.sub(ps.add(ps.mul(ps.exp(a), b, two), ps.neg(b)), ps.sqr(a)),
            ps.true_div(a, b),
        ]),
    }  # fmt: skip
    if dtype == "float32":
        bodies["tanh"] = ps.Composite([a, b], [ps.tanh(a)])
    return bodies


@pytest.fixture(autouse=True)
def vector_exp(monkeypatch):
    """The vector exp on any CPU (this module's tests are of bits, not speed)."""
    monkeypatch.setattr(vc, "writes_subnormals_at_full_speed", lambda: True)


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[str, str], graphc.Function]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vc, "writes_subnormals_at_full_speed", lambda: True)
        return _compile_bodies()


def _compile_bodies() -> dict[tuple[str, str], graphc.Function]:
    functions = {}
    for dtype in DTYPES:
        x, y = (T.tensor(dtype, (None,), name=n) for n in "xy")
        for name, op in _bodies(dtype).items():
            out = Elemwise(op)(x, y)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            f = graphc.function([x, y], outs, mode=C_ONLY, on_unused_input="ignore")
            functions[(dtype, name)] = f
    return functions


def test_only_float_bodies_with_exp_or_tanh_get_vector_code():
    for dtype in DTYPES:
        a, b = _scalars(dtype, 2)
        dts = (dtype, dtype)
        assert vector_code(ps.Composite([a, b], [ps.mul(ps.exp(a), b)]), dts, dts[:1])
        assert vector_code(ps.exp, dts[:1], dts[:1])
        # plain arithmetic: gcc's own vectorization is as fast
        assert vector_code(ps.Composite([a, b], [ps.add(a, b)]), dts, dts[:1]) is None
        # an Op without a vector form (log), libm's functions
        log = ps.Composite([a, b], [ps.mul(ps.log(a), ps.exp(b))])
        assert vector_code(log, dts, dts[:1]) is None
        with graphc.config.change_flags(c_vecmath=False):
            assert vector_code(ps.exp, dts[:1], dts[:1]) is None
    # another dtype, mixed dtypes
    for dts in (("float16",) * 2, ("float32", "float64")):
        assert vector_code(ps.exp, dts[:1], dts[1:]) is None
    # double tanh alone: gcc's vectorized scalar form is as fast
    assert vector_code(ps.tanh, ("float64",), ("float64",)) is None
    assert vector_code(ps.tanh, ("float32",), ("float32",))


def test_exp_keeps_its_scalar_form_where_writing_a_subnormal_is_slow(monkeypatch):
    # the vector exp writes a subnormal result with vscalef (an assist on Intel cores)
    monkeypatch.setattr(vc, "writes_subnormals_at_full_speed", lambda: False)
    a, b = _scalars("float32", 2)
    f32 = ("float32",) * 2
    assert vector_code(ps.exp, f32[:1], f32[:1]) is None
    assert vector_code(ps.Composite([a, b], [ps.mul(ps.exp(a), ps.tanh(b))]), f32, f32[:1]) is None
    assert vector_code(ps.tanh, f32[:1], f32[:1])


def test_the_vector_kernel_is_the_one_compiled(compiled):
    for (dtype, name), f in compiled.items():
        suffix = "ps" if dtype == "float32" else "pd"
        assert f"_mm512_loadu_{suffix}" in f.linked.c_source, (dtype, name)
        # vscalef is only in the vector exp and tanh: gcc emits none from the scalar forms
        assert (f"vscalef{suffix}" in disassembly(f)) == targets_avx512(), (dtype, name)
    x = T.tensor("float64", (None,), name="x")
    with graphc.config.change_flags(c_vecmath=False):
        assert "vscalefpd" not in disassembly(graphc.function([x], T.exp(x), mode=C_ONLY))


def _strided(v: np.ndarray) -> np.ndarray:
    """``v``'s values in a strided view: the node's scalar kernel runs on it."""
    wide = np.empty(2 * len(v), v.dtype)
    wide[::2] = v
    return wide[::2]


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    n=st.integers(0, 70),
    offset=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_the_vector_kernel_gives_the_scalar_loops_bits(compiled, dtype, n, offset, seed):
    # every length around the vector (the masked last one), views not 64-byte aligned
    v = np.random.default_rng(seed).permutation(every_kind_of_float(64, seed, dtype))
    x, y = (np.roll(v, 7 * k)[offset : offset + n] for k in range(2))
    for name in _bodies(dtype):
        f = compiled[(dtype, name)]
        for g, w in zip(f(x, y), f(_strided(x), _strided(y))):
            assert_same_floats(g, w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_kind_of_float_in_a_long_run(compiled, dtype):
    v = every_kind_of_float(20_000, seed=11, dtype=dtype)
    x, y = v, np.roll(v, 4099)
    for name in _bodies(dtype):
        f = compiled[(dtype, name)]
        for g, w in zip(f(x, y), f(_strided(x), _strided(y))):
            assert_same_floats(g, w)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 16, 37, 1000])
def test_in_place(dtype, n):
    x, y = (T.tensor(dtype, (None,), name=k) for k in "xy")
    a, b = _scalars(dtype, 2)
    op = ps.Composite([a, b], [ps.mul(ps.exp(a), b)])  # short: the plain kernel
    f = graphc.function([graphc.In(x, mutable=True), y], Elemwise(op, {0: 0})(x, y), mode=C_ONLY)
    v = np.random.default_rng(n).permutation(every_kind_of_float(n, seed=n, dtype=dtype))[:n]
    xv, yv = v.copy(), np.roll(v, 3)
    want = graphc.function([x, y], Elemwise(op)(x, y), mode=C_ONLY)(_strided(xv), _strided(yv))
    got = f(xv, yv)
    assert_same_floats(got, want)
    assert_same_floats(xv, want)  # written into the input: the in-place path ran
