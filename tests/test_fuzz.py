"""Random-graph fuzzing: random expression graphs over the Op library, with random shapes
(broadcasting, size 0 and 1 axes), dtypes and input layouts (strided, reversed, Fortran),
evaluated by a numpy model of the same expression and by compiled functions ("py",
FAST_COMPILE, DEBUG_MODE, and with generated C "c|py", FAST_RUN and DEBUG_MODE over c|py),
which must all agree. Random differentiable graphs' gradients must agree with finite
differences (``verify_grad``).

A graph is a recipe (input specs plus a list of steps, each an op name and two integers that
pick operands from the pool of values built so far), so hypothesis shrinks it like data. On a
failure the shrunken graph is printed with ``graphc.printing.debugprint``.

The number of examples is ``--fuzz-examples`` (default 100; ``make fuzz`` runs 2000).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc.compile.debugmode import DebugMode
from graphc.compile.mode import Mode
from graphc.linker import c_available

pytestmark = pytest.mark.fuzz

# ------------------------------------------------------------------ the op table


@dataclass
class Val:
    var: object  # graphc Variable
    val: np.ndarray  # numpy model value
    mag: float  # bound on the magnitude of every value it was computed from


def _mag(*xs: Val, extra=()) -> float:
    m = max([x.mag for x in xs] + list(extra) + [1.0])
    return m


def _absmax(a) -> float:
    a = np.asarray(a)
    fin = a[np.isfinite(a)] if a.dtype.kind in "fc" else a
    return float(np.max(np.abs(fin))) if fin.size else 0.0


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype) if x.dtype.kind == "f" else None


# name -> (graph function, numpy function, allowed when (max magnitude))
UNARY = {
    "neg": (lambda x: -x, np.negative, 1e30),
    "abs": (T.abs, np.abs, 1e30),
    "tanh": (T.tanh, np.tanh, 1e30),
    "sigmoid": (T.sigmoid, _sigmoid, 1e30),
    "sin": (T.sin, np.sin, 10.0),
    "cos": (T.cos, np.cos, 10.0),
    "exp": (T.exp, np.exp, 10.0),
    "sqr": (T.sqr, np.square, 1e3),
    "log1p_abs": (lambda x: T.log1p(T.abs(x)), lambda x: np.log1p(np.abs(x)), 1e30),
    "sqrt_abs": (lambda x: T.sqrt(T.abs(x)), lambda x: np.sqrt(np.abs(x)), 1e30),
}
SMOOTH_UNARY = ("neg", "tanh", "sigmoid", "sin", "cos", "exp", "sqr")
BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (T.maximum, np.maximum),
    "minimum": (T.minimum, np.minimum),
    "div": (lambda a, b: a / T.cosh(b), lambda a, b: a / np.cosh(b)),
}
SMOOTH_BINARY = ("add", "sub", "mul", "div")
OTHER = ("sum", "max", "mean", "transpose", "expand", "drop", "reverse", "step2", "dot", "cast")
SMOOTH_OTHER = ("sum", "mean", "transpose", "expand", "drop", "reverse", "step2", "dot")

ALL_OPS = tuple(UNARY) + tuple(BINARY) + OTHER
SMOOTH_OPS = SMOOTH_UNARY + SMOOTH_BINARY + SMOOTH_OTHER


def _float(x: Val) -> bool:
    return x.val.dtype.kind == "f"


def _static_broadcast(x: Val, y: Val) -> bool:
    """Whether x and y broadcast only along axes declared size 1 in their types: what
    differentiation needs (gradients sum over statically broadcastable axes, as Theano's;
    run-time broadcasting of an axis of unknown size computes forward only)."""
    nd = max(x.val.ndim, y.val.ndim)
    for v in (x, y):
        shape = (1,) * (nd - v.val.ndim) + v.val.shape
        static = (1,) * (nd - v.val.ndim) + tuple(v.var.type.shape)
        other = y if v is x else x
        oshape = (1,) * (nd - other.val.ndim) + other.val.shape
        for n, s, o in zip(shape, static, oshape):
            if n == 1 and o != 1 and s != 1:
                return False
    return True


def apply_step(
    pool: list[Val], op: str, a: int, b: int, static_broadcast: bool = False
) -> Val | None:
    """The pool entry for ``op`` on operands chosen by ``a``/``b``, or None if it does not
    apply (keeps every random recipe valid)."""
    x = pool[-1 - a % len(pool)]  # a=0: the newest value, so chains grow deep
    nd = x.val.ndim
    with np.errstate(all="ignore"):
        if op in UNARY:
            g, f, limit = UNARY[op]
            if x.mag > limit or (op in ("sigmoid",) and not _float(x)):
                return None
            out = f(x.val)
            return Val(g(x.var), np.asarray(out), _mag(x, extra=[_absmax(out)]))
        if op in BINARY:
            cands = []
            for y in pool:
                try:
                    np.broadcast_shapes(x.val.shape, y.val.shape)
                except ValueError:
                    continue
                if static_broadcast and not _static_broadcast(x, y):
                    continue
                cands.append(y)
            y = cands[b % len(cands)]
            if (op == "mul" and x.mag * y.mag > 1e6) or (op == "div" and y.mag > 10):
                return None
            g, f = BINARY[op]
            out = np.asarray(f(x.val, y.val))
            return Val(g(x.var, y.var), out, _mag(x, y, extra=[_absmax(out)]))
        if op in ("sum", "max", "mean"):
            if nd == 0:
                return None
            axis = b % nd
            keep = bool((b // nd) % 2)
            if op == "max" and x.val.shape[axis] == 0:
                return None
            if op == "mean" and (x.val.shape[axis] == 0 or not _float(x)):
                return None
            g = {"sum": T.sum, "max": T.max, "mean": T.mean}[op]
            f = {"sum": np.sum, "max": np.max, "mean": np.mean}[op]
            out = np.asarray(f(x.val, axis=axis, keepdims=keep))
            m = _mag(x, extra=[_absmax(out)]) * (max(x.val.shape[axis], 1) if op == "sum" else 1)
            return Val(g(x.var, axis=axis, keepdims=keep), out, m)
        if op == "transpose":
            if nd < 2:
                return None
            perm = list(np.random.default_rng(b).permutation(nd))
            return Val(x.var.dimshuffle(*perm), x.val.transpose(perm), x.mag)
        if op == "expand":
            pos = b % (nd + 1)
            order = list(range(nd))
            order.insert(pos, "x")
            return Val(x.var.dimshuffle(*order), np.expand_dims(x.val, pos), x.mag)
        if op == "drop":
            ones = [i for i, s in enumerate(x.var.type.shape) if s == 1]
            if not ones:
                return None
            d = ones[b % len(ones)]
            order = [i for i in range(nd) if i != d]
            return Val(x.var.dimshuffle(*order), np.squeeze(x.val, axis=d), x.mag)
        if op in ("reverse", "step2"):
            if nd == 0:
                return None
            sl = slice(None, None, -1) if op == "reverse" else slice(None, None, 2)
            out = x.val[sl]
            if op == "step2" and out.shape[0] != x.val.shape[0] and x.var.type.shape[0] == 1:
                return None
            return Val(x.var[sl], out, x.mag)
        if op == "dot":
            if nd not in (1, 2) or not _float(x) or not hasattr(T, "dot"):
                return None
            k = x.val.shape[-1]
            cands = [y for y in pool if _float(y) and y.val.ndim in (1, 2)
                     and y.val.shape[0] == k and y.val.dtype == x.val.dtype]  # fmt: skip
            if not cands:
                return None
            y = cands[b % len(cands)]
            if x.mag * y.mag * max(k, 1) > 1e6:
                return None
            out = np.asarray(np.dot(x.val, y.val))
            return Val(T.dot(x.var, y.var), out, _mag(x, y, extra=[_absmax(out)]) * max(k, 1))
        if op == "cast":
            if not _float(x):
                return None
            dt = "float32" if x.val.dtype == np.float64 else "float64"
            return Val(T.cast(x.var, dt), x.val.astype(dt), x.mag)
    raise AssertionError(op)


# ------------------------------------------------------------------ recipes


@dataclass
class Recipe:
    seed: int
    inputs: list  # (dtype, shape, layout)
    steps: list  # (op, a, b)
    n_outputs: int


LAYOUTS = ("c", "strided", "reversed", "fortran")


@st.composite
def recipes(draw, ops=ALL_OPS, dtypes=("float64", "float32", "int64"), max_steps=12):
    ndim = draw(st.integers(0, 3))
    base = tuple(draw(st.sampled_from([1, 2, 3, 4, 0, 1, 2, 3])) for _ in range(ndim))
    n_in = draw(st.integers(1, 3))
    inputs = []
    for _ in range(n_in):
        k = draw(st.integers(0, ndim))
        shape = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else s
                      for s in base[ndim - k:])  # fmt: skip
        inputs.append((draw(st.sampled_from(dtypes)), shape, draw(st.sampled_from(LAYOUTS))))
    steps = draw(
        st.lists(
            st.tuples(st.sampled_from(ops), st.integers(0, 20), st.integers(0, 50)),
            min_size=min(4, max_steps),
            max_size=max_steps,
        )
    )
    return Recipe(draw(st.integers(0, 2**31)), inputs, steps, draw(st.integers(1, 2)))


def _layout(arr: np.ndarray, layout: str) -> np.ndarray:
    if arr.ndim == 0 or layout == "c":
        return arr
    if layout == "fortran":
        return np.asfortranarray(arr)
    if layout == "reversed":
        rev = (slice(None, None, -1),) * arr.ndim
        return np.ascontiguousarray(arr[rev])[rev]
    buf = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
    view = buf[..., ::2]
    view[...] = arr
    return view


def input_values(rec: Recipe) -> list[np.ndarray]:
    rng = np.random.default_rng(rec.seed)
    vals = []
    for dtype, shape, _layout_name in rec.inputs:
        if dtype.startswith("int"):
            vals.append(rng.integers(-4, 5, size=shape).astype(dtype))
        else:
            vals.append(rng.uniform(-3, 3, size=shape).astype(dtype))
    return vals


def build(rec: Recipe, variables=None, ops_ok=ALL_OPS, static_broadcast=False):
    """(input variables, output Vals) of ``rec``; ``variables`` overrides the inputs;
    ``static_broadcast`` pairs operands only where broadcasting is declared (gradients)."""
    vals = input_values(rec)
    if variables is None:
        variables = [
            T.tensor(dtype, shape=[1 if s == 1 else None for s in shape], name=f"in{k}")
            for k, (dtype, shape, _) in enumerate(rec.inputs)
        ]
    pool = [Val(v, x, max(_absmax(x), 1.0)) for v, x in zip(variables, vals)]
    for op, a, b in rec.steps:
        if op not in ops_ok:
            continue
        new = apply_step(pool, op, a, b, static_broadcast)
        if new is not None:
            pool.append(new)
    n_in = len(variables)
    outs = pool[n_in:][-rec.n_outputs :] or pool[-1:]
    return variables, outs


def _describe(outputs) -> str:
    try:
        from graphc.printing import debugprint

        return debugprint([o.var for o in outputs], file="str")
    except Exception:  # noqa: BLE001 - printing must not hide the real failure
        return "\n".join(str(o.var) for o in outputs)


def _tols(dtype, mag, float32_inside=False):
    if np.dtype(dtype).kind != "f":
        return 0.0, 0.0
    if np.dtype(dtype) == np.float32 or float32_inside:
        return 2e-3, 2e-4 * mag
    return 1e-7, 1e-9 * mag


def check_close(got, want: Val, label: str, graph: str, float32_inside=False) -> None:
    got = np.asarray(got)
    ref = want.val
    assert got.dtype == ref.dtype, f"{label}: dtype {got.dtype} != numpy {ref.dtype}\n{graph}"
    assert got.shape == ref.shape, f"{label}: shape {got.shape} != numpy {ref.shape}\n{graph}"
    rtol, atol = _tols(ref.dtype, want.mag, float32_inside)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, err_msg=f"{label}\n{graph}")


def _modes(with_c: bool):
    if not with_c:
        return {
            "py": Mode(linker="py", optimizer="None"),
            "FAST_COMPILE": "FAST_COMPILE",
            "DEBUG_MODE(py)": DebugMode(linker="py", check_preallocated_output=False),
        }
    return {
        "c|py": Mode(linker="c|py", optimizer="None"),
        "FAST_RUN": Mode(linker="c|py", optimizer="fast_run"),
        "DEBUG_MODE(c|py)": DebugMode(linker="c|py"),
    }


def run_recipe(rec: Recipe, with_c: bool) -> None:
    variables, outs = build(rec)
    graph = _describe(outs)
    args = [_layout(v, lay[2]) for v, lay in zip(input_values(rec), rec.inputs)]
    originals = [a.copy() for a in args]
    # a float64 result computed from float32 values carries float32 rounding, which numpy
    # itself does not reproduce exactly between its contiguous and strided loops
    f32 = any(d == "float32" for d, _, _ in rec.inputs) or any(s[0] == "cast" for s in rec.steps)
    for label, mode in _modes(with_c).items():
        f = graphc.function(variables, [o.var for o in outs], mode=mode, on_unused_input="ignore")
        try:
            got = f(*args)
        except Exception as e:
            raise AssertionError(f"{label} raised {type(e).__name__}: {e}\n{graph}") from e
        for k, (g, want) in enumerate(zip(got, outs)):
            check_close(g, want, f"{label} output {k}", graph, f32)
        for (i, g), (j, h) in itertools.combinations(enumerate([*got, *args]), 2):
            assert not np.shares_memory(g, h), f"{label}: arrays {i}, {j} share memory\n{graph}"
        for a, o in zip(args, originals):
            np.testing.assert_array_equal(a, o, err_msg=f"{label} modified an input\n{graph}")


def _fuzz(strategy, check, n):
    @settings(max_examples=n, deadline=None, derandomize=n <= 200,
              suppress_health_check=list(HealthCheck), database=None)  # fmt: skip
    @given(strategy)
    def run(rec):
        check(rec)

    run()


# ------------------------------------------------------------------ tests


def test_fuzz_python_modes_match_numpy(fuzz_examples):
    _fuzz(recipes(), lambda rec: run_recipe(rec, with_c=False), fuzz_examples)


@pytest.mark.skipif(not c_available(), reason="no C linker in this build")
def test_fuzz_c_modes_match_numpy(fuzz_examples):
    # every example compiles a new C module (~1 s): a quarter of the examples by default
    _fuzz(recipes(max_steps=6), lambda rec: run_recipe(rec, with_c=True),
          max(3, fuzz_examples // 4))  # fmt: skip


def _grad_check(rec: Recipe) -> None:
    rec = Recipe(rec.seed, [("float64", s, "c") for _, s, _ in rec.inputs], rec.steps, 1)
    vals = input_values(rec)
    _, outs = build(rec, ops_ok=SMOOTH_OPS, static_broadcast=True)
    if not outs or outs[0].val.dtype.kind != "f" or outs[0].mag > 1e4:
        return

    def fn(*variables):
        _, o = build(rec, list(variables), ops_ok=SMOOTH_OPS, static_broadcast=True)
        return o[0].var

    try:
        graphc.gradient.verify_grad(fn, vals, n_tests=1, rng=rec.seed)
    except Exception as e:
        raise AssertionError(f"{type(e).__name__}: {e}\n{_describe(outs)}") from e


def test_fuzz_gradients_match_finite_differences(fuzz_examples):
    _fuzz(recipes(ops=SMOOTH_OPS, dtypes=("float64",), max_steps=6), _grad_check,
          max(5, fuzz_examples // 2))  # fmt: skip


def test_python_scalar_constant_is_0d():
    """Regression: constant() once turned 0-d values into shape (1,) (np.ascontiguousarray)."""
    x = T.scalar("x")
    assert T.constant(1.0).ndim == 0
    assert (x + 1).ndim == 0


def test_recipe_builds_each_op():
    """Every op of the table applies to some pool (the fuzzer does not silently skip one)."""
    rec = Recipe(0, [("float64", (2, 1, 3), "c"), ("float64", (3, 2), "c")], [], 1)
    x, y = build(rec)[0]
    rng = np.random.default_rng(0)
    pool = [Val(x, rng.normal(size=(2, 1, 3)), 3.0), Val(y, rng.normal(size=(3, 2)), 3.0)]
    pool.append(Val(T.vector("z"), rng.normal(size=2), 3.0))
    for op in ALL_OPS:
        got = [apply_step(pool, op, a, b) for a in range(3) for b in range(4)]
        assert any(g is not None for g in got), op
