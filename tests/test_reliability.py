"""Reliability cases that are neither numerics nor threads: pickled profiled functions and
DEBUG_MODE's check of every ``perform`` under input/output aliasing."""

from __future__ import annotations

import pickle

import numpy as np

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode


def test_pickled_profiled_function_stays_profiled():
    x = T.vector("x")
    f = graphc.function([x], T.exp(x) * 2, mode=Mode(linker="py"), profile=True)
    f(np.ones(3))
    g = pickle.loads(pickle.dumps(f))
    assert g.profile is not None
    np.testing.assert_allclose(g(np.ones(3)), np.exp(np.ones(3)) * 2)
    rec = g.profile.functions[-1]
    rec.refresh()
    assert rec.calls == 1 and rec.name == f.profile.functions[-1].name
    h = pickle.loads(pickle.dumps(graphc.function([x], x * 2, mode=Mode(linker="py"))))
    assert h.profile is None
