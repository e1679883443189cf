"""MRG_RandomStreams: Theano's signatures and distributions at Theano's import path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc import function
from graphc.sandbox.rng_mrg import MRG_RandomStreams

PY = graphc.Mode(linker="py", optimizer=None)


def test_uniform_and_normal_use_float_x_and_are_reproducible():
    def run():
        s = MRG_RandomStreams(12345)
        f = function([], [s.uniform((1000,)), s.normal((1000,), avg=2.0, std=0.5)], mode=PY)
        return f()

    (u, z), (u2, z2) = run(), run()
    np.testing.assert_array_equal(u, u2)
    np.testing.assert_array_equal(z, z2)
    assert u.dtype == graphc.config.floatX and z.dtype == graphc.config.floatX
    assert abs(u.mean() - 0.5) < 5 / math.sqrt(12 * 1000)
    assert abs(z.mean() - 2.0) < 5 * 0.5 / math.sqrt(1000)


def test_truncated_normal_stays_within_two_std():
    z = function([], MRG_RandomStreams(1).normal((5000,), std=3.0, truncate=True), mode=PY)()
    assert np.abs(z).max() <= 6.0
    assert z.std() < 3.0  # truncation narrows it (about 0.88 std)


def test_binomial_dropout_mask_in_float():
    x = T.matrix("x")
    mask = MRG_RandomStreams(2).binomial(size=x.shape, p=0.8, dtype=graphc.config.floatX)
    m = function([x], mask, mode=PY)(np.ones((200, 50)))
    assert m.dtype == graphc.config.floatX and set(np.unique(m)) <= {0.0, 1.0}
    assert abs(m.mean() - 0.8) < 5 * math.sqrt(0.16 / m.size)


def test_multinomial_one_draw_per_row():
    pvals = np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    m = function([], MRG_RandomStreams(3).multinomial(pvals=pvals), mode=PY)()
    assert m.shape == (2, 3) and (m.sum(axis=1) == 1).all()
    assert m[0, 1] == 1 and m[1, 1] == 0


def test_choice_without_replacement_per_row():
    p = np.full((50, 6), 1 / 6)
    c = function([], MRG_RandomStreams(4).choice(size=3, p=p), mode=PY)()
    assert c.shape == (50, 3)
    assert all(len(set(row.tolist())) == 3 for row in c)
    with pytest.raises(NotImplementedError, match="replace=False"):
        MRG_RandomStreams(4).choice(size=3, a=6, p=p)


def test_streams_pickle_with_their_samples_and_reseed_alike():
    import pickle

    from graphc.tensor.shared_randomstreams import RandomStreams

    for cls in (RandomStreams, MRG_RandomStreams):
        s = cls(3)
        u = s.uniform((3,))
        s2, u2 = pickle.loads(pickle.dumps((s, u)))
        assert s2.state_updates[0][0] is u2.rng
        f, f2 = function([], u, mode=PY), function([], u2, mode=PY)
        np.testing.assert_array_equal(f(), f2())
        s.seed(5)
        s2.seed(5)
        np.testing.assert_array_equal(f(), f2())
