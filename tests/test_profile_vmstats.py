"""Copying a vm.stats() snapshot (as documented in docs/architecture.md) into a profile."""

from __future__ import annotations

import io

import numpy as np
from profile_factory import node

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.data.vmstats import update_from_vm_stats, value_info


def _snapshot(calls: int) -> dict:
    samples = np.full((2, 32), -1, dtype=np.int64)
    samples[0, :3] = [100, 300, 200]
    return {
        "calls": np.array([calls, calls], dtype=np.int64),
        "ns_total": np.array([600, 0], dtype=np.int64),
        "ns_min": np.array([100, 0], dtype=np.int64),
        "ns_max": np.array([300, 0], dtype=np.int64),
        "ns_samples": samples,
        "n_below_resolution": np.array([0, calls], dtype=np.int64),
        "out_bytes_min": [np.array([8000]), np.array([8])],
        "out_bytes_max": [np.array([8000]), np.array([8])],
        "shapes": [
            [((("<f8", (1000,), (8,)), ("<f8", (1000,), (8,))), (("<f8", (1000,), (8,)),))],
            [((("<f8", (1000,), (16,)),), (None,))],
        ],
        "calls_total": calls,
        "peak_bytes": 8008,
        "clock_resolution_ns": 30,
    }


def _fp() -> FunctionProfile:
    return FunctionProfile(
        "f",
        memory_recorded=True,
        nodes=[node(0, "add(x, y)", "add"), node(1, "sum(add.0)", "sum")],
    )


def test_counters_replaced_not_added():
    fp = _fp()
    update_from_vm_stats(fp, _snapshot(3))
    update_from_vm_stats(fp, _snapshot(3))
    a, b = fp.nodes
    assert (a.calls, a.ns_total, a.ns_min, a.ns_samples) == (3, 600, 100, [100, 300, 200])
    assert (b.calls, b.n_below_resolution, b.ns_samples) == (3, 3, [])
    assert a.out_bytes_max == [8000] and b.out_bytes_min == [8]
    assert fp.clock_resolution_ns == 30 and fp.measured_peak_bytes == 8008


def test_shapes_become_value_infos():
    fp = _fp()
    update_from_vm_stats(fp, _snapshot(1))
    assert fp.nodes[0].outputs[0].dtype == "float64"
    assert fp.nodes[1].inputs[0].strides == (16,)
    assert fp.nodes[1].outputs[0].dtype == "object"
    assert value_info(("<i8", (), ())).shape == ()


class _Source:
    def __init__(self, fp):
        self.fp = fp

    def pull(self) -> None:
        update_from_vm_stats(self.fp, _snapshot(4))


def test_a_live_source_feeds_the_summary():
    fp = _fp()
    stats = ProfileStats([])
    stats.add_live(fp, _Source(fp))
    out = io.StringIO()
    stats.summary(file=out)
    text = out.getvalue()
    assert "    float64 (1000,) (1000,) -> (1000,)" in text  # one short line per node
    assert "    Peak measured by the VM (outputs included): 8KB (8008B)" in text
    # sum(add.0): every call below the 30 ns resolution
    assert "every call under the clock resolution (3.0e-08s)" in text
