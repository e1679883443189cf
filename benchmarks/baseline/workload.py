"""CI benchmark workload: small compiled graphs called many times, so each node has enough
samples for a median. Profiled by ``graphc-prof run`` (see .ci/run).

    python -m graphc.profile run benchmarks/baseline/workload.py --json prof.json
"""

import numpy as np

import graphc
import graphc.tensor as T

CALLS = 200

x, y, z = T.vectors("xyz")
rng = np.random.default_rng(0)
v = rng.random(100_000)

f = graphc.function([x, y, z], [(x + y + z) * 2], name="elemwise_chain",
                    mode=graphc.Mode().excluding("fusion", "inplace"))  # fmt: skip
g = graphc.function([x, y], T.exp(x) * y + x, name="exp_mul_add")
for _ in range(CALLS):
    f(v, v, v)
    g(v, v)
