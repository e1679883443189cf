"""Every step function (nested loops too) is compiled with the enclosing function, before
its first call: no call compiles anything (counted by FunctionMaker constructions)."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile import maker as maker_mod
from graphc.profile import ProfileStats


@pytest.fixture
def makers(monkeypatch) -> list[str]:
    """The names of the FunctionMakers constructed while the test runs."""
    built: list[str] = []
    original = maker_mod.FunctionMaker.__init__

    def counting(self, inputs, outputs, plan, options=None):
        options = options or maker_mod.CompileOptions()
        built.append(str(options.name))
        original(self, inputs, outputs, plan, options)

    monkeypatch.setattr(maker_mod.FunctionMaker, "__init__", counting)
    return built


def _nested(profile):
    x = T.dtensor3("x")

    def outer_step(m, acc):
        rows, _ = graphc.scan(lambda r, h: T.tanh(h + r), sequences=m, outputs_info=acc)
        return rows[-1]

    hs, _ = graphc.scan(outer_step, sequences=x, outputs_info=T.zeros((3,)))
    return graphc.function([x], hs[-1].sum(), profile=profile, name="nested")


@pytest.mark.parametrize("profile", [False, True])
def test_a_call_compiles_nothing(makers, profile):
    f = _nested(ProfileStats(atexit_print=False) if profile else False)
    assert len(makers) == 3  # the function, its loop's step, that step's loop's step
    before = list(makers)
    for n in (4, 0, 2):  # a loop of no step too (its output shapes from a trial step)
        f(np.ones((n, 5, 3)))
    assert makers == before


def test_the_counter_sees_a_compile(makers):
    x = T.dvector("x")
    graphc.function([x], x * 2)
    assert len(makers) == 1


def test_debug_mode_compiles_its_reference_steps_with_the_function(compiles):
    """DEBUG_MODE runs each loop node's reference (and the unoptimized graph's loops, to
    check the rewrites): their steps are compiled when the function is built."""
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    hs, _ = graphc.scan(lambda r, h: T.tanh(h + r * 2.0), sequences=x, outputs_info=h0)
    ys, _ = graphc.scan(lambda r: r[: x.shape[0]] * x.sum(), sequences=x)
    f = graphc.function([x, h0], [hs, ys, hs.sum() * 1.0], mode="DEBUG_MODE")
    counted = compiles()
    for n in (3, 0, 2):
        xv = np.arange(n * 4.0).reshape(n, 4) / 10
        got_hs, got_ys, _ = f(xv, np.ones(4))
        want, h = [], np.ones(4)
        for r in xv:
            h = np.tanh(h + r * 2.0)
            want.append(h)
        np.testing.assert_allclose(got_hs, np.array(want).reshape(n, 4))
        assert got_ys.shape == (n, min(n, 4))
    assert counted == []
