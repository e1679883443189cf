"""Fuzzers for the classes of silent wrong answers (docs/reliability.md): integer and small
float dtype pairs at their extremes, in-place nodes fed aliased intermediates, ndarray
subclasses, Python numbers that do not fit an input, several dtypes of one Op in one
function, and arbitrary Python objects handed to trusted C thunks.

Each compares every mode against numpy, or requires a clear Python exception. The number
of examples follows ``--fuzz-examples`` (bounded in the default suite, long in
``make fuzz``); C examples compile a module each, so they get a fraction of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.linker import c_available

pytestmark = pytest.mark.fuzz

PY = Mode(linker="py")
CPY = Mode(linker="c|py") if c_available() else PY
INTS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64")


def _fuzz(strategy, check, n: int, seeds=()) -> None:
    """``n`` examples of ``strategy`` through ``check``, after the ``seeds`` (examples that
    once found a bug of the class, always tried first)."""

    @settings(max_examples=n, deadline=None, derandomize=n <= 200,
              suppress_health_check=list(HealthCheck), database=None)  # fmt: skip
    @given(strategy)
    def run(example):
        check(example)

    for seed in seeds:
        run = example(seed)(run)
    run()


def _extremes(dtype: str) -> list:
    """Values of ``dtype`` where a cast through float64, intp or float16 goes wrong."""
    if dtype == "bool":
        return [False, True]
    if dtype in FLOATS:
        info = np.finfo(dtype)
        return [0.0, -0.0, 1.0, -1.5, float(info.max), float(info.tiny), 12.0, 2.0**24 + 1]
    info = np.iinfo(dtype)
    vals = {info.min, info.max, 0, 1, info.max - 1, min(info.max, 2**53), min(info.max, 2**53 + 1)}
    if info.min < 0:
        vals |= {-1, info.min + 1}
    return sorted(vals)


def _as_float(v, dtype):
    with np.errstate(over="ignore"):
        return np.array(v, dtype=dtype)


def _same(got, want, where: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, numpy {want.dtype}"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-3 if got.dtype.itemsize == 2 else 1e-6,
                                   equal_nan=True, err_msg=where)  # fmt: skip
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


# ------------------------------------------------------------------ dtype pairs

BINARY = {
    "eq": (T.eq, np.equal), "neq": (T.neq, np.not_equal), "lt": (T.lt, np.less),
    "ge": (T.ge, np.greater_equal), "maximum": (T.maximum, np.maximum),
    "minimum": (T.minimum, np.minimum), "add": (T.add, np.add), "mul": (T.mul, np.multiply),
}  # fmt: skip
UNARY_FLOAT = {"exp": (T.exp, np.exp), "tanh": (T.tanh, np.tanh), "sqrt": (T.sqrt, np.sqrt)}


DTYPE_PAIRS = st.lists(st.tuples(st.sampled_from(INTS + FLOATS), st.sampled_from(INTS + FLOATS)),
                       min_size=1, max_size=4)  # fmt: skip
PAIR_SEEDS = (
    [("int64", "uint64"), ("uint64", "int8"), ("int8", "float32"), ("bool", "uint8")],
    [("float16", "int8"), ("int16", "float16"), ("float16", "float32"), ("uint64", "float16")],
)


def _grid(dtype: str, column: bool) -> np.ndarray:
    """All of ``dtype``'s extremes as a column (n, 1) or a row (1, n): broadcasting a column
    against a row tries every pair of values."""
    vals = _as_float(_extremes(dtype), dtype) if dtype in FLOATS else np.array(
        _extremes(dtype), dtype=dtype)  # fmt: skip
    return vals.reshape((-1, 1) if column else (1, -1))


def _check_pairs(pairs, mode) -> None:
    outs, refs = [], []
    args = []
    for a_dt, b_dt in pairs:
        x = T.tensor(a_dt, shape=(None, 1), name="x")
        y = T.tensor(b_dt, shape=(1, None), name="y")
        a, b = _grid(a_dt, True), _grid(b_dt, False)
        args += [(x, a), (y, b)]
        for name, (fn, np_fn) in BINARY.items():
            outs.append(fn(x, y))
            refs.append((f"{name}({a_dt}, {b_dt})", np_fn, (a, b)))
        for name, (fn, np_fn) in UNARY_FLOAT.items():
            outs.append(fn(x))
            refs.append((f"{name}({a_dt})", np_fn, (a,)))
    f = graphc.function([v for v, _ in args], outs, mode=mode)
    got = f(*[val for _, val in args])
    with np.errstate(all="ignore"):
        for g, out, (where, np_fn, vals) in zip(got, outs, refs):
            if len(vals) == 1:  # a float function computes in its declared dtype
                want = np_fn(vals[0].astype(out.dtype)).astype(out.dtype)
            else:
                want = np.asarray(np_fn(*vals)).astype(out.dtype)
            _same(g, want, f"{where} under {mode} over {vals}")


def test_fuzz_dtype_pairs_py(fuzz_examples):
    _fuzz(DTYPE_PAIRS, lambda ex: _check_pairs(ex, PY), max(5, fuzz_examples // 2), PAIR_SEEDS)


def test_fuzz_dtype_pairs_c(fuzz_examples):
    _fuzz(DTYPE_PAIRS, lambda ex: _check_pairs(ex, CPY), max(3, fuzz_examples // 6), PAIR_SEEDS)


@st.composite
def index_examples(draw):
    dt = draw(st.sampled_from(INTS[1:]))
    return dt, draw(st.sampled_from(_extremes(dt))), draw(st.integers(0, 5))


def _check_index(example, fns) -> None:
    dt, k, n = example
    a = np.arange(float(n))
    kv = np.array(k, dtype=dt)
    for mode in (PY, CPY):
        f, g = fns[(dt, str(mode))]
        if k != 0:
            for got, want in zip(f(a, kv), (a[:k], a[k:], a[::k])):
                _same(got, want, f"slices of length {n} at {dt} {k} under {mode}")
        if -n <= k < n:
            assert g(a, kv) == a[k]
        else:
            with pytest.raises((IndexError, OverflowError)):
                g(a, kv)


def test_fuzz_index_and_slice_bounds(fuzz_examples):
    fns = {}
    for dt in INTS[1:]:
        for mode in (PY, CPY):
            x, k = T.vector("x"), T.tensor(dt, shape=(), name="k")
            fns[(dt, str(mode))] = (
                graphc.function([x, k], [x[:k], x[k:], x[::k]], mode=mode),
                graphc.function([x, k], x[k], mode=mode),
            )
    seeds = [("uint64", 2**64 - 1, 3), ("uint64", 2**63, 2)]
    _fuzz(index_examples(), lambda ex: _check_index(ex, fns), fuzz_examples, seeds)


# ------------------------------------------------------------------ aliasing and in-place

FORMS = {
    "z + dot(z, z)": (lambda z, m: z + T.dot(z, z), lambda z, m: z + z @ z),
    "dot(z, z) * 0.5 + z": (lambda z, m: T.dot(z, z) * 0.5 + z, lambda z, m: 0.5 * (z @ z) + z),
    "z - dot(z, z.T)": (lambda z, m: z - T.dot(z, z.T), lambda z, m: z - z @ z.T),
    "z + dot(m, z)": (lambda z, m: z + T.dot(m, z), lambda z, m: z + m @ z),
    "(z * 2) + dot(z, z) + z": (
        lambda z, m: z * 2 + T.dot(z, z) + z,
        lambda z, m: z * 2 + z @ z + z,
    ),
}
INTRO = {"exp": (T.exp, np.exp), "tanh": (T.tanh, np.tanh), "neg": (lambda v: -v, np.negative)}


@st.composite
def alias_examples(draw):
    n = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**16))
    return draw(st.sampled_from(sorted(FORMS))), draw(st.sampled_from(sorted(INTRO))), n, seed


def _check_alias(example, mode) -> None:
    form, intro, n, seed = example
    x, m = T.matrix("x"), T.matrix("m")
    z = INTRO[intro][0](x)
    f = graphc.function([x, m], FORMS[form][0](z, m), mode=mode, on_unused_input="ignore")
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-1, 1, (n, n)), rng.uniform(-1, 1, (n, n))
    want = FORMS[form][1](INTRO[intro][1](a), b)
    np.testing.assert_allclose(f(a, b), want, rtol=1e-10, atol=1e-12, err_msg=f"{form} {mode}")


@pytest.mark.parametrize("mode", [PY, CPY, "DEBUG_MODE"], ids=str)
def test_fuzz_aliased_intermediates_into_inplace_nodes(fuzz_examples, mode):
    share = 2 if mode == PY else 8
    seeds = [("z + dot(z, z)", "exp", 3, 0)]
    _fuzz(alias_examples(), lambda ex: _check_alias(ex, mode), max(3, fuzz_examples // share),
          seeds)  # fmt: skip


# ------------------------------------------------------------------ subclasses and numbers


class _Tagged(np.ndarray):
    """A plain ndarray subclass (as a library might define)."""


SUBCLASSES = {
    "matrix": lambda a: np.asmatrix(a),
    "masked": lambda a: np.ma.masked_array(a, mask=np.zeros_like(a, dtype=bool)),
    "masked-some": lambda a: np.ma.masked_array(a, mask=a > 0),
    "tagged": lambda a: a.view(_Tagged),
    "recarray-free view": lambda a: a.view(np.ndarray),
}


@st.composite
def subclass_examples(draw):
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return draw(st.sampled_from(sorted(SUBCLASSES))), rows, cols, draw(st.integers(0, 99))


def _check_subclass(example, fns) -> None:
    kind, rows, cols, seed = example
    base = np.random.default_rng(seed).normal(size=(rows, cols))
    arg = SUBCLASSES[kind](base.copy())
    for mode, f in fns.items():
        try:
            s, d = f(arg)
        except TypeError as e:
            assert isinstance(arg, np.ma.MaskedArray), f"{kind} refused under {mode}: {e}"
            continue
        assert type(s) is np.ndarray and s.shape == (rows,), f"{kind} under {mode}: {s!r}"
        np.testing.assert_allclose(s, base.sum(axis=1))
        np.testing.assert_allclose(d, base * 2)


def test_fuzz_ndarray_subclasses(fuzz_examples):
    x = T.matrix("x")
    fns = {m: graphc.function([x], [x.sum(axis=1), x * 2], mode=m)
           for m in ("FAST_COMPILE", "FAST_RUN", PY)}  # fmt: skip
    seeds = [("matrix", 2, 3, 0), ("masked-some", 2, 2, 1)]
    _fuzz(subclass_examples(), lambda ex: _check_subclass(ex, fns), fuzz_examples, seeds)


NUMBERS = st.one_of(
    st.integers(-(2**65), 2**65),
    st.sampled_from([2**24 + 1, 2**53 + 1, 2**63, 2**64 - 1, -(2**63) - 1, 255, 256, -129]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e300, 1e-50, 0.1, 65504.0, 65520.0, 1.5, -0.0]),
)


def _fits(v, dtype: str) -> bool:
    """Whether the Python number ``v`` can stand for a value of ``dtype``: an integer in
    range for integer and bool inputs; for floats, an integer held exactly, or a float
    rounded by at most the dtype's epsilon without overflowing or flushing to zero."""
    dt = np.dtype(dtype)
    if dt.kind in "iub":
        lo, hi = (0, 1) if dt.kind == "b" else (np.iinfo(dt).min, np.iinfo(dt).max)
        return isinstance(v, int) and lo <= v <= hi
    with np.errstate(all="ignore"):
        r = dt.type(v)
    if isinstance(v, int):
        return bool(np.isfinite(r)) and int(r) == v
    if not np.isfinite(r) or (r == 0 and v != 0):
        return False
    return abs(float(r) - v) <= abs(v) * float(np.finfo(dt).eps)


def test_fuzz_python_numbers_into_inputs(fuzz_examples):
    fns = {}
    for dt in ("bool", "int8", "uint8", "int32", "uint64", "int64", "float32", "float64"):
        x = T.tensor(dt, shape=(), name="x")
        fns[dt] = graphc.function([x], x * 1, mode=PY)

    def check(example):
        v, dt = example
        try:
            got = fns[dt](v)
        except (TypeError, ValueError, OverflowError):
            assert not _fits(v, dt), f"{v!r} fits {dt} but was refused"
            return
        where = f"{v!r} passed for {dt} became {got!r}"
        if np.dtype(dt).kind == "f" and isinstance(v, float):
            assert _fits(v, dt), where
        else:
            assert got == v, where

    seeds = [(1e300, "float32"), (1e-50, "float32"), (2**24 + 1, "float32"), (2**64 - 1, "int64")]
    _fuzz(st.tuples(NUMBERS, st.sampled_from(sorted(fns))), check, fuzz_examples, seeds)


# ------------------------------------------------------------------ several dtypes, one Op


@st.composite
def mixed_dtype_graphs(draw):
    dts = draw(st.lists(st.sampled_from(("float32", "float64")), min_size=2, max_size=3))
    return dts, draw(st.integers(1, 4)), draw(st.integers(0, 99))


def _check_mixed(example) -> None:
    dts, n, seed = example
    rng = np.random.default_rng(seed)
    xs = [T.tensor(d, shape=(None, None), name=f"x{k}") for k, d in enumerate(dts)]
    outs = []
    for x in xs:
        outs += [T.nnet.softmax(x), T.nnet.log_softmax(x), T.dot(x, x), x.sum(axis=0)]
    f = graphc.function(xs, outs, mode=CPY)
    args = [rng.normal(size=(n, n)).astype(d) for d in dts]
    got = f(*args)
    for k, a in enumerate(args):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        sm = e / e.sum(axis=1, keepdims=True)
        tol = 1e-4 if a.dtype == np.float32 else 1e-10
        for g, w in zip(got[4 * k : 4 * k + 4], (sm, np.log(sm), a @ a, a.sum(axis=0))):
            assert g.dtype == a.dtype
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_fuzz_several_dtypes_of_one_op_in_one_function(fuzz_examples):
    seeds = [(["float32", "float64"], 2, 0)]
    _fuzz(mixed_dtype_graphs(), _check_mixed, max(2, fuzz_examples // 10), seeds)


# ------------------------------------------------------------------ trusted C thunks

OBJECTS = [
    3, -1, 2.5, True, None, "x", b"x", [1.0, 2.0], [[1.0]], (1,), {}, object(), np.int64(1),
    np.float64(2.0), np.float32(1.0), np.array(1.0), np.array([1, 2]), np.ones(3, "float32"),
    np.ones((2, 2)), np.ones((2, 2, 2)), np.array(["a"]), np.array([None]), np.ones(2, ">f8"),
    np.asmatrix(np.ones((2, 2))), np.ma.masked_array(np.ones(2)), np.empty((0,)),
]  # fmt: skip


def _trusted_functions():
    x, m, i = T.vector("x"), T.matrix("m"), T.lscalar("i")
    graphs = {
        "subtensor": ([x, i], x[i]),
        "slice": ([x, i], x[i:]),
        "dot": ([m, x], T.dot(m, x)),
        "sum": ([m], m.sum(axis=0)),
        "reshape": ([x], x.reshape((-1, 1))),
        "softmax": ([m], T.nnet.softmax(m)),
        "exp": ([x], T.exp(x)),
        "join": ([x, m], T.concatenate([x, m[0]])),
        "argmax": ([m], T.argmax(m, axis=1)),
    }
    return {
        k: (
            graphc.function(ins, out, mode=CPY, trust_input=True, on_unused_input="ignore"),
            len(ins),
        )  # fmt: skip
        for k, (ins, out) in graphs.items()
    }


def run_trusted_objects(n: int) -> None:
    """Hand ``n`` random objects to trusted C thunks; print each case before trying it (a
    crash then names its case)."""
    fns = _trusted_functions()

    def check(example):
        name, picks = example
        f, k = fns[name]
        args = [OBJECTS[p % len(OBJECTS)] for p in picks[:k]]
        print(f"{name}{tuple(type(a).__name__ for a in args)}", flush=True)
        try:
            f(*args)
        except Exception:  # noqa: BLE001 - any Python error is fine; a crash is not
            pass

    strategy = st.tuples(st.sampled_from(sorted(fns)), st.lists(st.integers(0, 99), min_size=2,
                                                                max_size=2))  # fmt: skip
    _fuzz(strategy, check, n)


def test_fuzz_arbitrary_objects_to_trusted_c_thunks(fuzz_examples):
    """Run in a child process, so a crash is reported as a failure naming the case."""
    here = Path(__file__).resolve()
    code = (
        f"import sys; sys.path.insert(0, {str(here.parent)!r}); "
        f"import {here.stem} as m; m.run_trusted_objects({fuzz_examples * 3})"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=1800)  # fmt: skip
    last = proc.stdout.strip().splitlines()[-1:] or ["(before any call)"]
    assert proc.returncode == 0, (
        f"the process died (status {proc.returncode}) at {last[0]}\n{proc.stderr[-2000:]}"
    )
