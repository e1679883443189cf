"""Uniform samples lie in [low, high) in every dtype and mode, also where rounding would give
``high``; ``low > high`` samples (high, low] (``low + (high - low) * u``, as Theano's
numpy and MRG samplers do) in every mode; ``low == high`` gives ``low``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
import graphc.tensor as T
from graphc import function
from graphc.compile.mrg_randomstreams import MRG_RandomStreams
from graphc.tensor.random import mrg31k3p
from graphc.tensor.random.utils import RandomStream
from graphc.tensor.shared_randomstreams import RandomStreams

PY = graphc.Mode(linker="py", optimizer=None)
CPY = graphc.Mode(linker="c|py", optimizer="fast_run")
MODES = [PY, CPY, "FAST_COMPILE", "FAST_RUN"]


def _uniform(cls, size, low, high, dtype):
    s = cls(4)
    if cls is RandomStream:
        return s.uniform(low, high, size=size, dtype=dtype)
    return s.uniform(size, low, high, dtype=dtype)


CLASSES = [RandomStreams, RandomStream, MRG_RandomStreams]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", [PY, CPY])
def test_an_interval_one_step_wide_gives_only_low(cls, dtype, mode):
    """[1, next float after 1) holds only 1; about half of the draws round to high."""
    high = float(np.nextafter(np.ones(1, dtype=dtype), 2)[0])
    u = function([], _uniform(cls, (3000,), 1.0, high, dtype), mode=mode)()
    assert u.dtype == dtype
    np.testing.assert_array_equal(u, np.ones(3000, dtype=dtype))
    # the same interval reversed: (high, low] also holds one value, the new low
    r = function([], _uniform(cls, (3000,), high, 1.0, dtype), mode=mode)()
    np.testing.assert_array_equal(r, np.full(3000, high, dtype=dtype))


def _worst_state():
    """An MRG state whose next draw is the largest raw value, M1: both components step to 0."""
    return np.array([[1, 0, 0, 0, 1, 0]], dtype=np.int32)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mrg_largest_draw_stays_below_one_and_below_high(dtype):
    low, high = T.scalar("low", dtype=dtype), T.scalar("high", dtype=dtype)
    s = MRG_RandomStreams(1)
    u = s.uniform((1,), low, high, dtype=dtype, nstreams=1)
    f = function([low, high], u, mode=PY)
    state = s.state_updates[0][0]
    for lo, hi in [(0.0, 1.0), (0.5, 1.5), (1.0, 2.0), (-3.0, 7.0), (2.0, -1.0)]:
        state.set_value(_worst_state())
        v = f(lo, hi)[0]
        big = np.float64(mrg31k3p.to_unit(np.array([mrg31k3p.M1]), dtype)[0])
        assert big < 1.0
        assert (lo <= v < hi) if lo < hi else (hi < v <= lo), (lo, hi, v)
    # 0.5 + 0.99999994 rounds to 1.5 in float32: that draw is moved one step down
    if dtype == "float32":
        state.set_value(_worst_state())
        assert f(0.5, 1.5)[0] == np.nextafter(np.float32(1.5), np.float32(0))


def test_mrg_normalisations_stay_inside_zero_one_for_every_raw_value_class():
    """float16 reads the low 15 bits: all 32768 classes; float32 and float64 are monotone in
    the raw value, so the largest raw values are the worst case."""
    raw = np.arange(1, 2**15 + 1, dtype=np.int64) + (2**31 - 2**15 - 1)
    for dtype in ("float16", "float32", "float64"):
        u = mrg31k3p.to_unit(raw, dtype)
        assert u.dtype == dtype and (u > 0).all() and (u < 1).all(), dtype
    assert mrg31k3p.to_unit(np.array([1]), "float32")[0] > 0


@pytest.mark.parametrize("cls", CLASSES)
def test_low_above_high_is_one_behaviour_in_every_mode(cls):
    outs = []
    for mode in MODES:
        u = function([], _uniform(cls, (500,), 3.0, -2.0, "float64"), mode=mode)()
        assert ((u > -2.0) & (u <= 3.0)).all() and u.min() < 0 < u.max()
        outs.append(u)
    for u in outs[1:]:
        np.testing.assert_array_equal(u, outs[0])


@pytest.mark.parametrize("cls", CLASSES)
def test_low_equal_high_gives_low(cls):
    u = function([], _uniform(cls, (50,), 2.5, 2.5, "float32"), mode=CPY)()
    np.testing.assert_array_equal(u, np.full(50, 2.5, dtype="float32"))


@pytest.mark.fuzz
def test_fuzz_uniform_bounds_every_sampler(fuzz_examples):
    """Random intervals (near-empty, reversed, wide, tiny) in float32 and float64: samples
    from every stream class under py and c|py stay in [low, high) (or (high, low])."""
    funcs = []
    for cls in CLASSES:
        for dtype in ("float32", "float64"):
            lo, hi = T.dscalar("lo"), T.dscalar("hi")
            for mode in (PY, CPY):
                funcs.append((dtype, function([lo, hi], _uniform(cls, (400,), lo, hi, dtype),
                                              mode=mode)))  # fmt: skip
    finite = st.floats(-1e6, 1e6, allow_nan=False, width=32)

    quiet = list(HealthCheck)

    @settings(max_examples=fuzz_examples, deadline=None, database=None,
              derandomize=fuzz_examples <= 200, suppress_health_check=quiet)  # fmt: skip
    @given(low=finite, steps=st.integers(-3, 3), width=st.sampled_from([0.0, 1e-3, 1.0, 1e5]))
    def check(low, steps, width):
        for dtype, f in funcs:
            lo = np.asarray(low, dtype=dtype)
            hi = lo
            for _ in range(abs(steps)):
                hi = np.nextafter(hi, np.asarray(np.sign(steps) * np.inf, dtype=dtype))
            hi = hi + np.asarray(width, dtype=dtype)
            v = f(float(lo), float(hi))
            if lo < hi:
                assert ((v >= lo) & (v < hi)).all(), (dtype, lo, hi, v.max())
            elif lo > hi:
                assert ((v > hi) & (v <= lo)).all(), (dtype, lo, hi, v.min())
            else:
                assert (v == lo).all()

    check()
