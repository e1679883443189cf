"""The call path of a profiled function, chosen when it is built: every call timed under the
call lock, or (profile_sample=N) every N-th call timed and the others made as unprofiled
calls. Counts stay exact from several threads, no update is lost, and a timed call that
fails still leaves the VM recording nothing for the calls after it."""

from __future__ import annotations

import pickle
import sys
import threading

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile.callable import Function
from graphc.graph.basic import Apply, Op
from graphc.profile import ProfileStats


class _SlowCopy(Op):
    """A Python node that yields the GIL inside the VM (threads meet there)."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        total = 0
        for k in range(200):  # bytecodes: the interpreter may switch threads here
            total += k
        out[0][0] = inputs[0].copy()


def _profiled(fn_inputs, outputs, sample: int, **kw) -> tuple[Function, ProfileStats]:
    stats = ProfileStats(atexit_print=False)
    with graphc.config.change_flags(profile_sample=sample):
        f = graphc.function(fn_inputs, outputs, profile=stats, **kw)
    return f, stats


@pytest.mark.parametrize("sample", [1, 3])
def test_a_profiled_function_is_still_a_function(sample):
    x = T.dvector("x")
    f, stats = _profiled([x], T.exp(x) + 1, sample, name="p")
    assert isinstance(f, Function) and type(f) is not Function  # its own __call__
    assert type(graphc.function([x], T.exp(x) + 1)) is Function  # unprofiled: untouched
    xv = np.linspace(0, 1, 5)
    np.testing.assert_allclose(f(xv), np.exp(xv) + 1)
    np.testing.assert_allclose(f(x=xv), np.exp(xv) + 1)  # keywords take the same path
    g = f.copy()
    assert type(g) is not Function and g.profile is not None  # profiled too
    np.testing.assert_allclose(g(xv), np.exp(xv) + 1)
    h = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(h(xv), np.exp(xv) + 1)


def test_a_timed_call_that_fails_leaves_the_vm_recording_nothing_after_it():
    x = T.dvector("x")
    f, stats = _profiled([x], T.exp(x) * 2, 2, name="s")
    with pytest.raises(TypeError):
        f("not an array")  # call 1 is timed; its arguments are refused before the VM
    for _ in range(3):  # calls 2 and 4 untimed, 3 timed
        f(np.ones(4))
    stats.refresh()
    (fp,) = stats.functions
    assert fp.calls == 1  # the refused call never ran: only call 3 was timed
    assert all(n.calls == 1 for n in fp.nodes)  # the VM recorded call 3 alone


class _Refuses(Op):
    """A node that raises on an input of 4 elements."""

    __props__ = ()

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        if inputs[0].size == 4:
            raise ValueError("four elements refused")
        out[0][0] = inputs[0] * 2


def test_a_timed_call_that_raises_in_the_vm_still_counts():
    x = T.dvector("x")
    f, stats = _profiled([x], _Refuses()(T.exp(x)), 1, name="t")
    f(np.ones(3))
    with pytest.raises(ValueError, match="four elements refused"):
        f(np.ones(4))
    stats.refresh()
    (fp,) = stats.functions
    assert fp.calls == 2 and fp.vm_ns <= fp.call_ns  # counted and timed though it raised
    assert fp.nodes[0].calls == 2  # exp ran in both calls


def _two_threads(call, n_calls: int) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work():
        try:
            barrier.wait()
            for _ in range(n_calls):
                call()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL over often: the calls meet
    try:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(old)
    assert errors == []


@pytest.mark.parametrize("sample", [1, 4])
def test_calls_from_two_threads_are_all_counted(sample):
    x = T.dvector("x")
    f, stats = _profiled([x], _SlowCopy()(T.exp(x)) * 2, sample, name="m")
    xv = np.ones(50)
    _two_threads(lambda: np.testing.assert_allclose(f(xv), np.exp(xv) * 2), 150)
    stats.refresh()
    (fp,) = stats.functions
    assert fp.calls + fp.unsampled_calls == 300  # each call timed or counted, none lost
    if sample > 1:
        assert fp.calls == 75  # calls 1, 5, 9, ..., 297
    assert fp.vm_ns <= fp.call_ns


@pytest.mark.parametrize("sample", [1, 4])
def test_profiled_calls_with_updates_from_two_threads_lose_none(sample):
    c = graphc.shared(np.int64(0), name="c")
    x = T.dvector("x")
    f, stats = _profiled([x], [c * 1, _SlowCopy()(x).sum()], sample,
                         updates=[(c, c + 1)], name="upd")  # fmt: skip
    seen: list[int] = []
    xv = np.ones(8)
    _two_threads(lambda: seen.append(int(f(xv)[0])), 120)
    assert c.get_value() == 240 and sorted(seen) == list(range(240))
    stats.refresh()
    (fp,) = stats.functions
    assert fp.calls + fp.unsampled_calls == 240
