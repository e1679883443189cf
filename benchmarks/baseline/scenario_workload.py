"""Workload for measuring the performance gate (scripts/gate_power.py): one function with a
few C nodes and one Python node, ``Burn``, whose work and printed name can be changed from
the command line, as a version that slowed or renamed one node would.

    python -m graphc.profile run benchmarks/baseline/scenario_workload.py [--calls N]
        [--burn-work FACTOR] [--burn-label NAME] --json prof.json

``--burn-work 1.6`` makes the Burn node 1.6x slower (1.6x the steps on the same data);
``--burn-label other`` renames its Op (``Burn{other}``) without changing its speed.
"""

import argparse

import numpy as np

import graphc
import graphc.tensor as T
from graphc.graph.basic import Apply, Op

parser = argparse.ArgumentParser()
parser.add_argument("--calls", type=int, default=100)
parser.add_argument("--burn-work", type=float, default=1.0)
parser.add_argument("--burn-label", default="base")
args = parser.parse_args()
STEPS = 10  # Burn's steps at work 1.0: about 0.2 ms


class Burn(Op):
    """``sqrt(x + 1)`` applied ``steps`` times; ``label`` only changes the name."""

    __props__ = ("label",)

    def __init__(self, label: str, steps: int):
        self.label = label
        self.steps = steps

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        r = inputs[0]
        for _ in range(self.steps):
            r = np.sqrt(r + 1.0)
        out[0][0] = r


x = T.vector("x")
a, b = T.matrices("ab")
burn = Burn(args.burn_label, round(STEPS * args.burn_work))
f = graphc.function([x, a, b], [T.exp(burn(x)) * 2 + x, T.tanh(T.dot(a, b)).sum()], name="step")
rng = np.random.default_rng(0)
v = rng.random(20_000)
m = rng.random((80, 80))
for _ in range(args.calls):
    f(v, m, m)
