"""MRG_RandomStreams against Theano: the numbers Theano 0.8.2 and 1.0.5 print for seed 12345,
and an independent pure-Python MRG31k3p (L'Ecuyer and Touzin's recurrences, Python ints)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc import function
from graphc.compile.mrg_randomstreams import guess_n_streams
from graphc.sandbox.rng_mrg import MRG_RandomStreams

PY = graphc.Mode(linker="py", optimizer=None)
M1, M2 = 2**31 - 1, 2**31 - 21069


class PyMRG:
    """One MRG31k3p stream, scalar: x1[n] = 2^22 x1[n-2] + (2^7+1) x1[n-3] mod M1 and
    x2[n] = 2^15 x2[n-1] + (2^15+1) x2[n-3] mod M2; output (x1 - x2) mod M1, 0 read as M1."""

    def __init__(self, state):
        s = [int(v) for v in state]
        self.x1, self.x2 = s[:3], s[3:]  # newest first

    def next_raw(self) -> int:
        a, b, c = self.x1
        d, e, f = self.x2
        n1 = (2**22 * b + (2**7 + 1) * c) % M1
        n2 = (2**15 * d + (2**15 + 1) * f) % M2
        self.x1, self.x2 = [n1, a, b], [n2, d, e]
        return (n1 - n2) % M1 or M1


def py_sample(states, n: int) -> list[int]:
    """Raw draws as Theano interleaves them: draw i from substream i % len(states)."""
    gens = [PyMRG(s) for s in states]
    return [gens[i % len(gens)].next_raw() for i in range(n)]


def test_theano_reference_numbers_for_seed_12345():
    """Printed by Theano 0.8.2 and 1.0.5 (floatX=float64) for the same graph."""
    with graphc.config.change_flags(floatX="float64"):
        s = MRG_RandomStreams(12345)
        f = function([], [s.uniform((6,)), s.binomial((12,), p=0.5)])
        u1, b1 = f()
        u2, b2 = f()
    np.testing.assert_allclose(
        u1, [0.73532445, 0.25856858, 0.69408069, 0.77057461, 0.49391016, 0.90620236], atol=5e-9
    )
    np.testing.assert_array_equal(b1, [0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0])
    np.testing.assert_allclose(
        u2, [0.61420744, 0.94899803, 0.18046841, 0.81389289, 0.90277854, 0.00903042], atol=5e-9
    )
    np.testing.assert_array_equal(b2, [1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1])


@pytest.mark.parametrize("nstreams", [1, 3, 7])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_draws_interleave_substreams_like_the_scalar_generator(nstreams, dtype):
    s = MRG_RandomStreams((11, 22, 33, 44, 55, 66))
    u = s.uniform((4, 5), dtype=dtype, nstreams=nstreams)
    state = s.state_updates[0][0]
    f = function([], u, mode=PY)
    for _ in range(2):
        start = state.get_value()
        assert start.shape == (nstreams, 6) and start.dtype == np.int32
        raw = np.asarray(py_sample(start, 20))
        if dtype == "float64":
            expect = raw * 2.0**-31
        else:  # Theano's C code: float32(raw) * 4.6566126e-10f in float32
            expect = raw.astype(np.float32) * np.float32(4.6566126e-10)
        np.testing.assert_array_equal(f().ravel(), expect)


def test_substream_jumps_are_matrix_powers_of_the_step():
    """The 2**72 jump is the same repeated squaring as a 2**10 one, checked by stepping."""
    from graphc.tensor.random import mrg31k3p

    jump = tuple(
        mrg31k3p.matrix_power_mod(a, 10, m) for a, m in ((mrg31k3p.A1, M1), (mrg31k3p.A2, M2))
    )
    start = [12345, 678, 91011, 1213, 1415, 1617]
    g = PyMRG(start)
    for _ in range(2**10):
        g.next_raw()
    np.testing.assert_array_equal(mrg31k3p.apply_jump(jump, start)[0], g.x1 + g.x2)
    states = mrg31k3p.substream_states(np.asarray(start), 5)
    for k in range(1, 5):
        np.testing.assert_array_equal(
            states[k], mrg31k3p.apply_jump(mrg31k3p.SUB_JUMP, states[k - 1])[0]
        )


def test_number_of_substreams_is_theanos_guess():
    assert guess_n_streams((6,)) == 6 and guess_n_streams((12,)) == 2
    assert guess_n_streams((3, 5)) == 2 and guess_n_streams((100000,)) == 60 * 256
    assert guess_n_streams((T.lscalar(),)) == 60 * 256
    assert guess_n_streams((np.int64(12),)) == 60 * 256  # Theano counts only Python ints
    s = MRG_RandomStreams(1)
    s.uniform((12, 7))
    s.normal((4,))  # its uniforms have a symbolic size
    shapes = [old.get_value().shape for old, *_ in s.state_updates]
    assert shapes == [(14, 6), (60 * 256, 6)]


def test_normal_is_box_muller_of_the_first_and_second_half():
    s, ref = MRG_RandomStreams(99), MRG_RandomStreams(99)
    z = function([], s.normal((5,), avg=1.0, std=2.0), mode=PY)()
    u = function([], ref.uniform((6,), nstreams=60 * 256), mode=PY)()
    r = [math.sqrt(-2 * math.log(v)) for v in u[:3]]
    expect = [ri * math.cos(2 * math.pi * t) for ri, t in zip(r, u[3:])]
    expect += [ri * math.sin(2 * math.pi * t) for ri, t in zip(r, u[3:])]
    np.testing.assert_allclose(z, 1.0 + 2.0 * np.asarray(expect[:5]), rtol=1e-12)


def test_truncated_normal_redraws_the_radius_of_values_beyond_two():
    s = MRG_RandomStreams(5)
    z = function([], s.normal((4000,), truncate=True), mode=PY)()
    assert np.abs(z).max() <= 2.0 and z.shape == (4000,)
    assert len(s.state_updates) == 2  # the redraw has its own stream, as in Theano
    t = function([], MRG_RandomStreams(5).truncated_normal((4000,), std=3.0), mode=PY)()
    assert np.abs(t).max() <= 6.0 / 0.87962566103423978 and abs(t.std() - 3.0) < 0.15


def test_multinomial_and_choice_read_one_uniform_per_row_and_draw():
    pvals = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    m = function([], MRG_RandomStreams(7).multinomial(pvals=pvals, n=4), mode=PY)()
    u = function([], MRG_RandomStreams(7).uniform((8,), nstreams=60 * 256), mode=PY)()
    expect = np.zeros((2, 3), dtype=np.int64)
    for c in range(4):
        for k in range(2):
            expect[k, np.searchsorted(np.cumsum(pvals[k]), u[c * 2 + k], side="right")] += 1
    np.testing.assert_array_equal(m, expect)

    c = function([], MRG_RandomStreams(8).choice(size=2, p=pvals), mode=PY)()
    u = function([], MRG_RandomStreams(8).uniform((4,), nstreams=60 * 256), mode=PY)()
    for k in range(2):
        p = pvals[k].copy()
        first = np.searchsorted(np.cumsum(p), u[k], side="right")
        p[first] = 0
        second = np.searchsorted(np.cumsum(p / p.sum()), u[2 + k], side="right")
        assert c[k].tolist() == [first, second]


def test_seed_restarts_every_stream_as_a_new_object_would():
    def build(s):
        return function([], [s.uniform((9,)), s.normal((3, 2))], mode=PY)

    s = MRG_RandomStreams(3)
    f = build(s)
    first = f()
    f()
    s.seed()
    again = f()
    s.seed(77)
    other = f()
    fresh = build(MRG_RandomStreams(77))()
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(other, fresh):
        np.testing.assert_array_equal(a, b)


def test_bad_seeds_are_refused():
    for seed in (0, M2, -1):
        with pytest.raises(ValueError, match="seed"):
            MRG_RandomStreams(seed)
    with pytest.raises(ValueError, match="should not all be 0"):
        MRG_RandomStreams((0, 0, 0, 1, 2, 3))
    with pytest.raises(TypeError, match="6 integers"):
        MRG_RandomStreams((1, 2, 3))
    with pytest.raises(NotImplementedError, match="n != 1"):
        MRG_RandomStreams(1).binomial((3,), n=2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_c_draws_exactly_what_perform_draws(dtype):
    cpy = graphc.Mode(linker="c|py", optimizer="fast_run")
    cases = [((7, 3), None, 0.0, 1.0), ((1000,), 3, -2.0, 5.0), ((5,), 1, 0.5, 1.5),
             ((40,), None, 3.0, -1.0)]  # fmt: skip
    for size, nstreams, low, high in cases:
        outs = []
        for mode in (PY, cpy):
            s = MRG_RandomStreams(42)
            f = function([], s.uniform(size, low, high, dtype=dtype, nstreams=nstreams), mode=mode)
            outs.append([f(), f(), s.state_updates[0][0].get_value()])
        assert [n.c_thunk is not None for n in f.linked.program.nodes] == [True]
        for a, b in zip(*outs):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
