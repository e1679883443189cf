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


# ------------------------------------------------------------------ Theano's signatures


def test_reductions_take_theano_dtype_and_acc_dtype():
    xv = np.array([[1.5, 2.25, 3.0], [4.0, 5.5, 6.125]], dtype="float32")
    iv = np.array([[100, 100, 100], [27, 0, 1]], dtype="int8")
    x, i = T.fmatrix("x"), T.bmatrix("i")
    exprs = {
        "mean f64": (T.mean(x, dtype="float64"), xv.mean(dtype="float64"), "float64"),
        "mean axis": (x.mean(axis=0, dtype="float64"), xv.mean(0, dtype="float64"), "float64"),
        "mean i8 acc": (T.mean(i, acc_dtype="int64"), iv.astype("int64").mean(), "float64"),
        # Theano: an int sum is divided by a float64 count
        "mean i32": (T.mean(i, axis=1, dtype="int32"), iv.sum(1, dtype="int32") / 3, "float64"),
        "sum acc": (T.sum(x, acc_dtype="float64"), xv.sum(dtype="float64"), "float32"),
        "sum i8->i8": (i.sum(dtype="int8", acc_dtype="int64"), iv.sum().astype("int8"), "int8"),
        "prod": (
            T.prod(x, axis=1, dtype="float64", no_zeros_in_input=True),
            xv.prod(1, dtype="float64"),
            "float64",
        ),  # fmt: skip
        "prod acc": (x.prod(acc_dtype="float64"), xv.astype("float64").prod(), "float32"),
    }
    f = function([x, i], [e for e, _, _ in exprs.values()])
    for (key, (expr, ref, dt)), got in zip(exprs.items(), f(xv, iv), strict=True):
        assert expr.dtype == dt, key
        np.testing.assert_allclose(got, ref, rtol=1e-6, err_msg=key)
    with pytest.raises(NotImplementedError, match="op=True"):
        T.mean(x, op=True)


def test_stack_takes_theano_spellings():
    a, b, c = T.dvectors("a", "b", "c")
    vals = [np.arange(3.0), np.arange(3.0) + 10, np.arange(3.0) - 5]
    exprs = [T.stack(a, b, c), T.stack([a, b, c]), T.stack([a, b, c], 1),
             T.stack([a, b, c], axis=-1), T.stack((a, b), axis=0)]  # fmt: skip
    refs = [np.stack(vals), np.stack(vals), np.stack(vals, 1), np.stack(vals, -1),
            np.stack(vals[:2])]  # fmt: skip
    for got, ref in zip(function([a, b, c], exprs)(*vals), refs, strict=True):
        np.testing.assert_array_equal(got, ref)
    s = T.dscalar("s")
    assert T.stack(s, s, 2.0).ndim == 1  # scalars give a vector, as in Theano
    with pytest.raises(TypeError, match="stack"):
        T.stack([a, b], 0, 1)


def test_tensor_type_takes_theano_broadcastable_and_name():
    row_t = T.TensorType("float64", broadcastable=(True, False), name="row_t")
    assert row_t == T.TensorType("float64", (1, None)) == T.TensorType("float64", (True, False))
    assert row_t.broadcastable == (True, False) and str(row_t) == "row_t"
    assert T.TensorType("int32", broadcastable=()).ndim == 0
    r = row_t("r")
    x = T.dmatrix("x")
    got = function([r, x], r + x)(np.ones((1, 3)), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(got, np.ones((1, 3)) + np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="not both"):
        T.TensorType("float64", (None,), broadcastable=(False,))


def test_norm_and_other_theano_methods():
    xv = np.array([[3.0, -4.0, 1.0], [0.5, 2.0, -2.0]])
    x = T.dmatrix("x")
    exprs = [x.norm(2), x.norm(L=1, axis=1), x.norm(3, axis=0), x.zeros_like(dtype="int32"),
             x.cumsum(axis=1), x.sort(axis=1), x.argsort(axis=0), x.repeat(2, axis=0),
             x.take([1, 0], axis=1), T.flatten(x, outdim=1), x.prod(dtype="float32")]  # fmt: skip
    refs = [np.linalg.norm(xv), np.abs(xv).sum(1), (np.abs(xv) ** 3).sum(0) ** (1 / 3),
            np.zeros((2, 3), "int32"), xv.cumsum(1), np.sort(xv, 1), np.argsort(xv, 0),
            xv.repeat(2, 0), xv.take([1, 0], 1), xv.ravel(), xv.prod()]  # fmt: skip
    for got, ref in zip(function([x], exprs)(xv), refs, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert exprs[3].dtype == "int32" and exprs[-1].dtype == "float32"
    for bad in (0, np.inf):
        with pytest.raises(NotImplementedError, match="norm"):
            x.norm(bad)


def test_var_std_take_theano_ddof_and_corrected():
    xv = 1e8 + np.array([[0.25, 1.5, -2.0, 3.0], [4.0, -1.0, 0.5, 2.5]])
    x = T.dmatrix("x")
    exprs = [T.var(x, axis=1, ddof=1, corrected=True), x.var(corrected=True),
             T.std(x, axis=0, ddof=1), x.std(axis=1, keepdims=True, corrected=True)]  # fmt: skip
    refs = [xv.var(1, ddof=1), xv.var(), xv.std(0, ddof=1), xv.std(1, keepdims=True)]
    for got, ref in zip(function([x], exprs)(xv), refs, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-9)
