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
