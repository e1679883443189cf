"""Theano's ``RandomStreams`` draws: numpy's legacy ``RandomState`` (MT19937) methods.

The state is a ``RandomState``'s state as a uint64 vector (``LEGACY_STATE_SIZE`` words:
the 624 key words, the position, the has-Gaussian flag and the cached Gaussian's bits), so
it is an ordinary tensor like the Philox state of ``RandomVariable``. Each distribution
calls the ``RandomState`` method Theano's ``raw_random`` calls, with its argument handling
(``random_integers`` draws ``randint(low, high + 1)`` one element at a time, ``permutation``
one permutation per element of ``size``, ``multinomial`` one row at a time after Theano's
probability adjustment), so a seed gives Theano's numbers.
"""

from __future__ import annotations

import numpy as np

from graphc.tensor.random.op import RandomVariable
from graphc.tensor.type import TensorType

LEGACY_STATE_SIZE = 627
LEGACY_STATE_TYPE = TensorType("uint64", (LEGACY_STATE_SIZE,))


def legacy_state_from_seed(seed: int) -> np.ndarray:
    """The state of ``numpy.random.RandomState(seed)``."""
    return pack(np.random.RandomState(int(seed)))


def pack(rs: np.random.RandomState) -> np.ndarray:
    _, key, pos, has_gauss, gauss = rs.get_state()
    extra = np.array([pos, has_gauss, np.float64(gauss).view(np.uint64)], dtype=np.uint64)
    return np.concatenate([np.asarray(key, dtype=np.uint64), extra])


def unpack(state: np.ndarray) -> np.random.RandomState:
    """A ``RandomState`` positioned at ``state``."""
    state = np.asarray(state)
    if state.shape != (LEGACY_STATE_SIZE,) or state.dtype != np.uint64:
        raise ValueError(
            f"a RandomState state must be a uint64 vector of length {LEGACY_STATE_SIZE}, got "
            f"{state.dtype} of shape {state.shape}"
        )
    rs = np.random.RandomState()
    gauss = state[626:627].view(np.float64)[0]
    rs.set_state(("MT19937", state[:624].astype(np.uint32), int(state[624]), int(state[625]),
                  float(gauss)))  # fmt: skip
    return rs


def _broadcast_loop(size, arrays, cores=(0, 0)):
    """Output shape and, per output index in C order, the index of each array broadcast to
    it (Theano's ``_generate_broadcasting_indices``; an array's last ``cores[k]`` axes are
    one sample's, not looped over)."""
    ndim = len(size) if size is not None else max(a.ndim - c for a, c in zip(arrays, cores))
    shaped = []
    for a, c in zip(arrays, cores):
        lead = a.ndim - c
        if lead > ndim:
            raise ValueError(f"a parameter of shape {a.shape} has more dimensions than the size")
        shaped.append(a.reshape((1,) * (ndim - lead) + a.shape))
    if size is None:
        size = tuple(max(a.shape[d] for a in shaped) for d in range(ndim))
    size = tuple(size)
    for a in shaped:
        if any(s not in (1, o) for s, o in zip(a.shape[:ndim], size)):
            raise ValueError(f"a parameter of shape {a.shape} does not broadcast to {size}")
    index = [
        [
            tuple(i if s != 1 else 0 for i, s in zip(idx, a.shape[:ndim]))
            for idx in np.ndindex(*size)
        ]
        for a in shaped
    ]
    return size, list(np.ndindex(*size)), shaped, index


def _random_integers(rs: np.random.RandomState, size, params: list):
    low, high = params
    size, out_idx, (low, high), (li, hi) = _broadcast_loop(size, (low, high))
    out = np.ndarray(size)
    for o, a, b in zip(out_idx, li, hi):
        out[o] = rs.randint(low=low[a], high=high[b] + 1)
    return out


def _permutation(rs: np.random.RandomState, size, params: list):
    n = int(np.asarray(params[0]).item())
    shape = () if size is None else tuple(size)
    out = np.empty((*shape, n), dtype=int)
    for i in np.ndindex(*shape):
        out[i] = rs.permutation(n)
    return out


def _multinomial(rs: np.random.RandomState, size, params: list):
    n, pvals = params
    size, out_idx, (n, pvals), (ni, pi) = _broadcast_loop(size, (n, pvals), (0, 1))
    out = np.ndarray((*size, pvals.shape[-1]))
    if pvals.size and pvals.min() < 0:
        raise ValueError("pvals must be non-negative")
    for o, a, b in zip(out_idx, ni, pi):
        pvi = pvals[b]
        total = np.sum(pvi)
        if 1.0 < total < 1.0 + 1e-5 or pvi[-1] < 5e-5:  # Theano's allowance for rounding
            pvi = pvi * (1.0 - 5e-5)
        if np.sum(pvi) > 1.0:
            raise ValueError(f"the probabilities sum to {np.sum(pvi)} > 1")
        out[o] = rs.multinomial(n=n[a], pvals=pvi.astype("float64"))
    return out


def _choice(rs: np.random.RandomState, size, params: list, replace: bool):
    a, p = params
    if a.ndim > 1 or p.ndim != 1:
        raise ValueError(f"a must be a scalar or a vector and p a vector, got {a.shape}, {p.shape}")
    return rs.choice(a, size, replace, None if p.size == 0 else p)


def _uniform(rs: np.random.RandomState, size, params: list):
    return rs.uniform(params[0], params[1], size)


_LEGACY_DRAWS = {
    "uniform": (0, _uniform),
    "normal": (0, lambda rs, s, p: rs.normal(p[0], p[1], s)),
    "binomial": (0, lambda rs, s, p: rs.binomial(p[0], p[1], s)),
    "random_integers": (0, _random_integers),
    "multinomial": (1, _multinomial),
    "choice": (0, lambda rs, s, p: _choice(rs, s, p, True)),
    "choice_no_replace": (0, lambda rs, s, p: _choice(rs, s, p, False)),
    "permutation": (1, _permutation),
}


class LegacyRandomVariable(RandomVariable):
    """``RandomVariable`` over a ``RandomState`` state, drawing as Theano's ``raw_random``."""

    state_type = LEGACY_STATE_TYPE
    DRAWS = _LEGACY_DRAWS

    def __str__(self) -> str:
        return f"LegacyRandomVariable{{{self.dist},{self.dtype}}}"

    def draw(self, state: np.ndarray, shape: tuple | None, params: list):
        rs = unpack(state)
        sample = np.asarray(self.DRAWS[self.dist][1](rs, shape, params))
        if shape is None and sample.ndim == 0 and self.ndim > 0:
            sample = sample.reshape((1,) * self.ndim)  # numpy gave a scalar for size None
        return pack(rs), sample
