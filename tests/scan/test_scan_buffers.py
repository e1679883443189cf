"""A loop's state and stacked-output buffers are written again on the next call when
nothing else holds them (the memory plan lends them back)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.linker.program import NodeSpec
from graphc.scan_module.op import Scan
from graphc.vm import cvm_available, make_vm

KINDS = ["py"] + (["cvm"] if cvm_available() else [])
STEPS, WIDTH = 200, 500  # a stacked output of 800 KB


def _loop_function(outputs: str = "reduced"):
    """h[t] = h[t-1] * a + x[t] and y[t] = h[t] * x[t]; the function returns sums of
    both ("reduced": the loop's buffers are intermediates) or the stacked arrays."""
    x, h0, a = T.dmatrix("x"), T.dvector("h0"), T.dscalar("a")
    (h, y), _ = graphc.scan(lambda xt, hp, a: (hp * a + xt, (hp * a + xt) * xt),
                            sequences=x, outputs_info=[h0, None], non_sequences=a)  # fmt: skip
    outs = [h.sum(), y.sum(axis=0)] if outputs == "reduced" else [h, y]
    return graphc.function([x, h0, a], outs)


def _reference(x, h0, a):
    h, ys = h0, []
    hs = []
    for row in x:
        h = h * a + row
        hs.append(h)
        ys.append(h * row)
    return np.array(hs), np.array(ys)


def _values(seed: int, steps: int = STEPS):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(steps, WIDTH)), rng.normal(size=WIDTH), np.float64(0.9)


def _scan_slots(f) -> list[int]:
    program = f.linked.program
    node = next(i for i, n in enumerate(f.maker.fgraph.toposort()) if isinstance(n.op, Scan))
    return list(program.nodes[node].outputs)


@pytest.mark.parametrize("kind", KINDS)
def test_loop_writes_into_the_last_calls_buffers(kind):
    f = _loop_function()
    program = f.linked.program
    planned = [program.buffers[s] for s in _scan_slots(f)]
    assert all(b >= 0 for b in planned)  # the state and the stacked output
    vm = make_vm(program, kind=kind)
    vm(list(_values(0)))  # the first call allocates the buffers
    tracemalloc.start()
    try:
        for seed in (1, 2, 3):
            vals = _values(seed)
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            total, ysum = vm(list(vals))
            growth = tracemalloc.get_traced_memory()[1] - before
            hs, ys = _reference(*vals)
            np.testing.assert_allclose(total, hs.sum(), rtol=1e-12)
            np.testing.assert_allclose(ysum, ys.sum(axis=0), rtol=1e-12)
            # no new (STEPS, WIDTH) array: the loop wrote into last call's buffers
            assert growth < STEPS * WIDTH * 8 // 4, growth
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_a_loop_of_another_length_gets_new_buffers(kind):
    f = _loop_function()
    vm = make_vm(f.linked.program, kind=kind)
    for steps in (STEPS, 3, STEPS, 1, 0, STEPS):
        vals = _values(steps, steps)
        total, ysum = vm(list(vals))
        hs, ys = _reference(*vals)
        hs = hs if steps else np.zeros((0, WIDTH))
        ys = ys if steps else np.zeros((0, WIDTH))
        np.testing.assert_allclose(total, hs.sum(), rtol=1e-12)
        np.testing.assert_allclose(ysum, ys.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("allow_gc", [True, False])
def test_arrays_the_caller_holds_are_never_written_again(kind, allow_gc):
    f = _loop_function("arrays")
    vm = make_vm(f.linked.program, kind=kind, allow_gc=allow_gc)
    held = [vm(list(_values(seed))) for seed in range(3)]
    for seed, (h, y) in enumerate(held):
        hs, ys = _reference(*_values(seed))
        np.testing.assert_allclose(h, hs, rtol=1e-12)
        np.testing.assert_allclose(y, ys, rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("allow_gc", [True, False])
def test_a_view_the_caller_holds_keeps_its_values(kind, allow_gc):
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    h, _ = graphc.scan(lambda xt, hp: hp + xt, sequences=x, outputs_info=h0)
    f = graphc.function([x, h0], [h[-1], h[1:3]])  # a view of the loop's buffer
    vm = make_vm(f.linked.program, kind=kind, allow_gc=allow_gc)
    views = [vm([np.full((5, 4), float(k)), np.zeros(4)])[1] for k in range(1, 4)]
    for k, v in enumerate(views, 1):
        np.testing.assert_array_equal(v, np.cumsum(np.full((5, 4), float(k)), axis=0)[1:3])


def test_only_a_perform_node_declares_it_reuses_outputs():
    with pytest.raises(ValueError, match="reuses_outputs"):
        NodeSpec(name="n", inputs=(0,), outputs=(1,), c_thunk=object(), reuses_outputs=True)
    NodeSpec(name="n", inputs=(0,), outputs=(1,), perform=lambda i, o: None, reuses_outputs=True)


@pytest.mark.parametrize("kind", KINDS)
def test_the_profiled_peak_keeps_counting_a_viewed_buffer(kind):
    """``h`` without its initial row is a view of the loop's state buffer. When the view's
    slot was cleared it took the buffer's bytes with it, though the buffer went back to
    the plan's pool: the profiled peak fell below what the call held from its start."""
    f = _loop_function()
    vm = make_vm(f.linked.program, kind=kind)
    vm.set_profiling(memory=True)
    vals = list(_values(0))
    for call in range(3):
        vm.reset_stats()
        held = vm.held_bytes()  # the plan's buffers and the last outputs, from call 1 on
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            out = vm(vals)
            traced = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        grown = vm.stats()["peak_bytes"] - held
        assert grown >= 0, (call, grown)
        # the loop's own per-step temporaries (a few rows) are not a node's output
        assert abs(grown - traced) < 16 * 1024, (call, grown, traced)
        # h (its initial row and STEPS), y (STEPS rows), x's shape (2 int64); the outputs
        # returned last call: y's sum (a row) and h's (a scalar)
        plan, outs = (2 * STEPS + 1) * WIDTH * 8 + 16, WIDTH * 8 + 8
        assert held == (0 if call == 0 else plan + outs)
        del out
