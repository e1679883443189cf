"""Each rewrite changes the graph as intended and keeps the values (py and c|py linkers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphc
import graphc.tensor as T
from graphc.linker import c_available
from graphc.opt.canonicalize import MAX_FLAT_INPUTS
from graphc.opt.engine import RewriteWarning
from graphc.scalar.basic import Composite
from graphc.tensor.basic import Reshape, Shape_i
from graphc.tensor.elemwise import DimShuffle, Elemwise

pytestmark = pytest.mark.filterwarnings(f"error::{RewriteWarning.__module__}.RewriteWarning")
LINKERS = ["py"] + (["c|py"] if c_available() else [])
FAST = settings(max_examples=20, deadline=None)


def compile_(inputs, outputs, linker="py", optimizer="fast_run", excluding=()):
    mode = graphc.Mode(linker=linker, optimizer=optimizer).excluding(*excluding)
    return graphc.function(inputs, outputs, mode=mode, on_unused_input="ignore")


def ops(f):
    return [n.op for n in f.maker.fgraph.toposort()]


def scalar_names(f):
    """Scalar Op names of the Elemwise nodes (Composites expanded)."""
    names = []
    for op in ops(f):
        if isinstance(op, Elemwise):
            sop = op.scalar_op
            if isinstance(sop, Composite):
                names.extend(n.op.name for n in sop.nodes)
            else:
                names.append(sop.name)
    return names


def agree(inputs, out, values, excluding=(), rtol=1e-7, **kw):
    """Compile with every linker under fast_run (minus ``excluding``) and without rewrites;
    return the fast_run function of the last linker."""
    ref = compile_(inputs, out, "py", "None")(*values)
    f = None
    for linker in LINKERS:
        f = compile_(inputs, out, linker, excluding=excluding, **kw)
        np.testing.assert_allclose(f(*values), ref, rtol=rtol, atol=1e-12)
    return f


floats = hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-3, 3, width=64))


@FAST
@given(floats)
def test_canonicalize_identities(a):
    x = T.dvector("x")
    one, zero = T.constant(np.ones(1)), T.constant(np.zeros(1))
    f = agree([x], (x * one + zero) * 2.0 * 3.0, [a], excluding=("fusion",))
    names = scalar_names(f)
    assert names.count("mul") == 1 and "add" not in names  # x * 6.0
    consts = [
        i for n in f.maker.fgraph.toposort() for i in n.inputs if isinstance(i, T.TensorConstant)
    ]
    assert [float(np.asarray(c.data).ravel()[0]) for c in consts] == [6.0]


@FAST
@given(floats)
def test_flatten_add_chain_and_double_neg(a):
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    f = agree([x, y, z], T.neg(T.neg(((x + y) + z) + x)), [a, a * 2, a - 1], excluding=("fusion",))
    adds = [op for op in ops(f) if isinstance(op, Elemwise) and op.scalar_op.name == "add"]
    assert len(adds) == 1 and "neg" not in scalar_names(f)
    node = next(n for n in f.maker.fgraph.toposort() if n.op in adds)
    assert len(node.inputs) == 4


def test_flattening_a_long_chain_stops_at_max_flat_inputs():
    # A chain of 300 products flattens into nodes of at most MAX_FLAT_INPUTS inputs (not
    # one node of 300, rebuilt ever larger at each step) and keeps its value.
    xs = [T.dvector(f"x{k}") for k in range(300)]
    prod = xs[0]
    for x in xs[1:]:
        prod = prod * x
    f = compile_(xs, prod, excluding=("fusion",))
    muls = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    widest = max(len(n.inputs) for n in muls)
    assert 2 < widest <= MAX_FLAT_INPUTS <= 64  # flattened, in bounded nodes
    vals = [np.full(2, 1.0 + k / 1000) for k in range(300)]
    np.testing.assert_allclose(f(*vals), np.prod(vals, axis=0), rtol=1e-12)


def _increments(f):
    return [n for n in f.maker.fgraph.toposort() if "IncSubtensor" in type(n.op).__name__]


@FAST
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(6, 9)),
                  elements=st.floats(-3, 3, width=64)))  # fmt: skip
def test_gradients_of_slices_increment_one_array(a):
    # grad of several slices of x: add(inc(zeros, g1), inc(zeros, g2), ...) becomes one
    # chain of increments into one zero array, in place after the first
    x, w = T.dmatrix("x"), T.dmatrix("w")
    cost = T.sin(x[:, :3]).sum() + (T.cos(x[:, 3:5]) * w[:, 3:5]).sum() + (x[:, 5:] ** 2).sum()
    cost += (x[[0, 0], 1] * 3.0).sum()  # an advanced increment joins the chain too
    values = [a, np.cos(a)]
    f = agree([x, w], graphc.grad(cost, x), values)
    incs = _increments(f)
    assert len(incs) == 4
    assert sum(n.inputs[0].owner in incs for n in incs) == 3  # one chain ...
    assert sum(n.op.inplace for n in incs) >= 3  # ... written in place
    adds = [n for n in f.maker.fgraph.toposort() if "add" in scalar_names_of(n)]
    assert not any(i.owner in incs for n in adds for i in n.inputs)  # no sum of full arrays
    want = np.zeros_like(a)
    want[:, :3] = np.cos(a[:, :3])
    want[:, 3:5] = -np.sin(a[:, 3:5]) * values[1][:, 3:5]
    want[:, 5:] = 2 * a[:, 5:]
    want[0, 1] += 6.0
    np.testing.assert_allclose(f(*values), want, rtol=1e-12, atol=1e-12)


def test_a_set_or_shared_increment_stays_out_of_the_chain():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    zero = T.zeros_like(x)
    shared_inc = T.inc_subtensor(zero[:, :1], y[:, :1])  # also read on its own
    moved = T.inc_subtensor(zero[:, 2:], y[:, 2:])
    out = T.set_subtensor(zero[:, 1:2], y[:, 1:2]) + shared_inc + moved
    f = agree([x, y], [out, shared_inc * 2.0], [np.ones((2, 4)), np.arange(8.0).reshape(2, 4)],
              excluding=("fusion",))  # fmt: skip
    incs = _increments(f)
    clients = f.maker.fgraph.clients
    kept = {n for n in incs if n.op.set_instead_of_inc or len(clients[n.outputs[0]]) > 1}
    assert len(kept) == 2  # the set and the twice-read increment ...
    add = next(n for n in f.maker.fgraph.toposort() if "add" in scalar_names_of(n))
    assert {i.owner for i in add.inputs} >= kept  # ... are still summed, not chained
    assert [n for n in incs if n not in kept][0].inputs[0].owner is add  # the other one moved


def scalar_names_of(node):
    op = node.op
    if not isinstance(op, Elemwise):
        return []
    if isinstance(op.scalar_op, Composite):
        return [n.op.name for n in op.scalar_op.nodes]
    return [op.scalar_op.name]


@FAST
@given(floats)
def test_sub_self_is_zero(a):
    x = T.dvector("x")
    f = agree([x], x - x + x, [a], excluding=("fusion",))
    assert "sub" not in scalar_names(f)


def test_dimshuffle_chains_collapse():
    x = T.dmatrix("x")
    f = compile_([x], x.T.T + x.dimshuffle(1, 0).dimshuffle("x", 1, 0)[0] * 0 + x)
    assert not any(isinstance(op, DimShuffle) and op.new_order == (1, 0) for op in ops(f))
    v = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(v), 2 * v)


def test_useless_cast_and_reshape():
    x = T.dmatrix("x")
    f = compile_([x], T.cast(x, "float64").reshape(x.shape, ndim=2) * 2, excluding=("fusion",))
    assert not any(isinstance(op, Reshape) for op in ops(f))
    v = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(v), 2 * v)


def test_shape_of_node_uses_infer_shape():
    x = T.dmatrix("x")
    y = T.exp(x).dimshuffle(1, 0)
    f = compile_([x], Shape_i(0)(y))
    assert "exp" not in scalar_names(f)  # the shape comes from x, exp never runs
    assert f(np.zeros((2, 5))) == 5


def test_constant_folding_and_size_bound():
    x = T.dvector("x")
    c = T.exp(T.constant(np.arange(3.0)))
    f = compile_([x], x + c, excluding=("fusion",))
    assert scalar_names(f) == ["add"]
    np.testing.assert_allclose(f(np.zeros(3)), np.exp(np.arange(3.0)))
    big = T.constant(np.ones(10**6 + 1)) * 2.0
    g = compile_([x], x + big, excluding=("fusion",))
    assert "mul" in scalar_names(g)


def test_merge_common_subexpressions():
    x = T.dvector("x")
    a, b = T.exp(x) + T.constant(np.ones(1)), T.exp(x) + T.constant(np.ones(1))
    f = compile_([x], [a * b], optimizer="merge")
    assert scalar_names(f).count("exp") == 1 and scalar_names(f).count("add") == 1
    np.testing.assert_allclose(f(np.ones(2))[0], (np.e + 1) ** 2)
    assert ops(compile_([x], [a * b], optimizer="None")).count(T.Elemwise(ops(f)[0].scalar_op)) == 2


@FAST
@given(floats)
def test_pow_specialize(a):
    x = T.dvector("x")
    ax = np.abs(a)
    f = agree([x], x ** T.constant(np.full(1, 2.0)) + T.abs(x) ** T.constant(np.full(1, 0.5)),
              [ax], excluding=("fusion",))  # fmt: skip
    names = scalar_names(f)
    assert "pow" not in names and "sqr" in names and "sqrt" in names


@FAST
@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-3, 3, width=64)))
def test_sum_of_scaled(a):
    x = T.dmatrix("x")
    f = agree([x], (x * T.constant(np.full((1, 1), 3.0))).sum(axis=1), [a], excluding=("fusion",))
    nodes = f.maker.fgraph.toposort()
    assert nodes[0].op.__class__.__name__ == "CAReduce" and nodes[0].inputs[0].name == "x"


@FAST
@given(floats)
def test_neg_of_scaled_and_fill(a):
    x, y = T.dvector("x"), T.dvector("y")
    three = T.constant(np.full(1, 3.0))
    e = T.exp(x)
    out = T.neg(three * x) + T.second(x, e * y)
    f = agree([x, y], out, [a, a + 1], excluding=("fusion",))
    names = scalar_names(f)
    assert "neg" not in names and "second" not in names  # -(3*x) -> (-3)*x; fill dropped
    g = compile_([x], T.constant(np.full(1, -1.0)) * x, excluding=("fusion",))
    assert scalar_names(g) == ["neg"]  # (-1)*x -> neg(x)
