"""Theano behaviours that libraries written for Theano rely on (checked against Theano's
documented behaviour and numpy)."""

from __future__ import annotations

import numpy as np
import pytest

import graphc.tensor as T
from graphc import function, shared

# ------------------------------------------------------------------ iterating vectors


def test_vector_of_known_length_iterates_as_its_elements():
    x = T.tensor4("x")
    a, b, c, d = x.shape  # Theano: x.shape has length x.ndim
    rows, cols = x.shape[2:]
    every_other = list(x.shape[::2])
    made = list(T.stack([a, 7]))
    f = function([x], [a, b, c, d, rows, cols, *every_other, *made])
    val = np.zeros((2, 3, 5, 7))
    got = [int(v) for v in f(val)]
    ref = [*val.shape, *val.shape[2:], *val.shape[::2], val.shape[0], 7]
    assert got == ref
    const = T.constant(np.array([4.0, 5.0, 6.0]))
    assert [float(e.eval()) for e in const] == [4.0, 5.0, 6.0]
    assert len(list(T.TensorType("float64", (2,))("v"))) == 2


def test_iteration_refused_as_in_theano():
    # not a vector: TypeError (so that builtins.sum(x) fails loudly)
    for bad in (T.dmatrix("m"), T.dscalar("s")):
        with pytest.raises(TypeError, match="not iterable"):
            iter(bad)
        with pytest.raises(TypeError, match="builtins.sum"):
            sum(bad)
    # a vector whose length is not known while building: get_vector_length's ValueError
    with pytest.raises(ValueError, match="length not known"):
        list(T.dvector("v"))
    with pytest.raises(ValueError, match="length not known"):
        list(T.dvector("v").shape.sum() * T.dvector("w"))


def test_get_vector_length():
    x = T.tensor3("x")
    assert T.get_vector_length(x.shape) == 3
    assert T.get_vector_length(x.shape[1:]) == 2
    assert T.get_vector_length([1, 2, 3, 4]) == 4
    assert T.get_vector_length(T.stack([x.shape[0], x.shape[1]])) == 2
    with pytest.raises(TypeError, match="vector"):
        T.get_vector_length(T.dmatrix())


# ------------------------------------------------------------------ shared variables


def test_shared_variable_is_not_a_tensor_variable_but_acts_as_one():
    val = np.arange(6.0).reshape(2, 3)
    w = shared(val, name="w")
    x = T.dmatrix("x")
    # Theano: TensorSharedVariable and TensorVariable share their operators, not a class
    assert not isinstance(w, T.TensorVariable) and isinstance(x, T.TensorVariable)
    missing = {m for m in dir(T.TensorVariable) if not m.startswith("_")} - set(dir(w))
    assert not missing
    exprs = [w + 1, 2 * w, w - x, w / 2, w**2, -w, abs(w), w.T, w.sum(axis=0), w.mean(),
             w.dimshuffle(1, 0), w.reshape((3, 2)), w.flatten(), w[1], w.max(axis=1),
             w.argmax(), w.dot(w.T), w.shape, w.astype("int32")]  # fmt: skip
    ref = [val + 1, 2 * val, val - val, val / 2, val**2, -val, abs(val), val.T, val.sum(0),
           val.mean(), val.T, val.reshape(3, 2), val.ravel(), val[1], val.max(1),
           val.argmax(), val @ val.T, np.array(val.shape), val.astype("int32")]  # fmt: skip
    got = function([x], exprs)(val)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g, r)


def test_learned_initial_state_in_scan_as_a_library_builds_it():
    from graphc import scan

    # Lasagne's recurrent layers: an expression is used as given, a learned (1, units)
    # parameter is tiled over the batch first; the test is isinstance(.., TensorVariable)
    units, batch, steps = 3, 4, 5
    h0 = shared(np.linspace(-1.0, 1.0, units).reshape(1, units), name="h0")
    seq = T.tensor3("seq")  # (steps, batch, units)
    init = h0 if isinstance(h0, T.TensorVariable) else T.dot(T.ones((seq.shape[1], 1)), h0)
    out, _ = scan(lambda s, h: T.tanh(s + h), sequences=seq, outputs_info=init)
    rng = np.random.default_rng(0)
    sv = rng.standard_normal((steps, batch, units))
    h = np.ones((batch, 1)) @ h0.get_value()
    want = []
    for t in range(steps):
        h = np.tanh(sv[t] + h)
        want.append(h)
    np.testing.assert_allclose(function([seq], out)(sv), np.array(want), rtol=1e-12)


# ------------------------------------------------------------------ attributes on variables


def test_variables_accept_library_attributes_and_keep_them_when_pickled():
    import pickle

    x = T.dmatrix("x")
    y = T.exp(x) + 1
    w = shared(np.ones(2), name="w")
    c = T.constant(2.0)
    for var, value in ((x, (None, 3)), (y, [x]), (w, {"lr": 0.1}), (c, "c")):
        var.hint = value  # Theano's and PyTensor's variables accept new attributes
        assert var.hint == value
    x2, y2, w2 = pickle.loads(pickle.dumps((x, y, w)))
    assert (x2.hint, w2.hint, y2.hint[0].hint) == ((None, 3), {"lr": 0.1}, (None, 3))
    assert y2.hint[0] is x2 and y2.owner is not None
    # an attribute never set is still an AttributeError, and clone() starts without them
    with pytest.raises(AttributeError):
        T.dvector().hint  # noqa: B018
    assert not hasattr(x.clone(), "hint") and x.clone().tag == x.tag
