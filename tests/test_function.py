"""graphc.function: call semantics, updates, givens, In/Out, shared values, input checks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphc
import graphc.tensor as gt
from graphc import In, Out, function, shared
from graphc.linker import c_available

PY = graphc.Mode(linker="py", optimizer=None)

floats = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def vec(n=None, name="v"):
    return gt.tensor("float64", shape=(n,), name=name)


def arrays(min_side=1, max_side=6):
    return hnp.arrays(np.float64, st.integers(min_side, max_side), elements=floats)


# ------------------------------------------------------------------ outputs


def test_single_output_is_not_wrapped_and_list_output_is():
    x = vec(name="x")
    a = np.arange(3.0)
    r = function([x], x * 2, mode=PY)(a)
    assert isinstance(r, np.ndarray)
    np.testing.assert_array_equal(r, a * 2)
    rl = function([x], [x * 2], mode=PY)(a)
    assert isinstance(rl, list) and len(rl) == 1
    rt = function([x], (x * 2, x + 1), mode=PY)(a)
    assert isinstance(rt, list) and len(rt) == 2
    np.testing.assert_array_equal(rt[1], a + 1)


def test_no_outputs_returns_empty_list_or_none():
    x = vec(name="x")
    s = shared(np.zeros(2), "s")
    assert function([x], [], updates=[(s, x)], mode=PY)(np.ones(2)) == []
    assert function([x], None, updates=[(s, x)], mode=PY)(np.ones(2)) is None


# ------------------------------------------------------------------ updates


@settings(max_examples=25, deadline=None)
@given(a=arrays(2, 2), b=arrays(2, 2), as_dict=st.booleans())
def test_updates_swap_reads_values_before_the_call(a, b, as_dict):
    sa, sb = shared(a, "sa"), shared(b, "sb")
    ups = {sa: sb, sb: sa} if as_dict else [(sa, sb), (sb, sa)]
    f = function([], [], updates=ups, mode=PY)
    f()
    np.testing.assert_array_equal(sa.get_value(), b)
    np.testing.assert_array_equal(sb.get_value(), a)
    f()
    np.testing.assert_array_equal(sa.get_value(), a)
    np.testing.assert_array_equal(sb.get_value(), b)


@settings(max_examples=25, deadline=None)
@given(a=arrays(3, 3), b=arrays(3, 3), x=arrays(3, 3))
def test_update_reading_another_updated_variable_sees_the_old_value(a, b, x):
    sa, sb = shared(a, "sa"), shared(b, "sb")
    xv = vec(name="x")
    # sb's new value reads sa, which is itself updated: it must see sa before the call
    f = function([xv], [sa * 1, sb * 1], updates=[(sa, sa + xv), (sb, sa * 2 + sb)], mode=PY)
    out_a, out_b = f(x)
    np.testing.assert_array_equal(out_a, a)  # outputs too are computed from the old values
    np.testing.assert_array_equal(out_b, b)
    np.testing.assert_array_equal(sa.get_value(), a + x)
    np.testing.assert_array_equal(sb.get_value(), a * 2 + b)


def test_updates_as_dict_and_as_pairs_are_equivalent():
    x = vec(name="x")
    s1, s2 = shared(np.zeros(2), "s1"), shared(np.zeros(2), "s2")
    f1 = function([x], [], updates={s1: s1 + x}, mode=PY)
    f2 = function([x], [], updates=[(s2, s2 + x)], mode=PY)
    for v in (np.ones(2), np.array([2.0, -1.0])):
        f1(v)
        f2(v)
    np.testing.assert_array_equal(s1.get_value(), s2.get_value())
    np.testing.assert_array_equal(s1.get_value(), [3.0, 0.0])


def test_update_errors():
    x = vec(name="x")
    s = shared(np.zeros(2), "s")
    with pytest.raises(TypeError, match="not a shared variable"):
        function([x], [], updates=[(x, x + 1)], mode=PY)
    with pytest.raises(ValueError, match="updated twice"):
        function([x], [], updates=[(s, x), (s, x + 1)], mode=PY)
    with pytest.raises(TypeError, match="dtype"):
        function([x], [], updates=[(s, gt.cast(x, "float32"))], mode=PY)


def test_output_that_is_an_update_value_is_not_aliased_with_the_shared_value():
    x = vec(name="x")
    s = shared(np.zeros(3), "s")
    new = s + x
    f = function([x], new, updates=[(s, new)], mode=PY)
    r = f(np.ones(3))
    stored = s.get_value(borrow=True)
    assert not np.shares_memory(r, stored)
    r[:] = 100.0
    np.testing.assert_array_equal(s.get_value(), np.ones(3))


def test_update_to_an_input_does_not_alias_the_callers_array():
    x = vec(name="x")
    s = shared(np.zeros(3), "s")
    f = function([x], [], updates=[(s, x)], mode=PY)
    a = np.arange(3.0)
    f(a)
    assert not np.shares_memory(s.get_value(borrow=True), a)
    a[:] = -1.0
    np.testing.assert_array_equal(s.get_value(), [0.0, 1.0, 2.0])


def test_update_to_another_shared_or_a_constant_does_not_alias_it():
    sa, sb = shared(np.zeros(2), "sa"), shared(np.ones(2), "sb")
    function([], [], updates=[(sa, sb)], mode=PY)()
    assert not np.shares_memory(sa.get_value(borrow=True), sb.get_value(borrow=True))
    c = gt.constant(np.array([5.0, 6.0]))
    f = function([], [], updates=[(sa, c)], mode=PY)
    f()
    stored = sa.get_value(borrow=True)
    assert not any(np.shares_memory(stored, v) for _, v in f.linked.program.constants)
    stored[0] = 0.0  # the stored value is the function's to own and the user's to change
    f()
    np.testing.assert_array_equal(sa.get_value(), [5.0, 6.0])


def test_two_updates_with_the_same_new_value_do_not_share_storage():
    x = vec(name="x")
    sa, sb = shared(np.zeros(2), "sa"), shared(np.zeros(2), "sb")
    e = x * 2
    function([x], [], updates=[(sa, e), (sb, e)], mode=PY)(np.ones(2))
    assert not np.shares_memory(sa.get_value(borrow=True), sb.get_value(borrow=True))


def test_same_variable_twice_in_the_outputs_gives_independent_arrays():
    x = vec(name="x")
    y = x * 2
    r = function([x], [y, y], mode=PY)(np.ones(2))
    assert not np.shares_memory(r[0], r[1])
    r[0][:] = 0.0
    np.testing.assert_array_equal(r[1], [2.0, 2.0])


def test_shared_variable_used_by_several_functions():
    x = vec(name="x")
    s = shared(np.zeros(2), "s")
    inc = function([x], [], updates=[(s, s + x)], mode=PY)
    read = function([], s * 1, mode=PY)
    scale = function([], [], updates=[(s, s * 10)], mode=PY)
    inc(np.ones(2))
    np.testing.assert_array_equal(read(), [1.0, 1.0])
    scale()
    inc(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(read(), [11.0, 12.0])
    s.set_value(np.array([-1.0, -2.0]))
    np.testing.assert_array_equal(read(), [-1.0, -2.0])


@pytest.mark.parametrize("vm", ["cvm", "py"])
@pytest.mark.parametrize("optimizer", [None, "fast_run"])
def test_failing_call_leaves_every_shared_value_untouched(vm, optimizer):
    x = vec(name="x")
    sa, sb = shared(np.arange(3.0), "sa"), shared(np.ones(3), "sb")
    # sa's update succeeds; sb's fails on a shape mismatch (x has the wrong length)
    f = function([x], [], updates=[(sa, sa + 1), (sb, sb + x)],
                 mode=graphc.Mode(linker="py", optimizer=optimizer, vm=vm))  # fmt: skip
    before = [(s.get_value(borrow=True), s.get_value()) for s in (sa, sb)]
    with pytest.raises(ValueError):
        f(np.ones(4))
    for s, (buf, val) in zip((sa, sb), before):
        assert s.get_value(borrow=True) is buf
        np.testing.assert_array_equal(s.get_value(), val)
    f(np.ones(3))  # the function still works after a failed call
    np.testing.assert_array_equal(sa.get_value(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sb.get_value(), [2.0, 2.0, 2.0])


def test_rewritten_functions_never_overwrite_inputs_or_unupdated_shared_values():
    x, y = vec(name="x"), vec(name="y")
    s = shared(np.array([1.0, 2.0, 3.0]), "s")
    a, b = np.array([0.5, 1.0, 1.5]), np.array([2.0, 1.0, 0.0])
    a0, b0, s0 = a.copy(), b.copy(), s.get_value()
    outs = [gt.exp(x) + 1, (x * y + s) * 2 - y, gt.sum(gt.exp(x)) + s, x, s]
    f = function([x, y], outs, mode=graphc.Mode(linker="py", optimizer="fast_run"))
    res = f(a, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    np.testing.assert_array_equal(s.get_value(), s0)
    np.testing.assert_allclose(res[1], (a0 * b0 + s0) * 2 - b0)
    assert not np.shares_memory(res[3], a) and not np.shares_memory(res[4], s.get_value(True))


# ------------------------------------------------------------------ givens


def test_givens_substitute_an_input_by_an_expression():
    x, y = vec(name="x"), vec(name="y")
    f = function([y], x * 3, givens={x: y + 1}, mode=PY)
    np.testing.assert_array_equal(f(np.array([0.0, 1.0])), [3.0, 6.0])
    f2 = function([y], x * 3, givens=[(x, y + 1)], mode=PY)
    np.testing.assert_array_equal(f2(np.array([0.0, 1.0])), [3.0, 6.0])


def test_givens_substitute_by_a_shared_variable():
    x = vec(name="x")
    s = shared(np.array([1.0, 2.0]), "s")
    f = function([], x * 2, givens={x: s}, mode=PY)
    np.testing.assert_array_equal(f(), [2.0, 4.0])
    s.set_value(np.array([5.0]))
    np.testing.assert_array_equal(f(), [10.0])


def test_givens_type_mismatch_raises():
    x = vec(name="x")
    with pytest.raises(TypeError, match="givens"):
        function([], x * 2, givens={x: gt.matrix("m")}, mode=PY)


# ------------------------------------------------------------------ In / keywords / arity


def test_in_default_value_and_keywords():
    x = gt.scalar("x")
    y = gt.scalar("y")
    f = function([x, In(y, value=2.0)], x * y, mode=PY)
    assert f(3.0) == 6.0
    assert f(3.0, 4.0) == 12.0
    assert f(3.0, y=5.0) == 15.0
    assert f(y=5.0, x=2.0) == 10.0
    named = function([In(x, name="alpha", value=1.0)], x + x, mode=PY)
    assert named(alpha=4.0) == 8.0
    assert named() == 2.0


def test_in_defaults_are_converted_once_even_with_trust_input():
    x = vec(name="x")
    f = function([In(x, value=[1, 2])], [x * 3, Out(x, borrow=True)], mode=PY, trust_input=True)
    r, raw = f()  # raw: what the nodes were given
    assert type(raw) is np.ndarray and raw.dtype == np.float64
    np.testing.assert_array_equal(r, [3.0, 6.0])
    np.testing.assert_array_equal(f(np.array([1.0]))[0], [3.0])
    with pytest.raises(TypeError, match=r"default value of input 0 \(x"):
        function([In(x, value="abc")], x * 3, mode=PY)
    xf = gt.tensor("float32", shape=(None,), name="xf")
    with pytest.raises(TypeError, match="default value"):
        function([In(xf, value=np.ones(2))], xf * 3, mode=PY)
    g = function([In(xf, value=np.ones(2))], xf * 3, mode=PY, allow_input_downcast=True)
    assert g().dtype == np.float32


def test_call_argument_errors():
    x, y = gt.scalar("x"), gt.scalar("y")
    f = function([x, y], x - y, mode=PY)
    with pytest.raises(TypeError, match="unknown keyword argument 'z'"):
        f(1.0, z=2.0)
    with pytest.raises(TypeError, match="at most 2 arguments"):
        f(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="missing input"):
        f(1.0)
    with pytest.raises(TypeError, match="multiple values for input 'x'"):
        f(1.0, x=2.0)


def test_in_borrow_and_immutable_inputs_are_left_intact():
    x = vec(name="x")
    a = np.arange(3.0)
    f = function([In(x, mutable=False, borrow=True)], x * 2, mode=PY)
    np.testing.assert_array_equal(f(a), a * 2)
    g = function([In(x, mutable=False, borrow=False)], x * 2, mode=PY)
    np.testing.assert_array_equal(g(a), a * 2)
    np.testing.assert_array_equal(a, np.arange(3.0))


MUTABLE_LINKERS = ["py"] + (["c|py"] if c_available() else [])


@pytest.mark.parametrize("linker", MUTABLE_LINKERS)
def test_a_mutable_input_is_overwritten_in_place_and_results_are_unchanged(linker):
    x, y = vec(name="x"), vec(name="y")
    mode = graphc.Mode(linker=linker)
    f = function([In(x, mutable=True), y], gt.exp(x) * 2 + y, mode=mode)
    ref = function([x, y], gt.exp(x) * 2 + y, mode=mode)
    destroyers = [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]
    assert [n.inputs[0] for n in destroyers] == [f.maker.fgraph.inputs[0]]
    a, b = np.linspace(-1, 1, 5), np.ones(5)
    want = ref(a.copy(), b)
    got = f(a, b)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(a, want)  # the input's buffer held the result
    assert not np.shares_memory(got, a)  # the caller gets its own output all the same
    np.testing.assert_array_equal(b, np.ones(5))


@pytest.mark.parametrize("linker", MUTABLE_LINKERS)
@given(arrays(min_side=4, max_side=4))
@settings(max_examples=15, deadline=None)
def test_a_mutable_input_aliasing_other_arguments_is_copied_first(linker, v):
    x, y = vec(4, name="x"), vec(4, name="y")
    w = shared(v.copy(), "w")
    outs = [gt.exp(x) + 1, gt.exp(y) * 3, w * 1]
    f = function([In(x, mutable=True), y], outs, mode=graphc.Mode(linker=linker))
    want = [np.exp(v) + 1, np.exp(v) * 3, v]
    a = v.copy()
    for got, ref in zip(f(a, a), want):  # the same array for x and y
        np.testing.assert_allclose(got, ref)
    np.testing.assert_array_equal(a, v)
    for got, ref in zip(f(w.get_value(borrow=True), v.copy()), want):  # w's own buffer
        np.testing.assert_allclose(got, ref)
    np.testing.assert_array_equal(w.get_value(), v)
    ro = v.copy()
    ro.flags.writeable = False
    np.testing.assert_allclose(f(ro, v.copy())[0], want[0])


def test_a_mutable_input_that_is_also_an_output_is_not_destroyed():
    x = vec(name="x")
    f = function([In(x, mutable=True)], [x, gt.exp(x) * 2])
    a = np.arange(3.0)
    got = f(a)
    np.testing.assert_array_equal(got[0], np.arange(3.0))
    np.testing.assert_allclose(got[1], np.exp(np.arange(3.0)) * 2)


def test_out_borrow_versus_default_copy_of_an_input_output():
    x = vec(name="x")
    a = np.arange(3.0)
    copied = function([x], x, mode=PY)(a)
    np.testing.assert_array_equal(copied, a)
    assert not np.shares_memory(copied, a)
    borrowed = function([x], Out(x, borrow=True), mode=PY)(a)
    assert np.shares_memory(borrowed, a)
    s = shared(np.ones(2), "s")
    assert not np.shares_memory(function([], s, mode=PY)(), s.get_value(borrow=True))


def test_explicit_input_checks_at_compile_time():
    x = vec(name="x")
    s = shared(np.zeros(2), "s")
    with pytest.raises(ValueError, match="twice"):
        function([x, x], x, mode=PY)
    with pytest.raises(TypeError, match="shared variable"):
        function([s], s * 2, mode=PY)
    with pytest.raises(TypeError, match="free variable"):
        function([x * 2], x, mode=PY)
    with pytest.raises(graphc.compile.UnusedInputError):
        function([x, vec(name="unused")], x * 2, mode=PY)
    with pytest.warns(UserWarning, match="not used"):
        function([x, vec(name="unused")], x * 2, mode=PY, on_unused_input="warn")
    with pytest.raises(Exception, match="neither an input nor a shared"):
        function([], x * 2, mode=PY)


# ------------------------------------------------------------------ shared values


@settings(max_examples=25, deadline=None)
@given(a=arrays())
def test_get_value_and_set_value_copy_unless_borrow(a):
    s = shared(a, "s")
    assert not np.shares_memory(s.get_value(borrow=True), a)  # shared() copies by default
    v = s.get_value()
    assert not np.shares_memory(v, s.get_value(borrow=True))
    v += 1.0
    np.testing.assert_array_equal(s.get_value(), a)
    new = a * 2
    s.set_value(new)
    assert not np.shares_memory(s.get_value(borrow=True), new)
    new[...] = 7.0
    np.testing.assert_array_equal(s.get_value(), a * 2)
    s.set_value(new, borrow=True)
    assert s.get_value(borrow=True) is new
    b = shared(new, "b", borrow=True)
    assert b.get_value(borrow=True) is new


def test_set_value_checks_the_type():
    s = shared(np.zeros(2), "s")
    with pytest.raises(TypeError, match="dimensions"):
        s.set_value(np.zeros((2, 2)))
    f32 = shared(np.zeros(2, dtype="float32"), "f32")
    with pytest.raises(TypeError):
        f32.set_value(np.zeros(2))
    s.set_value([1, 2, 3])
    assert s.get_value().dtype == np.float64


# ------------------------------------------------------------------ pickling and copy


def test_pickled_function_computes_the_same_and_copies_its_shared_variables():
    x = vec(name="x")
    s = shared(np.array([1.0, 2.0]), "s")
    f = function([x], s * x, updates=[(s, s + 1)], mode=PY)
    f(np.ones(2))
    g = pickle.loads(pickle.dumps(f))
    a = np.array([3.0, 4.0])
    np.testing.assert_array_equal(g(a), f(a))  # both from s == [2, 3]
    (gs,) = g.maker.shared
    assert gs is not s
    np.testing.assert_array_equal(gs.get_value(), [3.0, 4.0])
    g(a)
    np.testing.assert_array_equal(gs.get_value(), [4.0, 5.0])
    np.testing.assert_array_equal(s.get_value(), [3.0, 4.0])  # the original is not updated


def test_pickle_keeps_mode_defaults_and_trust_input():
    x = gt.scalar("x")
    mode = graphc.Mode(linker="py", optimizer=None, vm="py")
    f = function([In(x, value=2.0)], x * 3, mode=mode, trust_input=False)
    g = pickle.loads(pickle.dumps(f))
    assert g() == 6.0
    assert g.maker.mode == f.maker.mode
    assert g.trust_input is False


def test_copy_keeps_trust_input_and_name():
    x = vec(name="x")
    f = function([x], x * 2, mode=PY, trust_input=True, name="twice")
    g = f.copy()
    assert g.trust_input is True and g.name == "twice"
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])


def test_copy_gives_an_independent_function():
    x = vec(name="x")
    f = function([x], x * 2 + 1, mode=PY, profile=True)
    g = f.copy()
    assert g is not f and g.vm is not f.vm
    a = np.arange(4.0)
    np.testing.assert_array_equal(g(a), f(a))
    g(a)
    g(a)
    f.profile.refresh()
    g.profile.refresh()
    assert {n.calls for n in f.profile.functions[0].nodes} == {1}
    assert {n.calls for n in g.profile.functions[0].nodes} == {3}


def test_maker_fgraph_exists():
    x = vec(name="x")
    f = function([x], x * 2, mode=PY)
    assert f.maker.fgraph is f.fgraph
    assert len(f.maker.fgraph.outputs) == 1
    assert len(f.maker.fgraph.inputs) == 1


# ------------------------------------------------------------------ input checking


def test_safe_upcast_is_accepted_and_downcast_rejected_unless_allowed():
    x = vec(name="x")
    f = function([x], x * 2, mode=PY)
    r = f(np.ones(3, dtype="float32"))
    assert r.dtype == np.float64
    xf = gt.tensor("float32", shape=(None,), name="xf")
    g = function([xf], xf * 2, mode=PY)
    with pytest.raises(TypeError) as info:
        g(np.ones(3))
    msg = str(info.value)
    assert "xf" in msg and "float64" in msg and "float32" in msg
    h = function([xf], xf * 2, mode=PY, allow_input_downcast=True)
    assert h(np.ones(3)).dtype == np.float32


def test_wrong_ndim_and_static_shape_mismatch():
    x = vec(name="x")
    f = function([x], x * 2, mode=PY)
    with pytest.raises(TypeError, match="dimensions"):
        f(np.ones((2, 2)))
    x3 = gt.tensor("float64", shape=(3,), name="x3")
    g = function([x3], x3 * 2, mode=PY)
    np.testing.assert_array_equal(g(np.ones(3)), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="x3") as info:
        g(np.ones(4))
    assert "4" in str(info.value) and "3" in str(info.value)


@pytest.mark.parametrize("bad", ["abc", None, {"a": 1}, object()])
def test_non_array_arguments_raise_a_clear_type_error(bad):
    x = vec(name="x")
    f = function([x], x * 2, mode=PY)
    with pytest.raises(TypeError, match=r"bad argument 0 \(x"):
        f(bad)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(-1000, 1000) | floats, min_size=1, max_size=6))
def test_python_lists_are_accepted(values):
    x = vec(name="x")
    f = _cached(("list", "x"), lambda: function([x], x * 2, mode=PY))
    np.testing.assert_array_equal(f(values), np.asarray(values, dtype="float64") * 2)


@settings(max_examples=30, deadline=None)
@given(a=arrays(), trust=st.booleans())
def test_trust_input_gives_the_same_results_on_valid_input(a, trust):
    f = _cached(("trust", trust), lambda: _vec_fn(trust))
    np.testing.assert_array_equal(f(a), a * 2 + 1)


def _vec_fn(trust):
    x = vec(name="x")
    return function([x], x * 2 + 1, mode=PY, trust_input=trust)


_CACHE: dict = {}


def _cached(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_node_error_names_the_node_types_shapes_strides_and_hint(vm):
    x, y = vec(name="x"), vec(name="y")
    f = function([x, y], x + y, mode=graphc.Mode(linker="py", optimizer=None, vm=vm))
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4)[::1])
    msg = str(info.value)
    assert "Apply node that caused the error" in msg
    assert "Inputs types: [Vector(float64), Vector(float64)]" in msg
    assert "Inputs shapes: [(3,), (4,)]" in msg
    assert "Inputs strides: [(8,), (8,)]" in msg
    assert "debugprint" in msg
    assert info.value.__cause__ is not None


_ARG_VALUES = st.one_of(
    floats,
    st.integers(-(2**40), 2**40),
    st.booleans(),
    floats.map(np.float64),
    floats.map(np.float32),
    st.integers(-100, 100).map(np.int64),
    st.integers(-100, 100).map(np.int8),
    floats.map(np.asarray),
    floats.map(lambda v: np.asarray(v, dtype="float32")),
    hnp.arrays(np.float64, st.integers(1, 3), elements=floats),
    hnp.arrays(np.float32, (2,), elements=st.floats(-10, 10, width=32)),
    hnp.arrays(np.int64, (3,), elements=st.integers(-5, 5)),
    hnp.arrays(np.float64, (2, 2), elements=floats),
    st.just([1.0, 2.0, 3.0]),
    st.just("1.0"),
    st.just(None),
)
_ARG_TYPES = [
    ("float64", ()), ("float32", ()), ("int64", ()), ("float64", (None,)), ("float64", (3,)),
    ("float32", (None,)), ("float64", (None, None)),
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(value=_ARG_VALUES, which=st.sampled_from(range(len(_ARG_TYPES))),
       downcast=st.sampled_from([None, True]), profiled=st.booleans())  # fmt: skip
def test_call_accepts_exactly_what_the_input_type_accepts(value, which, downcast, profiled):
    """The call's fast checks (plain and profiled call paths) agree with TensorType.filter."""
    dtype, shape = _ARG_TYPES[which]
    f = _cached(("filter", which, downcast, profiled),
                lambda: _identity_fn(dtype, shape, downcast, profiled))  # fmt: skip
    t = f.input_types[0]
    try:
        want = t.filter(value, allow_downcast=downcast)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            f(value)
        return
    got = f(value)
    assert type(got) is np.ndarray
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _identity_fn(dtype, shape, downcast, profiled):
    x = gt.tensor(dtype, shape=shape, name="x")
    return function([x], x, mode=PY, allow_input_downcast=downcast, profile=profiled)


def test_functions_pickled_with_the_old_loader_name_still_load():
    from graphc.compile.function import _rebuild_function

    x = vec(name="x")
    f = function([x], x * 2, mode=PY)
    loader, args = f.__reduce__()
    g = _rebuild_function(*args)
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    assert loader.__module__ == "graphc.compile.maker"


def test_compiling_pauses_the_cyclic_gc_and_restores_its_state():
    import gc
    import importlib

    function_module = importlib.import_module("graphc.compile.function")

    x = gt.dvector("x")
    seen = []
    real = function_module.FunctionMaker

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    was = gc.isenabled()
    try:
        function_module.FunctionMaker = spy
        gc.enable()
        graphc.function([x], gt.exp(x) * 2.0)
        assert seen == [False] and gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        graphc.function([x], gt.exp(x) * 2.0)
        assert seen == [False, False] and not gc.isenabled()
        gc.enable()
        with pytest.raises(ValueError, match="neither an input"):
            graphc.function([x], gt.exp(gt.dmatrix("y")))  # y is not an input
        assert gc.isenabled()
    finally:
        function_module.FunctionMaker = real
        if was:
            gc.enable()
        else:
            gc.disable()
