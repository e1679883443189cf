"""Outputs compiled twice, with the C linker and with the Python linker, for the tests that
check C thunks against the Python implementations."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

import graphc

C = graphc.Mode(linker="c|py", optimizer=None)
PY = graphc.Mode(linker="py", optimizer=None)


class CAndPy:
    """``c`` and ``py``: the same inputs and outputs as a C-linked and a Python function."""

    def __init__(self, inputs: list, outputs: list):
        self.inputs = inputs
        self.outputs = outputs
        self.c = graphc.function(inputs, outputs, mode=C)
        self.py = graphc.function(inputs, outputs, mode=PY)


def assert_all_c(twins: dict[str, CAndPy]) -> None:
    """Every node of every C-linked function runs a C thunk."""
    for f in twins.values():
        assert all(impl.is_c for impl in f.c.linked.impls), f.c.linked.schedule


def twins_fixture(make: Callable[[str], CAndPy], dtypes: Iterable[str]):
    """A module-scoped fixture: ``{dtype: make(dtype)}``, compiled once per test module."""

    @pytest.fixture(scope="module")
    def twins() -> dict[str, CAndPy]:
        return {dt: make(dt) for dt in dtypes}

    return twins
