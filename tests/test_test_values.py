"""Theano's test values (``compute_test_value``, Theano's "Debugging: FAQ", "Using Test
Values"): nodes are computed as they are built from their inputs' test values, constants
and shared values; a missing value is ignored, warned about, raised or opens pdb; a bad
computation raises on the line that builds the node, naming it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.graph.basic import get_debug_values
from graphc.printing import Print

flags = graphc.config.change_flags


def test_the_debug_faq_example_fails_on_the_dot_line_naming_the_node():
    rng = np.random.default_rng(0)
    with flags(compute_test_value="raise"):
        W1 = graphc.shared(rng.random((2, 10, 10)), "W1")
        x = T.dmatrix("x")
        x.tag.test_value = rng.random((5, 10))
        func_of_W1 = W1.dimshuffle(2, 0, 1).flatten(2).T
        np.testing.assert_array_equal(
            func_of_W1.tag.test_value, W1.get_value().transpose(2, 0, 1).reshape(10, 20).T
        )
        with pytest.raises(ValueError) as err:
            T.dot(x, func_of_W1)
    with pytest.raises(ValueError):  # numpy refuses the same shapes
        np.dot(x.tag.test_value, func_of_W1.tag.test_value)
    assert "dot(x, " in str(err.value) and "test value" in str(err.value)


def test_intermediate_values_match_numpy_and_constants_and_shared_count():
    rng = np.random.default_rng(1)
    xv, wv = rng.random((3, 4)), rng.random((4, 2))
    with flags(compute_test_value="raise"):
        x = T.dmatrix("x")
        x.tag.test_value = xv
        W = graphc.shared(wv, "W")
        y = T.tanh(T.dot(x, W)) * 2.0 + 1.0
        s = y.sum(axis=0)
    np.testing.assert_allclose(y.tag.test_value, np.tanh(xv @ wv) * 2.0 + 1.0, rtol=1e-15)
    np.testing.assert_allclose(s.tag.test_value, (np.tanh(xv @ wv) * 2.0 + 1.0).sum(axis=0))
    np.testing.assert_allclose(y.get_test_value(), y.tag.test_value)


def test_off_computes_nothing():
    x = T.dvector("x")
    x.tag.test_value = np.ones(3)
    assert "test_value" not in (x * 2).tag


def test_a_missing_value_is_ignored_warned_raised_or_debugged(monkeypatch):
    x = T.dvector("x")  # no test value
    with flags(compute_test_value="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "test_value" not in (x + 1).tag
    with flags(compute_test_value="warn"), pytest.warns(UserWarning, match="input 0 \\(x\\)"):
        y = x + 1
    assert "test_value" not in y.tag
    with flags(compute_test_value="raise"), pytest.raises(ValueError, match="missing default"):
        x + 1
    calls = []
    monkeypatch.setattr("pdb.set_trace", lambda: calls.append(1))
    with flags(compute_test_value="pdb"):
        x + 1
    assert calls == [1]


def test_a_test_value_of_the_wrong_shape_is_refused_naming_the_variable():
    x = T.dvector("x")
    x.tag.test_value = np.ones((2, 2))
    with flags(compute_test_value="raise"), pytest.raises(TypeError, match="test value of x"):
        x + 1


def test_get_debug_values():
    x, y = T.dvector("x"), T.dscalar("y")
    x.tag.test_value, y.tag.test_value = np.arange(2.0), 3.0
    assert get_debug_values(x) == []  # off
    with flags(compute_test_value="warn"):
        (vx,) = get_debug_values(x)
        np.testing.assert_array_equal(vx, [0.0, 1.0])
        ((a, b),) = get_debug_values(x, y)
        assert b == 3.0
        with pytest.warns(UserWarning, match="Argument 0"):
            assert get_debug_values(T.dvector()) == []
    with flags(compute_test_value="raise"), pytest.raises(AttributeError, match="'z'"):
        get_debug_values(T.dvector("z"))


def test_print_runs_when_built_and_print_test_value_shows_values(capsys):
    x = T.dvector("x")
    x.tag.test_value = np.array([1.0, 2.0])
    with flags(compute_test_value="warn"):
        p = Print("built")(x) * 5
    assert "built __str__ = [1. 2.]" in capsys.readouterr().out
    np.testing.assert_array_equal(p.tag.test_value, [5.0, 10.0])
    assert repr(p) == str(p)
    with flags(print_test_value=True):
        assert repr(p) == f"{p}\n{np.array([5.0, 10.0])!r}"


def test_scan_steps_see_rows_of_their_inputs_test_values():
    xv = np.array([1.0, 2.0, 4.0])
    with flags(compute_test_value="raise"):
        x = T.dvector("x")
        x.tag.test_value = xv
        seen = []

        def step(v, acc):
            seen.append((v.tag.test_value, acc.tag.test_value))
            return acc + v

        out, _ = graphc.scan(step, sequences=x, outputs_info=T.zeros(()))
    assert seen == [(1.0, 0.0)]  # the first row and the initial state
    np.testing.assert_array_equal(out.tag.test_value, np.cumsum(xv))
