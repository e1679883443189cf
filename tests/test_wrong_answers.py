"""Regression tests for results that were once wrong without any error: each case is checked
against numpy (and across linkers) and must raise a clear error where numpy does."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.linker import c_available

PY = Mode(linker="py")
CPY = Mode(linker="c|py")
LINKERS = [PY] + ([CPY] if c_available() else [])


# -- trusted C thunks handed arbitrary Python objects -------------------------------------


@pytest.mark.parametrize(
    "bad", [3, np.int64(1), [1.0, 2.0], "x", None, np.ones(3, dtype="float32"), np.ones((2, 2))]
)
def test_trusted_c_thunks_refuse_non_arrays(bad):
    x, i = T.vector("x"), T.lscalar("i")
    f = graphc.function([x, i], x[i], mode=CPY, trust_input=True)
    assert f(np.arange(3.0), np.array(1)) == 1.0
    with pytest.raises(TypeError, match="input"):
        f(bad, np.array(1))
    with pytest.raises(TypeError, match="input"):
        f(np.arange(3.0), bad)
