"""The ``cxx`` flag names the C compiler command, as Theano's did; set empty, nothing is
compiled and functions run in Python, with one warning."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker import clinker
from graphc.linker.compiler import compiler_argv


@pytest.fixture
def fresh_probe():
    clinker.reset_available()
    yield
    clinker.reset_available()


def test_unset_cxx_means_cc_or_dollar_cc(monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    assert not graphc.config.is_set("cxx")
    assert compiler_argv() == ("cc",)
    monkeypatch.setenv("CC", "gcc -O1")
    assert compiler_argv() == ("gcc", "-O1")


def test_cxx_is_the_compiler_command(monkeypatch, fresh_probe, tmp_path):
    monkeypatch.setenv("CC", "/nonexistent/cc")  # the flag wins over $CC
    real = shutil.which("cc") or shutil.which("gcc")
    assert real is not None
    x = T.dvector("x")
    with graphc.config.change_flags(cxx=f"{real} -O1"):
        assert compiler_argv() == (real, "-O1")
        f = graphc.function([x], x * 2.0 + 0.5, mode=graphc.Mode(linker="c|py"))
    assert any(impl.is_c for impl in f.linked.impls)
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.5, 2.5, 4.5])
    clinker.reset_available()
    with graphc.config.change_flags(cxx="/nonexistent/cxx"):
        with pytest.warns(RuntimeWarning, match="/nonexistent/cxx"):
            g = graphc.function([x], x * 3.0, mode=graphc.Mode(linker="c|py"))
    assert not any(impl.is_c for impl in g.linked.impls)


def test_empty_cxx_means_no_c_and_one_warning(fresh_probe):
    from graphc.compile import mode as mode_mod

    mode_mod._warned.clear()
    x = T.dvector("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with graphc.config.change_flags(cxx=""):
            fs = [graphc.function([x], x * k + 1.0) for k in (2.0, 3.0)]
    assert [f.maker.linker.name for f in fs] == ["py", "py"]
    assert not any(impl.is_c for f in fs for impl in f.linked.impls)
    relevant = [w for w in caught if "cxx is empty" in str(w.message)]
    assert len(relevant) == 1
    np.testing.assert_array_equal(fs[1](np.ones(2)), [4.0, 4.0])
