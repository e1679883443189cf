"""The MLP benchmark compares like with like: numpy's plain step, the step with preallocated
buffers, and graphc's compiled step compute the same costs and parameters."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import graphc
import graphc.tensor as T
from graphc.tensor import nnet

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.common import NumpyMlpStep, mlp_graph, numpy_mlp_step  # noqa: E402


def test_the_three_mlp_steps_agree_over_several_steps():
    rng = np.random.default_rng(5)
    f, params = mlp_graph(graphc, T, nnet.softmax, nnet.categorical_crossentropy, None, rng)
    plain = [q.get_value() for q in params]
    buffered = NumpyMlpStep([v.copy() for v in plain], 32)
    for _ in range(3):
        xv, yv = rng.standard_normal((32, 784)), rng.integers(0, 10, 32)
        costs = [float(f(xv, yv)), numpy_mlp_step(plain, xv, yv), buffered(xv, yv)]
        np.testing.assert_allclose(costs, costs[0], rtol=1e-12)
    for q, a, b in zip(params, plain, buffered.params):
        np.testing.assert_allclose(q.get_value(), a, rtol=1e-10, atol=1e-15)
        np.testing.assert_array_equal(a, b)  # the same numpy operations, in the same order
