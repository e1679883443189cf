"""Helpers for the tests of the AVX-512 kernels (``graphc/linker/c/vector_code.py``): whether
the generated C targets AVX-512, a compiled function's disassembly, floats of every kind,
and a bit-for-bit comparison of float results."""

from __future__ import annotations

import os
import subprocess

import numpy as np

import graphc
from graphc.linker.compiler import find_compiler


def targets_avx512() -> bool:
    """Whether the generated C is compiled for AVX-512 (``-march=native`` defines it)."""
    cc = find_compiler()
    macros = subprocess.run([*cc.argv, "-march=native", "-dM", "-E", "-x", "c", os.devnull],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    return "__AVX512F__" in macros


def disassembly(f: graphc.Function) -> str:
    """``objdump -d`` of the C module of ``f``'s thunks."""
    path = f.linked.c_module.__file__
    return subprocess.run(["objdump", "-d", path], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


#: per dtype: exp's clamp, where it overflows and where its results turn subnormal and
#: round to 0; tanh's clamp
EDGES = {
    "float32": [89.0, -104.0, 88.72283, -87.33654, -103.97208, 10.0],
    "float64": [710.0, -746.0, 709.782712893384, -708.3964185322641, -745.1332191019412, 22.0],
}
DENSE = {
    "float32": ((-110, -85), (85, 92), (8, 12), (-1, 1)),
    "float64": ((-750, -700), (700, 712), (18, 23), (-1, 1)),
}


def every_kind_of_float(n: int, seed: int, dtype: str = "float32") -> np.ndarray:
    """Floats of every kind: random bit patterns (signaling and quiet NaNs of any payload,
    infinities, subnormals), signed zeros, the edges of exp's clamp, its subnormal and
    overflowing results, and tanh's clamp (``n`` of each random kind)."""
    rng = np.random.default_rng(seed)
    edges = np.array([0.0, np.inf, *EDGES[dtype]], dtype)
    edges = np.concatenate([edges, -edges])
    big = np.array(np.inf, dtype)
    near = np.concatenate([np.nextafter(edges, big), np.nextafter(edges, -big)])
    dense = [rng.uniform(lo, hi, n).astype(dtype) for lo, hi in DENSE[dtype]]
    bits = np.dtype(dtype).itemsize * 8
    patterns = rng.integers(0, 2**bits, n, dtype=np.uint64).astype(f"u{bits // 8}")
    return np.concatenate([edges, near, *dense, nans(dtype), patterns.view(dtype)])


def nans(dtype: str) -> np.ndarray:
    """Quiet and signaling NaNs of both signs, with and without a payload."""
    bits = np.dtype(dtype).itemsize * 8
    exponent, quiet = {32: (0x7F800000, 0x400000), 64: (0x7FF0000000000000, 1 << 51)}[bits]
    sign = 1 << (bits - 1)
    kinds = [exponent | quiet, exponent | quiet | 0x123, exponent | 1, exponent | (quiet >> 1)]
    return np.array([*kinds, *(k | sign for k in kinds)], f"u{bits // 8}").view(dtype)


def assert_same_floats(got: np.ndarray, want: np.ndarray) -> None:
    """NaN where ``want`` has one, every other element bit for bit (a zero's sign too).
    Which NaN an operation on two NaNs passes on is the compiled operand order's choice."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    number = ~np.isnan(want)
    bits = f"u{want.dtype.itemsize}"
    np.testing.assert_array_equal(got[number].view(bits), want[number].view(bits))
