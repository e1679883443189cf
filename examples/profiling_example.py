"""The profiling example of the Theano tutorial: (x + y + z) * 2, with fusion and inplace
excluded so every node shows in the profile.

    python examples/profiling_example.py
    GRAPHC_FLAGS=optimizer_excluding=fusion:inplace,profile=True \
        python examples/profiling_example.py
"""

import numpy as np

import graphc
import graphc.tensor as T

x, y, z = T.vectors("xyz")
mode = graphc.Mode().excluding("fusion", "inplace")
f = graphc.function([x, y, z], [(x + y + z) * 2], mode=mode, profile=True,
                    name="profiling_example")  # fmt: skip
xv = np.random.rand(10**5)
for _ in range(10):
    f(xv, xv, xv)
f.profile.summary()
