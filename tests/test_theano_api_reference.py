"""The served ``theano`` modules against real Theano 0.8.2's public API.

tests/data/theano_api.json was written by scripts/theano_reference/api.py under Theano 0.8.2
(``scripts/theano_reference.sh api tests/data/theano_api.json``): per module, every public
name, its kind and its positional parameters. Every name must be served, or listed in
graphc.compat.theano.missing (then it raises NotImplementedError naming it), and every
served function or class must take Theano's positional arguments in Theano's order.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import graphc
import graphc.compat.theano as hook
from graphc.compat.theano.missing import MISSING, TheanoNameMissing

API = json.loads((Path(__file__).parent / "data" / "theano_api.json").read_text())


def _api_script():
    """scripts/theano_reference/api.py, which wrote the reference: graphc's parameters are
    read with the same function as Theano's were."""
    path = Path(__file__).parents[1] / "scripts" / "theano_reference" / "api.py"
    spec = importlib.util.spec_from_file_location("theano_reference_api", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_positional = _api_script().positional
MODULES = [m for m in API if not m.startswith("_")]

# (Theano's parameter name, graphc's) at the same position, with the same meaning
RENAMED = {
    ("l", "a"), ("r", "b"), ("x", "a"), ("y", "b"), ("c", "x"), ("t", "x"), ("model", "x"),
    ("input", "x"), ("n_ones", "n"), ("orig_v", "v"), ("output", "outputs"),
    ("input_broadcastable", "input_ndim"),  # DimShuffle takes the flags too
    ("broadcastable", "shape"),  # TensorType's shape takes Theano's broadcastable flags
}  # fmt: skip

# Served names whose later positional parameters still differ from Theano's (each entry:
# the first position that differs). Positional calls up to there mean what they did.
KNOWN_GAPS = {
    ("theano", "FunctionGraph"): 4,  # update_mapping
    ("theano", "FunctionMaker"): 2,  # graphc's compile plan, not Theano's internals
    ("theano", "clone"): 2,  # strict, share_inputs, copy_inputs
    ("theano", "function"): 5,  # no_default_updates, accept_inplace before name
    ("theano.tensor", "AdvancedIncSubtensor"): 0,  # graphc's takes the index pattern first
    ("theano.tensor", "AdvancedSubtensor1"): 0,  # sparse_grad
    ("theano.tensor", "Elemwise"): 2,  # name, nfunc_spec, openmp
    ("theano.tensor", "IncSubtensor"): 3,  # destroyhandler_tolerate_aliased
    ("theano.tensor", "Reshape"): 1,  # name
    ("theano.tensor", "TensorType"): 2,  # name third
    ("theano.tensor", "bincount"): 3,  # assert_nonneg
    ("theano.tensor", "get_scalar_constant_value"): 2,  # only_process_constants
    ("theano.tensor", "inc_subtensor"): 4,  # tolerate_inplace_aliasing
    ("theano.tensor", "reshape"): 3,  # name
    ("theano.tensor", "set_subtensor"): 3,  # tolerate_inplace_aliasing
    ("theano.tensor", "take"): 3,  # mode
}


@pytest.fixture
def theano():
    hook.uninstall()
    hook.install()
    try:
        yield importlib.import_module("theano")
    finally:
        hook.uninstall()


def _first_difference(theirs: list[str], ours: list[str]) -> int | None:
    """The first position where a Theano positional call would bind differently."""
    for i, name in enumerate(theirs):
        if name == "*" or (i < len(ours) and ours[i] == "*"):
            return None
        if i >= len(ours) or (ours[i] != name and (name, ours[i]) not in RENAMED):
            return i
    return None


def test_the_reference_is_theano_0_8_2():
    assert API["_version"] == "0.8.2" and len(API["theano.tensor"]) > 400


@pytest.mark.parametrize("module", MODULES)
def test_every_theano_name_is_served_or_listed_missing(theano, module):
    served = importlib.import_module(module)
    absent, stale = [], []
    for name in API[module]:
        listed = name in MISSING.get(module, {})
        try:
            value = getattr(served, name)
        except TheanoNameMissing:
            assert listed
            continue
        except AttributeError:
            absent.append(name)
            continue
        is_stub = inspect.isclass(value) and value.__module__ == module
        if listed != is_stub:
            stale.append(name)
    assert absent == [] and stale == []
    assert set(MISSING.get(module, {})) <= set(API[module])


@pytest.mark.parametrize("module", MODULES)
def test_missing_names_raise_not_implemented_naming_them(theano, module):
    served = importlib.import_module(module)
    for name, kind in MISSING.get(module, {}).items():
        with pytest.raises(NotImplementedError, match=rf"{module}\.{name} \(Theano 0.8.2\)"):
            getattr(served, name)() if kind == "call" else getattr(served, name)
    with pytest.raises(AttributeError):
        served.no_such_theano_name  # noqa: B018


@pytest.mark.parametrize("module", MODULES)
def test_positional_parameters_follow_theanos_order(theano, module):
    served = importlib.import_module(module)
    differ = {}
    for name, info in API[module].items():
        if info["kind"] not in ("function", "class") or info["positional"] is None:
            continue
        if name in MISSING.get(module, {}):
            continue
        ours = _positional(getattr(served, name))
        if ours is None:
            continue
        at = _first_difference(info["positional"], ours)
        if at is not None:
            differ[name] = at
    expected = {n: at for (m, n), at in KNOWN_GAPS.items() if m == module}
    assert differ == expected


def test_reductions_take_dtype_before_keepdims(theano):
    import theano.tensor as T

    x = T.fmatrix()
    s, p = T.sum(x, 0, "float64"), T.prod(x, None, "float64", True)
    m = T.mean(x, 1, None, False, True)
    assert (s.dtype, s.ndim, p.dtype, p.ndim, m.ndim) == ("float64", 1, "float64", 2, 2)
    xv = np.arange(6, dtype="float32").reshape(2, 3) + 1
    f = graphc.function([x], [s, p, m])
    for got, want in zip(f(xv), [xv.sum(0), xv.prod(keepdims=True), xv.mean(1, keepdims=True)]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_theano_positional_calls(theano):
    import theano.tensor as T

    x = T.tensor3()
    assert T.flatten(x, 2).ndim == 2 and graphc.tensor.flatten(x, 2).ndim == 2
    c = T.constant(1.5, None, 2)
    assert c.ndim == 2 and c.broadcastable == (True, True)
    with pytest.raises(ValueError):
        T.constant(np.zeros((2, 2)), None, 1)
    mx, am = T.max_and_argmax(T.dmatrix(), 1, True)
    assert mx.ndim == am.ndim == 2
    d = T.DimShuffle((False, True), (0,))
    assert d.input_ndim == 2
    n = T.dscalar()
    f = theano.function([theano.In(n, "n", 2.0)], n * 3)
    assert f() == 6.0 and f(n=1.0) == 3.0
    v = np.zeros(2)
    w = theano.shared(v, "w", True)  # strict third: the value is still copied
    v[0] = 5.0
    assert w.name == "w" and w.get_value()[0] == 0.0
    assert graphc.shared(v, borrow=True).get_value(borrow=True) is v


def test_split_matches_numpy(theano):
    import theano.tensor as T

    x, sizes = T.dmatrix(), T.lvector()
    xv = np.arange(20.0).reshape(4, 5)
    f = graphc.function([x, sizes], T.split(x, sizes, 3, axis=1))
    for got, want in zip(f(xv, np.array([1, 3, 1])), np.split(xv, [1, 4], axis=1)):
        np.testing.assert_array_equal(got, want)
    g = graphc.function([x], graphc.grad(T.split(x, [3, 1], 2)[0].sum() * 2, x))
    np.testing.assert_array_equal(g(xv), np.r_[np.full((3, 5), 2.0), np.zeros((1, 5))])
    with pytest.raises(ValueError):
        T.split(T.tensor("float64", shape=(4, 5)), [1, 2], 2)


@pytest.mark.parametrize("grid", ["mgrid", "ogrid"])
def test_mgrid_and_ogrid_match_numpy(theano, grid):
    import theano.tensor as T

    n = T.lscalar()
    f = graphc.function([n], getattr(T, grid)[0:n, 1:7:2, -2:1])
    want = getattr(np, grid)[0:4, 1:7:2, -2:1]
    got = f(4)
    assert len(got) == len(want) == 3
    for g, w in zip(got, want):
        assert g.dtype == np.int64 and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
