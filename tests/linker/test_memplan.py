"""The static memory plan: buffer assignment, and VMs that honour it."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker.memplan import NO_BUFFER, SlotInfo, plan_memory
from graphc.linker.program import NodeSpec, Program
from graphc.vm import cvm_available, make_vm

KINDS = ["py"] + (["cvm"] if cvm_available() else [])
# without fusion and in-place rewrites every intermediate is a node output the plan places
# (in place, (x + y) * z - x writes all three results into one array: see the last test)
NOFUSION = graphc.Mode(linker="c|py").excluding("fusion", "inplace")


def _capsule_free_program(n_nodes: int) -> Program:
    """A chain x -> n0 -> n1 -> ... where every node 'has' a C thunk (never run)."""
    nodes = [
        NodeSpec(name=f"n{i}", inputs=(i,), outputs=(i + 1,), perform=None, c_thunk=object())
        for i in range(n_nodes)
    ]
    return Program(n_nodes + 1, (0,), (n_nodes,), (), tuple(nodes))


def test_chain_alternates_two_buffers():
    prog = _capsule_free_program(5)
    plan = plan_memory(prog, [SlotInfo(key="f8")] * prog.n_storage)
    # slot 0 is the input, slot 5 the output; 1..4 alternate between two buffers
    assert plan.buffer_of == (NO_BUFFER, 0, 1, 0, 1, NO_BUFFER)
    assert plan.n_buffers == 2 and plan.n_planned == 4


def test_keys_and_aliases_are_respected():
    prog = _capsule_free_program(4)
    info = [SlotInfo(key="f8")] * prog.n_storage
    info[2] = SlotInfo(key="f4")  # a different dtype never shares
    plan = plan_memory(prog, info)
    assert plan.buffer_of[2] not in (plan.buffer_of[1], plan.buffer_of[3])
    # slot 2 views slot 1: slot 1 lives until slot 2's last reader, so 3 cannot take it
    info = [SlotInfo(key="f8")] * prog.n_storage
    info[2] = SlotInfo(key="f8", alias_of=1)
    plan = plan_memory(prog, info)
    assert plan.buffer_of[2] == NO_BUFFER
    assert plan.buffer_of[3] != plan.buffer_of[1]
    # an output viewing an intermediate makes it escape: no buffer for it
    info = [SlotInfo(key="f8")] * prog.n_storage
    info[4] = SlotInfo(key="f8", alias_of=3)
    assert plan_memory(prog, info).buffer_of[3] == NO_BUFFER


def _chain_function():
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    return graphc.function([x, y, z], (x + y) * z - x, mode=NOFUSION)


@pytest.mark.parametrize("kind", KINDS)
def test_steady_state_allocates_nothing(kind):
    f = _chain_function()
    assert f.linked.program.buffers.count(NO_BUFFER) < f.linked.program.n_storage
    vm = make_vm(f.linked.program, kind=kind)
    n = 200_000
    a, b, c = (np.random.default_rng(k).random(n) for k in range(3))
    expected = (a + b) * c - a
    vm([a, b, c])  # the first call fills the plan's buffers
    tracemalloc.start()
    try:
        for _ in range(3):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            (out,) = vm([a, b, c])
            growth = tracemalloc.get_traced_memory()[1] - before
            np.testing.assert_array_equal(out, expected)
            # the intermediates in the plan's buffers, the output in the last call's
            # (dropped by the caller each time)
            assert growth < 4096
            del out
    finally:
        tracemalloc.stop()
    assert vm.plan_bytes() == 2 * a.nbytes  # two alternating intermediates, kept


@pytest.mark.parametrize("kind", KINDS)
def test_profiled_peak_matches_tracemalloc(kind):
    f = _chain_function()
    vm = make_vm(f.linked.program, kind=kind)
    vm.set_profiling(memory=True)
    a, b, c = (np.full(100_000, float(k)) for k in range(3))
    for call in range(3):  # the first call allocates the buffers, later ones reuse them
        vm.reset_stats()
        held = vm.held_bytes()  # the plan's buffers and the last output, kept for this call
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            (out,) = vm([a, b, c])
            traced = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        # the VM's peak counts the plan's buffers held from the start of the call, and the
        # output written into the array the call before returned (the caller dropped it)
        grown = vm.stats()["peak_bytes"] - held
        assert abs(grown - traced) < 4096, (call, grown, traced)
        assert held == (0 if call == 0 else 3 * a.nbytes)
        del out


@pytest.mark.parametrize("kind", KINDS)
def test_plan_agrees_with_gc_free_and_py(kind):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    t = T.exp(x)
    outs = [t * 2, t.sum(), T.tanh(t) + y, (x.T * 3).T - y]
    f = graphc.function([x, y], outs, mode=NOFUSION)
    vm = make_vm(f.linked.program, kind=kind)
    rng = np.random.default_rng(0)
    for shape in [(3, 4), (3, 4), (5, 2), (1, 1), (0, 3)]:
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        got = vm([a, b])
        want = [np.exp(a) * 2, np.exp(a).sum(), np.tanh(np.exp(a)) + b, a * 3 - b]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_returned_outputs_never_reused(kind):
    x = T.dvector("x")
    f = graphc.function([x], [T.exp(x) + 1, (T.exp(x) + 1) * 2], mode=NOFUSION)
    vm = make_vm(f.linked.program, kind=kind)
    first = vm([np.zeros(10)])
    kept = [v.copy() for v in first]
    vm([np.ones(10)])
    for v, k in zip(first, kept):
        np.testing.assert_array_equal(v, k)


def _long_chain(steps: int):
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    out = x
    for _ in range(steps):
        out = (out + y) * z
    return graphc.function([x, y, z], out, mode=NOFUSION)


@pytest.mark.parametrize("kind", KINDS)
def test_chain_of_unknown_lengths_alternates_two_buffers(kind):
    """x, y and z have no static length; an Elemwise of them has their length unless one
    is broadcast at run time, so 2 * 8 - 1 intermediates share two buffers, not 15."""
    f = _long_chain(8)
    buffers = set(f.linked.program.buffers) - {NO_BUFFER}
    assert buffers == {0, 1}
    vm = make_vm(f.linked.program, kind=kind)
    a, b, c = (np.random.default_rng(k).random(50_000) for k in range(3))
    want = a
    for _ in range(8):
        want = (want + b) * c
    for _ in range(2):
        np.testing.assert_array_equal(vm([a, b, c])[0], want)
    assert vm.plan_bytes() == 2 * a.nbytes


@pytest.mark.parametrize("kind", KINDS)
def test_a_runtime_broadcast_against_the_plan_is_computed_right(kind):
    """The plan guesses equal lengths; y or z of length 1 (broadcast at run time) makes
    values of other lengths pass through the shared buffers, call after call."""
    vm = make_vm(_long_chain(4).linked.program, kind=kind)
    rng = np.random.default_rng(0)
    for nx, ny, nz in [(6, 6, 6), (6, 1, 6), (1, 6, 1), (1, 1, 6), (6, 6, 1), (6, 6, 6)]:
        a, b, c = rng.random(nx), rng.random(ny), rng.random(nz)
        want = a
        for _ in range(4):
            want = (want + b) * c
        (got,) = vm([a, b, c])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_no_plan_without_gc():
    f = _chain_function()
    vm = make_vm(f.linked.program, kind="py", allow_gc=False)
    vm([np.ones(4)] * 3)
    assert vm.plan_bytes() == 0


def test_profile_reports_the_plan():
    from graphc.profile.data.serialize import dumps, loads
    from graphc.profile.render.text import plan_lines

    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    with graphc.config.change_flags(profile_memory=True):
        f = graphc.function([x, y, z], (x + y) * z - x, mode=NOFUSION, profile=True)
    a = np.ones(1000)
    for _ in range(2):
        f(a, a, a)
    f.profile.refresh()
    fp = f.profile.functions[0]
    assert fp.memory_plan is not None
    assert (fp.memory_plan.buffers, fp.memory_plan.slots) == (2, 2)
    assert fp.memory_plan.bytes == f.vm.plan_bytes() == 2 * a.nbytes
    assert "2 intermediates in 2 reused buffers" in plan_lines(fp.memory_plan)[0]
    (back,), _ = loads(dumps([fp], None))
    assert back.memory_plan == fp.memory_plan


@pytest.mark.parametrize("kind", KINDS)
def test_in_place_chain_needs_no_buffer_and_allocates_only_its_output(kind):
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    mode = graphc.Mode(linker="c|py").excluding("fusion")
    f = graphc.function([x, y, z], (x + y) * z - x, mode=mode)
    prog = f.linked.program
    assert [len(n.destroys) for n in prog.nodes] == [0, 1, 1]  # mul and sub overwrite
    assert prog.buffers.count(NO_BUFFER) == prog.n_storage  # the chain's array escapes
    vm = make_vm(prog, kind=kind)
    a, b, c = (np.random.default_rng(k).random(200_000) for k in range(3))
    vm([a, b, c])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        (out,) = vm([a, b, c])
        growth = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, (a + b) * c - a)
    assert out.nbytes <= growth < out.nbytes + 4096
