"""Coordinating numpy's and scipy's BLAS thread pools: the policy, the flag, and (with
threadpoolctl installed) the pools graphc actually changes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import threadpoolctl

import graphc
import graphc.tensor as T
from graphc.linker import blas_threads as bt


def test_auto_splits_the_cores_only_when_the_pools_oversubscribe():
    assert bt.plan_threads([2, 2], 2, "auto") == [1, 1]
    assert bt.plan_threads([8, 8], 8, "auto") == [4, 4]
    assert bt.plan_threads([1, 3], 2, "auto") == [1, 1]
    assert bt.plan_threads([1, 1], 2, "auto") is None  # two threads on two cores
    assert bt.plan_threads([4], 2, "auto") is None  # one pool: its own business
    assert bt.plan_threads([4, 4, 4], 2, "auto") == [1, 1, 1]  # at least one thread each


def test_explicit_counts_and_off():
    assert bt.plan_threads([2, 4], 8, "3") == [3, 3]
    assert bt.plan_threads([2, 4], 8, "off") is None
    assert bt.plan_threads([], 8, "2") is None
    with pytest.raises(ValueError):
        bt.plan_threads([2], 2, "0")
    with pytest.raises(ValueError):
        bt.plan_threads([2], 2, "many")


def test_flag_values_are_checked():
    old = graphc.config.blas_threads
    try:
        graphc.config.blas_threads = "2"
        assert graphc.config.blas_threads == "2"
        for bad in ("0", "-1", "lots"):
            with pytest.raises(ValueError):
                graphc.config.blas_threads = bad
    finally:
        graphc.config.blas_threads = old


def test_without_threadpoolctl_nothing_changes_and_a_warning_says_why(monkeypatch):
    monkeypatch.setattr(bt, "_controller", lambda: None)
    bt._reset_for_tests()
    old = graphc.config.blas_threads
    try:
        with pytest.warns(RuntimeWarning, match="threadpoolctl"):
            assert bt.set_blas_threads(1) == {}
        assert bt.pools() == []
        bt._reset_for_tests()
        graphc.config.blas_threads = "auto"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert bt.coordinate() == {}  # auto stays silent
        bt._reset_for_tests()
        graphc.config.blas_threads = "2"
        with pytest.warns(RuntimeWarning, match="OPENBLAS_NUM_THREADS"):
            assert bt.coordinate() == {}  # an explicit count cannot be honoured: say so
    finally:
        graphc.config.blas_threads = old
        bt._reset_for_tests()


def test_linking_a_blas_node_applies_the_flag_once():
    import scipy.linalg  # noqa: F401 - scipy's OpenBLAS is one of the pools

    before = {p["filepath"]: p["num_threads"] for p in bt.pools()}
    old = graphc.config.blas_threads
    bt._reset_for_tests()
    try:
        graphc.config.blas_threads = "1"
        x = T.dmatrix("x")
        f = graphc.function([x], T.dot(x, x.T), mode=graphc.Mode(linker="c|py"))
        now = bt.pools()
        assert now and all(p["num_threads"] == 1 for p in now)
        np.testing.assert_allclose(f(np.eye(3)), np.eye(3))
        threadpoolctl.threadpool_limits(2, user_api="blas")  # the user changes it later
        mine = [p["num_threads"] for p in bt.pools()]
        graphc.function([x], T.dot(x.T, x), mode=graphc.Mode(linker="c|py"))
        assert [p["num_threads"] for p in bt.pools()] == mine  # and graphc leaves it
    finally:
        graphc.config.blas_threads = old
        for path, n in before.items():
            for lib in threadpoolctl.ThreadpoolController().lib_controllers:
                if lib.filepath == path:
                    lib.set_num_threads(n)
        bt._reset_for_tests()
