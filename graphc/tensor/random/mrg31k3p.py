"""MRG31k3p (L'Ecuyer and Touzin, 2000), numbered as Theano's ``MRG_RandomStreams`` numbers it.

A state is six int32: ``(x11, x12, x13)`` modulo ``M1`` and ``(x21, x22, x23)`` modulo
``M2``, newest first. A step is one multiplication by the companion matrices ``A1``/``A2``;
streams start ``2**134`` steps apart and a stream's substreams ``2**72`` steps apart, by
multiplying with those powers of the matrices (computed here by repeated squaring).
A sample of ``n`` draws from ``k`` substreams takes draw ``i`` from substream ``i % k``.
Everything is vectorized over the substreams with exact int64 arithmetic.
"""

from __future__ import annotations

import numpy as np

M1 = 2**31 - 1
M2 = 2**31 - 21069
# x1[n] = (2**22 x1[n-2] + (2**7 + 1) x1[n-3]) mod M1
A1 = ((0, 4194304, 129), (1, 0, 0), (0, 1, 0))
# x2[n] = ((2**15) x2[n-1] + (2**15 + 1) x2[n-3]) mod M2
A2 = ((32768, 0, 32769), (1, 0, 0), (0, 1, 0))
SUBSTREAM_LOG2 = 72
STREAM_LOG2 = 134
MAX_STREAMS = 60 * 256  # Theano's guess when the size is not a tuple of Python ints


def _matmul_mod(a, b, m: int):
    return tuple(
        tuple(sum(a[i][k] * b[k][j] for k in range(3)) % m for j in range(3)) for i in range(3)
    )


def matrix_power_mod(a, log2: int, m: int):
    """``a ** (2 ** log2) mod m`` with Python integers."""
    for _ in range(log2):
        a = _matmul_mod(a, a, m)
    return a


SUB_JUMP = (matrix_power_mod(A1, SUBSTREAM_LOG2, M1), matrix_power_mod(A2, SUBSTREAM_LOG2, M2))
STREAM_JUMP = (matrix_power_mod(A1, STREAM_LOG2, M1), matrix_power_mod(A2, STREAM_LOG2, M2))


def apply_jump(jump, states: np.ndarray) -> np.ndarray:
    """Every row of ``states`` (``(k, 6)``) multiplied by the pair of matrices ``jump``."""
    s = np.asarray(states, dtype=np.int64).reshape(-1, 6)
    out = np.empty_like(s)
    for half, (mat, m) in enumerate(zip(jump, (M1, M2))):
        part = s[:, 3 * half : 3 * half + 3]
        for i in range(3):
            acc = np.zeros(len(s), dtype=np.int64)
            for j in range(3):
                acc += (part[:, j] * mat[i][j]) % m  # each product < 2**62
            out[:, 3 * half + i] = acc % m
    return out


def check_seed(seed) -> np.ndarray:
    """The six-int32 start state of a seed (one int repeated six times, or six ints)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed == 0:
            raise ValueError(f"seed should not be 0, got {seed}")
        if not 0 < seed < M2:
            raise ValueError(f"seed should be in [1, {M2}), got {seed}")
        return np.full(6, int(seed), dtype=np.int32)
    seed = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else None
    if seed is None or len(seed) != 6:
        raise TypeError("seed should be 1 integer or 6 integers")
    for lo, m in ((0, M1), (3, M2)):
        part = [int(v) for v in seed[lo : lo + 3]]
        if all(v == 0 for v in part):
            raise ValueError(f"seed values {lo}..{lo + 2} should not all be 0, got {seed}")
        if any(not 0 <= v < m for v in part):
            raise ValueError(f"seed values {lo}..{lo + 2} should be in [0, {m}), got {seed}")
    return np.asarray(seed, dtype=np.int32)


def substream_states(rstate: np.ndarray, n_streams: int) -> np.ndarray:
    """``(n_streams, 6)`` int32: ``rstate`` then each row ``2**72`` steps after the previous."""
    if n_streams < 1:
        raise ValueError(f"the number of streams must be positive, got {n_streams}")
    out = np.empty((n_streams, 6), dtype=np.int64)
    out[0] = rstate
    have, jump = 1, SUB_JUMP
    while have < n_streams:  # row have + i = jump**have applied to row i
        take = min(have, n_streams - have)
        out[have : have + take] = apply_jump(jump, out[:take])
        have += take
        jump = tuple(_matmul_mod(a, a, m) for a, m in zip(jump, (M1, M2)))
    return out.astype(np.int32)


def draw(states: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` raw draws in ``[1, M1]`` and the advanced states; draw ``i`` uses row ``i % k``."""
    s = np.asarray(states, dtype=np.int64).copy()
    k = len(s)
    raw = np.empty(n, dtype=np.int64)
    for start in range(0, n, k):
        c = min(k, n - start)
        x = s[:c]
        y1 = (4194304 * x[:, 1] + 129 * x[:, 2]) % M1
        y2 = (32768 * x[:, 3] + 32769 * x[:, 5]) % M2
        x[:, 1:3] = x[:, 0:2].copy()
        x[:, 0] = y1
        x[:, 4:6] = x[:, 3:5].copy()
        x[:, 3] = y2
        diff = y1 - y2
        raw[start : start + c] = np.where(diff <= 0, diff + M1, diff)
    return raw, s.astype(np.int32)


# Theano's normalisations: float64 is exact (2**-31); the float32 constant keeps
# float32(M1) * NORM32 (computed in float32, as Theano's C code does) below 1; float16 uses
# the low 15 bits plus one.
NORM64 = 2.0**-31
NORM32 = np.float32(4.6566126e-10)
NORM16 = float(np.float16(3.0458e-05))


def to_unit(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Raw draws in ``[1, M1]`` as floats in ``(0, 1)`` of ``dtype``, as Theano maps them."""
    if dtype == "float64":
        return raw.astype(np.float64) * NORM64
    if dtype == "float32":
        return raw.astype(np.float32) * NORM32
    if dtype == "float16":
        return (((raw & 0x7FFF) + 1).astype(np.float64) * NORM16).astype(np.float16)
    raise TypeError(f"MRG31k3p draws float16, float32 or float64, not {dtype}")
