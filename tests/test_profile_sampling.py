"""Sampled profiles (profile_sample=N): which calls are timed, the scaled estimates, and
their intervals against a full profile of the same run."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, SummaryOptions
from graphc.profile.data.steady import steady_state
from graphc.profile.render.text import render_summary
from graphc.profile.summaries.sampling import (
    Z95,
    node_estimate,
    scaled,
    total_estimate,
    vm_estimate,
)


def test_every_nth_call_is_timed_and_the_rest_counted():
    x = T.dvector("x")
    stats = ProfileStats(atexit_print=False)
    with graphc.config.change_flags(profile_sample=4):
        f = graphc.function([x], T.exp(x) * 2 + 1, profile=stats, name="s")
    for _ in range(41):
        f(np.ones(1000))
    stats.refresh()
    (fp,) = stats.functions
    # calls 1, 5, 9, ..., 41 are timed: 11 of 41 (hand count)
    assert (fp.calls, fp.unsampled_calls, fp.sample_every) == (11, 30, 4)
    assert all(n.calls == 11 for n in fp.nodes)
    est = scaled(steady_state(fp))
    assert est.calls == 40 and all(n.calls == 40 for n in est.nodes)  # first call apart
    assert est.nodes[0].ns_total == pytest.approx(steady_state(fp).nodes[0].ns_total * 4)
    # counted in the tables (the default), the first call stands for itself alone: the 10
    # other timed calls stand for the 40 after it
    est = scaled(fp)
    assert est.calls == 41 and all(n.calls == 41 for n in est.nodes)
    n = fp.nodes[0]
    assert est.nodes[0].ns_total == pytest.approx(n.first_ns + (n.ns_total - n.first_ns) * 4)
    text = render_summary(stats, SummaryOptions(n_apply=5, n_ops=3, width=100))
    assert "Sampled s: 1 call in 4 timed (10 of 40)" in text
    assert "Time in 41 calls to Function.__call__" in text  # every call the program made


def test_node_interval_by_hand():
    node = copy.copy(steady_state_node())
    node.calls, node.ns_total, node.ns_samples = 4, 10, [1, 2, 3, 4]
    est = node_estimate(node, 2.5)  # 4 timed calls standing for 10
    sd = np.std([1, 2, 3, 4], ddof=1)
    assert est.ns == 25
    assert est.half_width == pytest.approx(Z95 * 10 * sd / 2 * np.sqrt(1 - 4 / 10))


def steady_state_node():
    from profile_factory import four_node_function

    return four_node_function().nodes[0]


def test_estimates_cover_the_full_profile_of_the_same_run():
    # a full profile of a run (every call timed) is the truth; the calls a sampled profile
    # times (every 5th after the first) give the estimate, whose interval must hold it
    seen: list[int] = []
    x = T.dvector("x")
    y = T.exp(x) * 2 + T.log1p(x * x) + T.tanh(x) * T.sin(x) + T.sqrt(x + 1)
    stats = ProfileStats(atexit_print=False)
    f = graphc.function([x], y.sum() + y.max(), profile=stats, name="ew")
    f._clock.hook = lambda call_ns, vm_ns: seen.append(vm_ns)  # each call's VM time
    # 7 sizes in turn (below the OpenMP split): the calls' times vary for a reason of
    # their own, and each call is long enough that the shared machine's stalls (a few ms)
    # are a small part of the run
    rng = np.random.default_rng(0)
    batches = [rng.random(n) for n in (5000, 20000, 80000, 160000, 120000, 40000, 10000)]
    for i in range(401):
        f(batches[i % 7])
    stats.refresh()
    (fp,) = stats.functions
    # (each call converted from clock ticks as the calibration then stood)
    assert sum(seen) == pytest.approx(fp.vm_ns, rel=1e-3) and len(seen) == fp.calls == 401
    steady = seen[1:]  # the summaries leave the first call out
    every = 5  # prime to the 7 sizes: the timed calls see every size equally often
    timed = steady[every - 1 :: every]
    sampled = copy.copy(fp)  # what profile_sample=5 records of this run
    sampled.calls = 1 + len(timed)
    sampled.unsampled_calls = len(steady) - len(timed)
    sampled.vm_ns = seen[0] + sum(timed)
    sampled.sampled_vm_ns_sq = float(seen[0]) ** 2 + sum(float(t) ** 2 for t in timed)
    sampled.first_calls, sampled.first_vm_ns = 1, seen[0]
    est = vm_estimate(sampled)
    assert est.half_width is not None and 0 < est.half_width < est.ns  # not vacuous
    assert abs(est.ns - sum(steady)) <= est.half_width, (est, sum(steady))
    assert est.ns == pytest.approx(np.mean(timed) * len(steady))


def test_vm_interval_by_hand():
    values = [10.0, 12.0, 9.0, 15.0]
    est = total_estimate(4, 20, sum(values), sum(v * v for v in values))
    sd = np.std(values, ddof=1)
    assert est.ns == pytest.approx(np.mean(values) * 20)
    assert est.half_width == pytest.approx(Z95 * 20 * sd / 2 * np.sqrt(1 - 4 / 20))


def test_a_sample_rate_below_one_is_refused():
    x = T.dvector("x")
    with graphc.config.change_flags(profile_sample=0):
        with pytest.raises(ValueError, match="profile_sample must be >= 1"):
            graphc.function([x], x * 2, profile=ProfileStats(atexit_print=False))
