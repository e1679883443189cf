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


def test_symbolic_variable_of_a_5000_op_chain_pickles_and_pprints():
    x = T.dvector("x")
    y = x
    for _ in range(5000):
        y = y + 1.0
    y2 = pickle.loads(pickle.dumps(y))
    assert y2 is not y
    v, depth = y2, 0
    while v.owner is not None:
        assert str(v.owner.op) == str(y.owner.op)
        v, depth = v.owner.inputs[0], depth + 1
    assert depth == 5000 and v.name == "x"
    np.testing.assert_allclose(y2.eval({v: np.zeros(3)}), np.full(3, 5000.0))
    text = graphc.printing.pprint(y)
    assert text.count("+") == 5000 and text.startswith("(" * 5000 + "x + 1.0)")


def _free_input(v):
    while v.owner is not None:
        v = v.owner.inputs[0]
    return v


def test_pickled_variable_keeps_shared_inputs_and_sharing():
    x = T.dvector("x")
    s = T.exp(x)
    y = s * s + x
    y2 = pickle.loads(pickle.dumps(y))
    add = y2.owner
    mul = add.inputs[0].owner
    assert mul.inputs[0] is mul.inputs[1]  # the shared subterm stays one node
    assert add.inputs[1] is _free_input(mul.inputs[0])  # and x is one Variable


def test_a_chain_of_thousands_of_views_compiles_and_its_output_is_copied():
    # The alias analysis walks view chains without recursion (Python's limit is 1000).
    x = T.dvector("x")
    y = x
    for _ in range(DEPTH):
        y = y[1:]
    f = graphc.function([x], y, mode=graphc.Mode(linker="py", optimizer=None))
    v = np.arange(DEPTH + 100.0)
    out = f(v)
    np.testing.assert_array_equal(out, v[DEPTH:])
    assert not np.shares_memory(out, v)
