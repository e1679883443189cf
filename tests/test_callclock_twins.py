"""The call clock's two implementations count the same: ``_cvm.CallClock`` (C) and its
Python twin ``PyCallClock``, driven through one sequence of calls, agree on every count,
on which calls were timed and on the events they raise; only the times differ."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.compile import profiling
from graphc.profile import ProfileStats
from graphc.vm import _cvm
from graphc.vm.callclock import PyCallClock
from graphc.vm.callclock import budget_every as py_budget_every
from graphc.vm.pyvm import FunctionBusy

CLOCKS = {"c": _cvm.CallClock, "py": PyCallClock}
#: what a call does: returns, raises in its VM (counted), raises before its VM ran or
#: finds the VM busy (neither counted)
#: (runs of 4: each kind falls on a timed call at every sampling rate tested)
SCRIPT = ["ok"] * 5 + ["vm_error"] * 4 + ["ok", "early_error"] * 4 + ["busy"] * 4 + ["ok"] * 9


def _vm(values: list) -> list:
    if values[0] == "vm_error":
        raise ValueError("in the VM")
    return [sum(range(200))]


def _body(clock: Any) -> Callable:
    def body(args: tuple, kwargs: Any) -> Any:
        if args[0] == "early_error":
            raise TypeError("before the VM")
        if args[0] == "busy":
            raise FunctionBusy()
        return clock.time_vm(_vm, [args[0]])

    return body


def _drive(kind: str, every: int, budget: float = 0.0, ignore_first: bool = False) -> list:
    """Run SCRIPT through a clock as a profiled Function does (a timed function calls
    ``time_call``; a sampled one ``tick``, then ``time_call`` and ``disarm``, or
    ``time_reference``); after each call, everything the clock exposes but times."""
    log: list = []
    clock = CLOCKS[kind](None, every, None)

    def on_event(calls: int, call_ns: int, vm_ns: int) -> None:  # as FunctionProfiler
        log.append(("event", calls, call_ns >= vm_ns >= 0))
        if ignore_first and calls == 1:
            clock.uncount_last()
        clock.next_event = 2 * calls + 1

    clock.on_event = on_event
    clock.hook = lambda call_ns, vm_ns: log.append(("hook", call_ns >= vm_ns >= 0))
    clock.arm = lambda on: log.append(("arm", on))
    if budget:
        clock.budget, clock.cost_ticks = budget, 1e15  # a cost above any call: every = 1/budget
    body = _body(clock)
    for what in SCRIPT:
        turn = clock.tick() if every > 1 or budget else 1
        try:
            if turn == 1 and every == 1 and not budget:
                clock.time_call(body, (what,), None)
            elif turn == 1:
                try:
                    clock.time_call(body, (what,), None)
                finally:
                    clock.disarm()
            elif turn == 2:
                clock.time_reference(lambda a, k: _vm(list(a)), (what,), None)
            else:
                _vm([what])
        except (ValueError, TypeError, FunctionBusy) as e:
            log.append(("raised", type(e).__name__, turn))
        calls, call_ns, vm_ns, vm_sq, untimed = clock.counts()
        assert call_ns >= vm_ns >= 0 and vm_sq >= 0
        state = (clock.calls, clock.untimed, clock.every, clock.countdown, clock.next_event,
                 clock.ref_calls)  # fmt: skip
        log.append((what, turn, calls, untimed, *state, calls > 0 and vm_ns > 0))
    clock.reset()
    log.append(("reset", clock.counts()[0], clock.counts()[4], clock.ref_calls, clock.every))
    return log


@pytest.mark.parametrize(
    "every,budget,ignore_first",
    [(1, 0.0, False), (1, 0.0, True), (3, 0.0, False), (4, 0.0, True), (2, 0.25, False)],
)
def test_both_clocks_count_the_same_calls(every, budget, ignore_first):
    c = _drive("c", every, budget, ignore_first)
    py = _drive("py", every, budget, ignore_first)
    assert c == py
    raised = {e[1] for e in c if e[0] == "raised" and e[2] == 1}
    assert raised == {"ValueError", "TypeError", "FunctionBusy"}  # among the timed calls
    assert c[-2][2] > 0  # timed calls counted


def test_budget_every_is_the_same_function():
    grid = [0.0, 1e-9, 0.5, 1.0, 3.0, 7.0, 1e3, 1e9]
    for call in grid:
        for cost in grid:
            for budget in [0.0, 0.01, 0.05, 0.2, 0.25, 0.5, 0.99]:
                assert _cvm.budget_every(call, cost, budget) == py_budget_every(
                    call, cost, budget
                ), (call, cost, budget)


def _function(stats: ProfileStats, linker: str, loop: bool):
    """An element-wise product that raises in the VM when ``y`` has the wrong length and,
    with ``loop``, a loop (scan) whose steps the profile counts (its VMs are armed from
    Python; a function without one has its VM armed by the clock)."""
    x, h0, y = T.dmatrix("x"), T.dvector("h0"), T.dvector("y")
    out = (h0 * y).sum() + x.sum()
    if loop:
        hs, _ = graphc.scan(lambda r, h: T.tanh(h + r), sequences=x, outputs_info=h0)
        out = out + hs[-1].sum()
    mode = graphc.Mode(linker=linker, optimizer="fast_run")
    return graphc.function([x, h0, y], out, mode=mode, profile=stats, name="twin")


def _profile_counts(kind: str, linker: str, sample: int, loop: bool, monkeypatch) -> tuple:
    """Every count of a Function's profile after the same calls, with ``kind``'s clock."""
    real = profiling.make_call_clock
    if kind == "py":
        twin = lambda vm, every, on_event: (PyCallClock(vm, every, on_event), 1.0)  # noqa: E731
        monkeypatch.setattr(profiling, "make_call_clock", twin)
    try:
        stats = ProfileStats(atexit_print=False)
        with graphc.config.change_flags(profile_sample=sample):
            f = _function(stats, linker, loop)
            for i in range(23):
                y = np.ones(2 if i in (6, 13) else 3)  # calls 7 and 14 raise in the VM
                try:
                    f(np.ones((5, 3)), np.zeros(3), y)
                except ValueError:
                    pass
                if i == 9:
                    with pytest.raises(TypeError):  # refused before the VM: not a call
                        f(np.ones(3), np.zeros(3), y)
        stats.refresh()
    finally:
        monkeypatch.setattr(profiling, "make_call_clock", real)
    out = []
    for fp in stats.functions:
        out.append(_fp_counts(fp))
    return tuple(out)


def _fp_counts(fp) -> tuple:
    assert fp.call_ns >= fp.vm_ns >= 0
    nodes = [(n.position, n.apply_name, n.calls, n.first_calls, n.n_below_resolution >= 0,
              _fp_counts(n.inner) if n.inner is not None else None) for n in fp.nodes]  # fmt: skip
    timed = (fp.call_ns > 0) == (fp.calls > 0)
    return (fp.name, fp.vm_kind, fp.calls, fp.first_calls, fp.unsampled_calls,
            fp.sample_every, fp.waited_calls, timed, nodes)  # fmt: skip


@pytest.mark.parametrize("linker", ["c|py", "py"])
@pytest.mark.parametrize("sample", [1, 4])
@pytest.mark.parametrize("loop", [True, False])
def test_a_function_counts_the_same_with_either_clock(linker, sample, loop, monkeypatch):
    c = _profile_counts("c", linker, sample, loop, monkeypatch)
    py = _profile_counts("py", linker, sample, loop, monkeypatch)
    assert c == py
    (fp,) = c
    assert fp[2] > 0 and any(node[5] is not None for node in fp[8]) == loop
