"""Fixtures of the loop tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import graphc.opt as opt_mod
from graphc.compile import maker as maker_mod
from graphc.linker import base as linker_base
from graphc.linker import cache as cache_mod


@pytest.fixture
def compiles(monkeypatch) -> Callable[[], list[str]]:
    """Every compile started while the test's calls run: FunctionMakers, rewrites, links
    and C module loads. Set up after the functions are built, so it counts calls only."""
    seen: list[str] = []

    def counted(owner, name):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            seen.append(name)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    def start() -> list[str]:
        counted(maker_mod.FunctionMaker, "__init__")
        counted(maker_mod.FunctionMaker, "link")
        counted(opt_mod, "rewrite_graph")
        counted(maker_mod.StepCompiler, "compile_step")
        counted(linker_base, "link")
        counted(cache_mod.CompileCache, "load")
        return seen

    return start
