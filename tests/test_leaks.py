"""10^4 calls of compiled functions (Python performs and generated C thunks, through both
VMs) leave the reference counts of inputs, outputs and shared values flat, and the process
RSS flat within a tolerance; so do 10^3 failing calls."""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.mode import Mode
from graphc.linker import c_available

N_CALLS = 10_000
RSS_TOLERANCE = 4 * 2**20  # a leaked 1 KiB array per call would grow RSS by ~10 MiB
PAGE = os.sysconf("SC_PAGE_SIZE")

MODES = [("py", "cvm"), ("py", "py")]
if c_available():
    MODES += [("c|py", "cvm"), ("c|py", "py"), ("c|py_nogc", "cvm")]


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _function(linker, vm):
    x, v = T.matrix("x"), T.vector("v")
    s = graphc.shared(np.zeros(16), name="s")
    out = [T.exp(x) * v + x.sum(axis=0), T.max(x, axis=1), x.T]
    return graphc.function([x, v], out, updates=[(s, s + v)], mode=Mode(linker=linker, vm=vm)), s


@pytest.mark.parametrize("linker, vm", MODES, ids=[f"{a}-{b}" for a, b in MODES])
def test_many_calls_keep_refcounts_and_rss_flat(linker, vm):
    f, s = _function(linker, vm)
    x = np.random.default_rng(0).normal(size=(8, 16))
    v = np.ones(16)
    for _ in range(500):  # warm up allocator pools and caches
        outs = f(x, v)
    gc.collect()
    out_refs = [sys.getrefcount(o) for o in outs]
    del outs
    rx, rv = sys.getrefcount(x), sys.getrefcount(v)
    r_before = rss()
    n_objects = len(gc.get_objects())
    for _ in range(N_CALLS):
        outs = f(x, v)
    gc.collect()
    grown = rss() - r_before
    assert sys.getrefcount(x) == rx and sys.getrefcount(v) == rv
    assert [sys.getrefcount(o) for o in outs] == out_refs
    assert sys.getrefcount(s.get_value(borrow=True)) <= 3
    assert len(gc.get_objects()) - n_objects < 100
    assert grown < RSS_TOLERANCE, f"RSS grew by {grown / 2**20:.1f} MiB over {N_CALLS} calls"
    np.testing.assert_allclose(s.get_value(), N_CALLS + 500)


@pytest.mark.parametrize("linker, vm", MODES, ids=[f"{a}-{b}" for a, b in MODES])
def test_failing_calls_do_not_leak(linker, vm):
    f, s = _function(linker, vm)
    x = np.ones((8, 16))
    bad_v = np.ones(5)  # does not broadcast: the node raises
    good_v = np.ones(16)
    f(x, good_v)
    gc.collect()
    rx, rv = sys.getrefcount(x), sys.getrefcount(bad_v)
    value = s.get_value(borrow=True)
    r_before = rss()
    for _ in range(N_CALLS // 10):
        with pytest.raises(ValueError):
            f(x, bad_v)
    gc.collect()
    assert sys.getrefcount(x) == rx and sys.getrefcount(bad_v) == rv
    assert s.get_value(borrow=True) is value
    assert rss() - r_before < RSS_TOLERANCE
