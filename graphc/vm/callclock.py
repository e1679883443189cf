"""The per-call clock of a profiled Function: ``_cvm.CallClock`` (C counters, the
profiling clock's ticks) or, without the extension, :class:`PyCallClock`, its twin on
``perf_counter_ns`` (one tick is one nanosecond)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from graphc.vm.pyvm import FunctionBusy

__all__ = ["PyCallClock", "budget_every", "make_call_clock", "clock_read_ns"]

_clock = time.perf_counter_ns


def _moved(mean: float, ticks: int) -> float:
    """A moving mean (weight 1/8) with ``ticks`` added; the first value as is."""
    return float(ticks) if mean <= 0.0 else mean + (ticks - mean) * 0.125


def budget_every(call: float, cost: float, budget: float) -> int:
    """1 call in how many to time so that timing costs at most ``budget`` of the run time
    (``call``: a timed call's mean duration; ``cost``: what timing adds to it)."""
    if budget <= 0.0 or cost <= 0.0:
        return 1
    base = call - cost if call > cost else cost
    n = cost / (budget * base)
    return 1 if n <= 1.0 else min(math.ceil(n), 1_000_000)


class PyCallClock:
    """``_cvm.CallClock`` in Python (the same attributes and methods). As the C clock arms
    a Cython VM itself, this one arms a ``vm`` that has ``arm`` (only the Cython VM has),
    besides calling ``self.arm``."""

    def __init__(self, vm: Any, every: int = 1, on_event: Callable | None = None):
        self._vm_arm: Callable | None = getattr(vm, "arm", None)
        self.calls = self.call_ticks = self.vm_ticks = self.untimed = 0
        self.vm_sq_ticks = 0.0
        self.every, self.countdown, self.next_event = every, 1, 1
        self.on_event = on_event
        self.hook: Callable | None = None
        self.arm: Callable | None = None
        self.budget = self.cost_ticks = 0.0
        self.ref_calls = self.ref_ticks = 0
        self.timed_mean = self.ref_mean = 0.0
        self._ref_due = False
        self._last_call = self._last_vm = 0
        self._vm_started = False

    def tick(self) -> int:
        n = self.countdown - 1
        if n > 0:
            self.countdown = n
            self.untimed += 1
            if self._ref_due:
                self._ref_due = False
                return 2
            return 0
        self.countdown = self.every
        self._set_armed(True)
        return 1

    def time_reference(self, body: Callable, args: Any, kwargs: Any) -> Any:
        t0 = _clock()
        result = body(args, kwargs)
        ticks = _clock() - t0
        self.ref_ticks += ticks
        self.ref_calls += 1
        self.ref_mean = _moved(self.ref_mean, ticks)
        return result

    def adapt(self) -> None:
        cost = self.cost_ticks
        if self.ref_mean > 0.0 and self.timed_mean - self.ref_mean > cost:
            cost = self.timed_mean - self.ref_mean
        self.every = budget_every(self.timed_mean, cost, self.budget)
        if self.countdown > self.every:  # (set at this call's tick, from the old N)
            self.countdown = self.every

    def disarm(self) -> None:
        self._set_armed(False)

    def _set_armed(self, on: bool) -> None:
        if self._vm_arm is not None:
            self._vm_arm(on)
        if self.arm is not None:
            self.arm(on)

    def time_call(self, body: Callable, args: Any, kwargs: Any) -> Any:
        t0 = _clock()
        self._last_vm = 0
        self._vm_started = False
        try:
            result = body(args, kwargs)
        except FunctionBusy:
            raise
        except BaseException:
            if self._vm_started:
                self._count(_clock() - t0)
            raise
        self._count(_clock() - t0)
        return result

    def time_vm(self, vm: Callable, values: list) -> Any:
        t0 = _clock()
        self._vm_started = True
        try:
            return vm(values)
        finally:
            self._last_vm = _clock() - t0

    def _count(self, ticks: int) -> None:
        vm = self._last_vm
        self.calls += 1
        self.call_ticks += ticks
        self.vm_ticks += vm
        self.vm_sq_ticks += float(vm) * vm
        self._last_call = ticks
        if self.budget > 0.0:
            self._ref_due = True
            self.timed_mean = _moved(self.timed_mean, ticks)
            self.adapt()
        if self.calls >= self.next_event and self.on_event is not None:
            self.on_event(self.calls, ticks, vm)
        if self.hook is not None:
            self.hook(ticks, vm)

    def uncount_last(self) -> None:
        self.calls -= 1
        self.call_ticks -= self._last_call
        self.vm_ticks -= self._last_vm
        self.vm_sq_ticks -= float(self._last_vm) ** 2

    def last_ns(self) -> tuple[int, int]:
        return self._last_call, self._last_vm

    def counts(self) -> tuple[int, int, int, float, int]:
        return self.calls, self.call_ticks, self.vm_ticks, self.vm_sq_ticks, self.untimed

    def reset(self) -> None:
        self.calls = self.call_ticks = self.vm_ticks = self.untimed = 0
        self.ref_calls = self.ref_ticks = 0
        self.timed_mean = self.ref_mean = 0.0
        self.vm_sq_ticks = 0.0
        self._last_call = self._last_vm = 0


def _py_read_ns() -> float:
    t0 = _clock()
    for _ in range(4096):
        _clock()
    return (_clock() - t0) / 4096.0


def make_call_clock(vm: Any, every: int, on_event: Callable | None) -> tuple[Any, float]:
    """A call clock for a function running ``vm`` and its ticks per nanosecond."""
    try:
        from graphc.vm import _cvm
    except ImportError:
        return PyCallClock(vm, every, on_event), 1.0
    return _cvm.CallClock(vm, every, on_event), _cvm.ticks_per_ns()


def clock_read_ns() -> float:
    """What one read of the profiling clock costs, in nanoseconds."""
    try:
        from graphc.vm import _cvm
    except ImportError:
        return _py_read_ns()
    return float(_cvm.clock_read_ns())
