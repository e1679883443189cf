"""Theano's ``RandomStreams``: the numbers of Theano's recipe, rebuilt here with numpy alone.

Theano seeds ``RandomState(seed)`` as a seed generator, gives each sample its own
``RandomState(int(seedgen.randint(2**30)))`` and draws with its legacy methods
(``raw_random``: ``random_integers`` is ``randint(low, high + 1)`` per element in C order,
``permutation`` and ``multinomial`` one row per element of ``size``); ``seed(s)`` reseeds
every state, in order, from a new ``RandomState(s)``."""

from __future__ import annotations

import numpy as np
import pytest

import graphc
from graphc import function
from graphc.tensor.shared_randomstreams import RandomStreams

PY = graphc.Mode(linker="py", optimizer=None)


def reference_states(seed: int, n: int) -> list[np.random.RandomState]:
    seedgen = np.random.RandomState(seed)
    return [np.random.RandomState(int(seedgen.randint(2**30))) for _ in range(n)]


def build(s: RandomStreams):
    return [
        s.uniform((2, 2), -1.0, 3.0),
        s.normal((3,), 1.0, 2.0),
        s.binomial((5,), 4, 0.3),
        s.random_integers((2, 3), low=np.array([[-1], [0]]), high=np.array([0, 5, 20])),
        s.permutation((2,), 5),
        s.multinomial((2,), 4, [0.2, 0.3, 0.5]),
        s.choice((3,), 5, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
    ]


def expected(rss: list[np.random.RandomState]) -> list[np.ndarray]:
    low, high = np.array([[-1], [0]]), np.array([0, 5, 20])
    ints = np.empty((2, 3))
    for i, j in np.ndindex(2, 3):
        ints[i, j] = rss[3].randint(low[i, 0], high[j] + 1)
    return [
        rss[0].uniform(-1.0, 3.0, (2, 2)),
        rss[1].normal(1.0, 2.0, (3,)),
        rss[2].binomial(4, 0.3, (5,)),
        ints,
        np.array([rss[4].permutation(5) for _ in range(2)]),
        np.array([rss[5].multinomial(4, [0.2, 0.3, 0.5]) for _ in range(2)]),
        rss[6].choice(5, (3,), False, [0.1, 0.2, 0.3, 0.2, 0.2]),
    ]


@pytest.mark.parametrize("mode", [PY, "FAST_RUN"])
def test_samples_are_theanos_randomstate_draws(mode):
    f = function([], build(RandomStreams(234)), mode=mode)
    rss = reference_states(234, 7)
    for _ in range(3):  # the states carry on between calls (normal's cached Gaussian too)
        for got, want in zip(f(), expected(rss)):
            np.testing.assert_array_equal(got, want)


def test_seed_reseeds_every_state_in_order():
    s = RandomStreams(1)
    f = function([], build(s), mode=PY)
    f()
    s.seed(99)
    for got, want in zip(f(), expected(reference_states(99, 7))):
        np.testing.assert_array_equal(got, want)
    s.seed()  # the constructor's seed
    for got, want in zip(f(), expected(reference_states(1, 7))):
        np.testing.assert_array_equal(got, want)


def test_a_size_of_none_takes_the_parameters_shape():
    s = RandomStreams(5)
    u = function([], s.uniform(low=np.zeros(3), high=np.arange(1.0, 4.0)), mode=PY)()
    (rs,) = reference_states(5, 1)
    np.testing.assert_array_equal(u, rs.uniform(np.zeros(3), np.arange(1.0, 4.0)))
