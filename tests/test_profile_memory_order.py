"""The memory section's minimum peak over valid node orders and its peak with in-place
outputs counted as new buffers."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profile_factory import node

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.data.model import StorageRecord
from graphc.profile.summaries import memory_order as mo


def _fn(specs, outputs, name="m"):
    """specs: (input_slots, output_slot, bytes, kind, alias) per node, in schedule order."""
    nodes = [
        node(
            i,
            f"n{i}",
            f"op{i}",
            input_slots=list(ins),
            output_slots=[out],
            out_bytes_max=[size],
            output_kinds=[kind],
            output_aliases=[alias],
            calls=1,
        )  # fmt: skip
        for i, (ins, out, size, kind, alias) in enumerate(specs)
    ]
    return FunctionProfile(
        name=name,
        nodes=nodes,
        inputs=[StorageRecord("x", 0)],
        output_slots=list(outputs),
        allow_gc=True,
        memory_recorded=True,
    )


def _two_branches():
    # Both big intermediates first (as scheduled): 2008 B; each reduced right away: 1016 B.
    return _fn(
        [
            ([0], 10, 1000, "c", None),
            ([0], 11, 1000, "c", None),
            ([10], 12, 8, "c", None),
            ([11], 13, 8, "c", None),
            ([12, 13], 14, 8, "c", None),
        ],
        [14],
    )


def test_minimum_peak_beats_the_schedule_exhaustive_and_greedy(monkeypatch):
    fp = _two_branches()
    assert mo.peak_in_schedule(fp) == 2008
    found = mo.minimum_peak(fp)
    assert (found.peak, found.method) == (1016, "exhaustive")
    monkeypatch.setattr(mo, "EXHAUSTIVE_MAX_NODES", 0)
    greedy = mo.minimum_peak(fp)
    assert (greedy.peak, greedy.method) == (1016, "greedy")


def test_inplace_outputs_count_when_inplace_is_excluded():
    fp = _fn([([0], 10, 800, "c", None), ([10], 11, 800, "i", 0), ([11], 12, 8, "c", None)], [12])
    assert mo.peak_in_schedule(fp) == 808
    assert mo.peak_in_schedule(fp, inplace=False) == 1600  # both 800 B buffers live at node 1


def test_destroying_node_waits_for_the_other_readers():
    # node 2 overwrites slot 10, which node 1 also reads: node 1 must run first in any order.
    fp = _fn(
        [
            ([0], 10, 100, "c", None),
            ([10], 11, 8, "c", None),
            ([10], 12, 100, "i", 0),
            ([11, 12], 13, 8, "c", None),
        ],  # fmt: skip
        [13],
    )
    model = mo._Model(fp, inplace=True)
    assert 1 in model.preds[2]


def _brute_force(fp):
    model = mo._Model(fp, inplace=True)
    best = None
    for order in itertools.permutations(range(len(fp.nodes))):
        pos = {n: i for i, n in enumerate(order)}
        if all(pos[p] < pos[n] for n in order for p in model.preds[n]):
            peak = model.peak(list(order))
            best = peak if best is None else min(best, peak)
    return best


@st.composite
def _dags(draw):
    n = draw(st.integers(2, 6))
    specs = []
    for i in range(n):
        k = draw(st.integers(1, min(2, i + 1)))
        ins = draw(st.lists(st.sampled_from([0] + [10 + j for j in range(i)]), min_size=k,
                            max_size=k, unique=True))  # fmt: skip
        specs.append((ins, 10 + i, draw(st.sampled_from([8, 100, 1000])), "c", None))
    return _fn(specs, [10 + n - 1])


@settings(max_examples=25, deadline=None)
@given(_dags())
def test_exhaustive_search_finds_the_brute_force_minimum(fp):
    found = mo.minimum_peak(fp)
    assert found.method == "exhaustive"
    assert found.peak == _brute_force(fp)
    assert found.peak <= mo.peak_in_schedule(fp)


@pytest.mark.parametrize("width", [100])
def test_memory_section_reports_both(width):
    import io

    out = io.StringIO()
    ProfileStats([_two_branches()]).summary(file=out, memory=True, width=width)
    text = out.getvalue()
    assert "Minimum peak from all valid apply node order is 1KB (1016B)" in text
    assert "exhaustive search" in text
    assert "optimizer_excluding=inplace" in text
