"""Deep graphs (long chains) compile, differentiate, print and pickle without recursion
limits: fused chains of thousands of nodes are normal in real models."""

import pickle

import numpy as np

import graphc
import graphc.tensor as T
from graphc.printing import debugprint

DEPTH = 1500  # deeper than Python's default recursion limit


def _chain(x, n):
    y = x
    for i in range(n):
        y = T.tanh(y) * 0.5 + 0.25 if i % 3 == 0 else (y * 1.01 if i % 3 == 1 else y - 0.5)
    return y


def _numpy_chain(v, n):
    for i in range(n):
        v = np.tanh(v) * 0.5 + 0.25 if i % 3 == 0 else (v * 1.01 if i % 3 == 1 else v - 0.5)
    return v


def test_deep_chain_compiles_fused_and_matches_numpy():
    x = T.dvector("x")
    f = graphc.function([x], _chain(x, DEPTH))
    xv = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(xv), _numpy_chain(xv, DEPTH), rtol=1e-10)
    names = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert any("Composite" in n for n in names)
    assert max(len(n) for n in names) < 400  # long Composite names are cut


def test_deep_chain_gradient_printing_and_pickling():
    x = T.dvector("x")
    y = _chain(x, DEPTH)
    g = graphc.grad(y.sum(), x)
    f = graphc.function([x], g)
    xv = np.linspace(-1, 1, 5)
    eps = 1e-6
    num = (_numpy_chain(xv + eps, DEPTH) - _numpy_chain(xv - eps, DEPTH)) / (2 * eps)
    np.testing.assert_allclose(f(xv), num, rtol=1e-5, atol=1e-8)
    text = debugprint(y, file="str")
    assert text.count("\n") >= DEPTH
    f2 = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(f2(xv), f(xv))
