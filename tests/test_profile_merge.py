"""Merging is addition; live profiles are refreshed before use."""

from __future__ import annotations

import io

from profile_factory import four_node_function

from graphc.profile import OptimizerProfile, PassRecord, ProfileStats, RewriteRecord
from graphc.profile.data.merge import merge_functions


def _halves():
    """One function's counters split over two runs."""
    a, b = four_node_function(), four_node_function()
    a.calls, b.calls = 4, 6
    a.call_ns, b.call_ns = 3_000_000, 5_000_000
    a.vm_ns, b.vm_ns = 2_000_000, 4_000_000
    for x, y in zip(a.nodes, b.nodes):
        x.calls, y.calls = 4, 6
        x.ns_total, y.ns_total = x.ns_total * 2 // 5, x.ns_total * 3 // 5
        x.ns_samples, y.ns_samples = [1, 2], [3]
        x.ns_min, y.ns_min = 7, 5
    return a, b


def test_sum_of_parts():
    a, b = _halves()
    total = (ProfileStats([a]) + ProfileStats([b])).functions
    assert len(total) == 1
    m = total[0]
    full = four_node_function()
    assert (m.calls, m.call_ns, m.vm_ns) == (10, 8_000_000, 6_000_000)
    assert [n.calls for n in m.nodes] == [10, 10, 10, 10]
    assert [n.ns_total for n in m.nodes] == [n.ns_total for n in full.nodes]
    assert [n.ns_samples for n in m.nodes] == [[1, 2, 3]] * 4
    assert [n.ns_min for n in m.nodes] == [5] * 4
    assert m.compile.total_ns == 2 * full.compile.total_ns
    assert m.compile.n_apply == 4


def test_sum_renders_like_the_whole():
    a, b = _halves()
    for n in a.nodes + b.nodes:
        n.ns_samples, n.ns_min = [], 0
    full = four_node_function()
    for n in full.nodes:
        n.ns_samples, n.ns_min = [], 0
    full.compile = (ProfileStats([a]) + ProfileStats([b])).functions[0].compile
    out_sum, out_full = io.StringIO(), io.StringIO()
    (ProfileStats([a]) + ProfileStats([b])).summary(file=out_sum)
    ProfileStats([full]).summary(file=out_full)
    assert out_sum.getvalue() == out_full.getvalue()


def test_different_functions_stay_apart():
    f, g = four_node_function("f"), four_node_function("g")
    merged = ProfileStats([f]) + ProfileStats([g])
    assert [x.name for x in merged.functions] == ["f", "g"]
    h = four_node_function("f")
    h.nodes[0].apply_name = "sub(x, y)"  # same name, different graph
    assert len((ProfileStats([f]) + ProfileStats([h])).functions) == 2


def test_merge_does_not_mutate_inputs():
    a, b = _halves()
    ProfileStats([a]) + ProfileStats([b])
    assert a.calls == 4 and a.nodes[0].calls == 4


def test_flops_weighted_by_calls():
    a, b = _halves()
    a.nodes[0].flops_per_call, b.nodes[0].flops_per_call = 10.0, 20.0
    assert merge_functions(a, b).nodes[0].flops_per_call == (40 + 120) / 10


def test_optimizer_profiles_add():
    a, b = _halves()
    a.optimizer_profile = OptimizerProfile([PassRecord("p", 5)], [RewriteRecord("r", 2, 1, 7)])
    b.optimizer_profile = OptimizerProfile(
        [PassRecord("p", 1), PassRecord("q", 2)], [RewriteRecord("r", 1, 0, 3)]
    )
    opt = merge_functions(a, b).optimizer_profile
    assert opt == OptimizerProfile(
        [PassRecord("p", 6), PassRecord("q", 2)], [RewriteRecord("r", 3, 1, 10)]
    )


class _Live:
    def __init__(self, f):
        self.f, self.pulled = f, []

    def pull(self) -> None:
        self.pulled.append(1)
        self.f.calls = 99


def test_live_sources_are_pulled_before_summary_and_json():
    f = four_node_function()
    source = _Live(f)
    stats = ProfileStats([])
    stats.add_live(f, source)
    pulled = source.pulled
    out = io.StringIO()
    stats.summary(file=out)
    assert "Time in 99 calls to Function.__call__" in out.getvalue()
    assert '"calls": 99' in stats.to_json()
    assert len(pulled) == 2
    merged = stats + ProfileStats()  # plain data: a copy, with no live source
    assert len(pulled) == 3 and merged.functions[0] is not f and not merged._live
    f.calls = 5
    assert merged.functions[0].calls == 99
