"""Theano's spellings and semantics that programs written for Theano rely on."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import graphc
import graphc as theano
import graphc.tensor as T
from graphc import function, shared

PY = graphc.Mode(linker="py", optimizer=None)


def test_tensor_grad_is_graphc_grad():
    x = T.dscalar("x")
    g = T.grad(x**3, x)
    assert function([x], g, mode=PY)(2.0) == pytest.approx(12.0)
    assert T.jacobian is graphc.gradient.jacobian
    with pytest.raises(AttributeError, match="no_such_name"):
        T.no_such_name  # noqa: B018


def test_variables_are_truthy_but_comparisons_raise():
    w = shared(np.zeros(3), name="w")
    x = T.dvector("x")
    assert w and x and (x + 1) and not (not x)
    for cmp in (x < 1, x > 1, x <= 1, x >= 1, T.eq(x, 1), T.neq(x, 1)):
        with pytest.raises(TypeError, match="comparison"):
            bool(cmp)
    with pytest.raises(TypeError, match="comparison"):
        0 < x < 1  # noqa: B015


def test_plural_constructors_follow_theano():
    a, b = T.dmatrices("a", "b")
    assert (a.name, b.name) == ("a", "b") and a.type == T.dmatrix
    x, y, z = T.vectors("xyz")
    assert [v.name for v in (x, y, z)] == ["x", "y", "z"]
    assert x.dtype == graphc.config.floatX
    one = T.fvectors("q")
    assert isinstance(one, T.TensorVariable) and one.name == "q" and one.dtype == "float32"
    unnamed = T.scalars(3)
    assert len(unnamed) == 3 and all(v.name is None and v.ndim == 0 for v in unnamed)
    i, j = T.iscalars("i", "j")
    assert i.dtype == j.dtype == "int32"
    named = T.lrows(["r1", "r2"])
    assert [r.name for r in named] == ["r1", "r2"] and named[0].broadcastable == (True, False)
    assert T.dtensor4s(2)[0].ndim == 4 and T.cols(1)[0].broadcastable == (False, True)
    assert T.matrices("m", "n", dtype="int16")[1].dtype == "int16"


def test_typed_constructors_are_tensor_types():
    assert isinstance(T.dscalar, T.TensorType)
    x = T.dscalar("x")
    assert x.type is T.dscalar and x.type == T.dscalar and x.name == "x"
    assert T.fmatrix(name="m").type == T.TensorType("float32", (None, None))
    assert T.TensorType("float64", (False, True)) == T.dcol  # Theano's broadcastable
    assert T.TensorType("float64", (True, False)).shape == (1, None)


def test_tag_is_attribute_and_dict_style_and_survives_cloning_and_pickling():
    x = T.dvector("x")
    x.tag.test_value = np.ones(2)
    assert x.tag["test_value"] is x.tag.test_value
    assert not hasattr(x.tag, "missing")
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y.tag.test_value, np.ones(2))
    assert x.clone().tag.test_value is x.tag.test_value
    del x.tag.test_value
    assert "test_value" not in x.tag
    n = (x + 1).owner
    n.tag.note = "hi"
    assert n.clone_with_new_inputs(n.inputs).tag.note == "hi"


def test_get_value_return_internal_type():
    s = shared(np.arange(3.0))
    v = s.get_value(return_internal_type=True)
    np.testing.assert_array_equal(v, [0.0, 1.0, 2.0])
    v[0] = 9
    assert s.get_value()[0] == 0.0  # still a copy without borrow
    assert s.get_value(borrow=True, return_internal_type=True) is s.get_value(borrow=True)


def test_function_copy_swap_delete_updates_and_name():
    x = T.dscalar("x")
    acc = shared(np.float64(0.0), name="acc")
    other = shared(np.float64(100.0), name="other")
    f = function([x], acc * 1, updates=[(acc, acc + x)], mode=PY, name="f")
    g = f.copy(swap={acc: other}, name="g")
    assert g.name == "g" and f.copy().name == "f"
    assert g(1.0) == 100.0 and other.get_value() == 101.0 and acc.get_value() == 0.0
    h = f.copy(delete_updates=True)
    assert h(5.0) == 0.0 and acc.get_value() == 0.0
    f(2.0)
    assert f.copy(share_memory=True)(1.0) == 2.0 and acc.get_value() == 3.0
    with pytest.raises(TypeError, match="swap"):
        f.copy(swap={acc: shared(np.zeros(2))})


def test_delete_updates_also_drops_default_updates():
    from graphc.tensor.shared_randomstreams import RandomStreams

    u = RandomStreams(1).uniform((2,))
    f = function([], u, mode=PY)
    g = f.copy(delete_updates=True)
    np.testing.assert_array_equal(g(), g())
    assert not np.array_equal(f(), f())


def test_default_update_on_any_shared_variable():
    count = shared(np.int64(0), name="count")
    count.default_update = count + 1
    f = function([], count * 2, mode=PY)
    f()
    f()
    assert count.get_value() == 2
    assert theano.function([], count * 2, no_default_updates=True, mode=PY)() == 4
    assert count.get_value() == 2


def test_dotted_config_sections():
    cfg = graphc.config
    before = cfg.profiling.n_apply
    assert before == cfg.profiling__n_apply
    with cfg.change_flags(**{"profiling.n_apply": before + 3}):
        assert cfg.profiling.n_apply == before + 3
    cfg.profiling.n_apply = before + 1
    try:
        assert cfg.profiling__n_apply == before + 1
    finally:
        cfg.profiling__n_apply = before
    with pytest.raises(AttributeError, match="profiling__no_such"):
        cfg.profiling.no_such  # noqa: B018
    with pytest.raises(AttributeError, match="profiling__no_such"):
        cfg.profiling.no_such = 1


def test_theano_flags_graphc_does_not_use_warn_once_and_are_stored():
    cfg = graphc.flags.Config()
    with pytest.warns(UserWarning, match="warn.round is a Theano flag"):
        cfg.warn.round = False
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg.warn.round = True  # no second warning
    assert cfg.warn.round is True
    assert cfg.device == "cpu"  # Theano's default, without a warning
    with pytest.warns(UserWarning, match="device"):
        cfg.load_flags_string("device=cpu,floatX=float32")
    assert cfg.floatX == "float32"
    with pytest.warns(UserWarning), cfg.change_flags(**{"gpuarray.preallocate": 0.5}):
        assert cfg.gpuarray.preallocate == 0.5
    with pytest.raises(AttributeError):
        cfg.gpuarray.preallocate = cfg.no_such_theano_flag


# ------------------------------------------------------------------ Print and MonitorMode


@pytest.mark.parametrize("mode", [PY, graphc.Mode(linker="c|py")])
def test_print_prints_and_passes_its_input_through(capsys, mode):
    x = T.dvector("x")
    xp = theano.printing.Print("this is a very important value")(x)
    f = function([x], xp * 5, mode=mode)
    np.testing.assert_array_equal(f([1.0, 2.0, 3.0]), [5.0, 10.0, 15.0])
    assert capsys.readouterr().out == "this is a very important value __str__ = [1. 2. 3.]\n"
    y = theano.printing.Print("y", attrs=("shape", "sum"))(x * 2)
    g = function([x], [T.exp(y), T.grad(y.sum(), x)], mode=mode)
    e, gx = g(np.ones(2))
    np.testing.assert_allclose(e, np.exp(2.0) * np.ones(2))
    np.testing.assert_array_equal(gx, [2.0, 2.0])
    assert capsys.readouterr().out == "y shape = (2,)\ny sum = 4.0\n"


def test_print_global_fn_and_props():
    seen = []
    P = theano.printing.Print
    op = P("m", global_fn=lambda op, v: seen.append((op.message, v.tolist())))
    x = T.dvector("x")
    function([x], op(x) + 1, mode=PY)([1.0])
    assert seen == [("m", [1.0])]
    assert P("a") == P("a") and P("a") != P("b") and P("a", attrs=["shape"]).attrs == ("shape",)


def test_monitor_mode_sees_every_node_in_order():
    calls = []

    def pre(i, node, fn):
        calls.append(("pre", i, str(node.op), [c[0].tolist() for c in fn.inputs]))

    def post(i, node, fn):
        calls.append(("post", i, [c[0].tolist() for c in fn.outputs]))

    x = T.dscalar("x")
    mode = theano.compile.MonitorMode(pre_func=pre, post_func=post, optimizer=None)
    f = function([x], [5 * x, T.exp(x)], mode=mode)
    out = f(3.0)
    np.testing.assert_allclose(out, [15.0, np.exp(3.0)])
    assert [c[:2] for c in calls] == [("pre", 0), ("post", 0), ("pre", 1), ("post", 1)]
    by_op = {c[2]: c[3] for c in calls if c[0] == "pre"}
    assert [5, 3.0] in by_op.values() and [3.0] in by_op.values()
    assert sorted(c[2] for c in calls if c[0] == "post") == sorted([[15.0], [np.exp(3.0)]])


def test_monitor_mode_detects_nan_and_reports_the_node():
    def detect_nan(i, node, fn):
        for output in fn.outputs:
            if np.isnan(output[0]).any():
                raise FloatingPointError(f"NaN at {node.op}")

    x = T.dscalar("x")
    mode = theano.compile.MonitorMode(post_func=detect_nan)
    f = function([x], T.log(x) * 2, mode=mode)
    assert f(1.0) == 0.0
    with np.errstate(invalid="ignore"), pytest.raises(FloatingPointError, match="log"):
        f(-1.0)


def test_unsupported_theano_modules_raise_not_implemented_naming_the_name():
    with pytest.raises(NotImplementedError, match="graphc.sparse.csr_matrix"):
        theano.sparse.csr_matrix("x")
    with pytest.raises(NotImplementedError, match="graphc.sparse.CSR"):
        from graphc.sparse import CSR  # noqa: F401
    with pytest.raises(NotImplementedError, match="graphc.gpuarray.GpuArrayType"):
        theano.gpuarray.GpuArrayType  # noqa: B018
    with pytest.raises(NotImplementedError, match="graphc.sandbox.cuda.CudaNdarray"):
        theano.sandbox.cuda.CudaNdarray  # noqa: B018
    with pytest.raises(NotImplementedError, match="graphc.sandbox.gpuarray"):
        theano.sandbox.gpuarray  # noqa: B018


# ------------------------------------------------------------------ shapes by infer_shape


def _ops(f) -> list[str]:
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


def test_the_shape_of_an_expression_does_not_compute_it():
    x = T.dmatrix("x")
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = function([x], (x**2).shape, mode=mode)
        assert "Elemwise" not in _ops(f), _ops(f)
        np.testing.assert_array_equal(f(np.ones((2, 3))), [2, 3])
    g = function([x], T.exp(x).sum(axis=0).shape[0])
    assert _ops(g) == ["Shape_i"]
    assert g(np.ones((2, 5))) == 5
    s = T.dscalar("s")
    assert function([s], (s * 2).shape)(1.0).shape == (0,)


def test_the_shape_of_a_join_does_not_run_the_join():
    x, y = T.dmatrices("x", "y")
    f = function([x, y], T.join(0, x, y).shape)
    assert "Join" not in _ops(f)
    np.testing.assert_array_equal(f(np.ones((2, 3)), np.ones((4, 3))), [6, 3])
    # as in Theano, the shape is read from the inputs without checking they fit
    np.testing.assert_array_equal(f(np.ones((2, 3)), np.ones((4, 5))), [6, 3])
    with pytest.raises(ValueError, match="join"):
        function([x, y], T.join(0, x, y))(np.ones((2, 3)), np.ones((4, 5)))


def test_random_sample_shapes_come_from_the_size():
    from graphc.tensor.shared_randomstreams import RandomStreams

    x = T.dmatrix("x")
    u = RandomStreams(1).uniform(size=x.shape)
    f = function([x], u.shape, no_default_updates=True)  # else the state must advance
    assert "RandomVariable" not in _ops(f), _ops(f)
    np.testing.assert_array_equal(f(np.ones((3, 4))), [3, 4])
