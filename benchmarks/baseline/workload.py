"""CI benchmark workload: small compiled graphs called many times, so each node has enough
samples for a median. Profiled by ``graphc-prof run`` and compared between commits by
``graphc-prof ab`` (see .ci/run and benchmarks/baseline/gate.sh).

    python -m graphc.profile run benchmarks/baseline/workload.py [--calls N]
                                 [--work NAME=FACTOR] [--compiles N] --json prof.json

``--work elemwise_chain=1.6`` gives that function 1.6x the Elemwise steps (same data): a
deliberate slowdown that the gate must catch. ``--compiles N`` (default 9) also times N
compiles of a scan gradient and of a 100-node element-wise chain, each reported as a timed
entry (benchmarks/baseline/compile_times.py); 0 leaves them out.
"""

import argparse

import numpy as np
from compile_times import report_compile_times

import graphc
import graphc.tensor as T

parser = argparse.ArgumentParser()
parser.add_argument("--calls", type=int, default=200)
parser.add_argument("--compiles", type=int, default=9)
parser.add_argument("--work", action="append", default=[], metavar="elemwise_chain=FACTOR")
args = parser.parse_args()
work = {k: float(v) for k, _, v in (w.partition("=") for w in args.work)}
if set(work) - {"elemwise_chain"}:
    raise SystemExit(f"--work: only elemwise_chain can be given more work, not {set(work)}")
steps = round(5 * work.get("elemwise_chain", 1.0))  # 2 Elemwise nodes per step

x, y, z = T.vectors("xyz")
a, b = T.matrices("ab")
rng = np.random.default_rng(0)
v = rng.random(100_000)
m = rng.random((120, 120))
chain = x
for _ in range(steps):
    chain = (chain + y) * z

f = graphc.function([x, y, z], chain, name="elemwise_chain",
                    mode=graphc.Mode().excluding("fusion", "inplace"))  # fmt: skip
g = graphc.function([x, y], T.exp(x) * y + x, name="exp_mul_add")
h = graphc.function([a, b], T.dot(a, b), name="dot")
for _ in range(args.calls):
    f(v, v, v)
    g(v, v)
    h(m, m)
if args.compiles:
    report_compile_times(args.compiles)
