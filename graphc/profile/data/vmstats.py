"""Copying a VM stats snapshot (the plain dict of ``vm.stats()``) into a FunctionProfile.

The VM's counters are cumulative, so the node counters are replaced, not added: a
profiler calls ``update_from_vm_stats(fp, vm.stats())`` whenever it pulls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from graphc.profile.data.memplan import plan_record
from graphc.profile.data.model import FunctionProfile, ValueInfo


def value_info(sig: Sequence[Any] | None) -> ValueInfo:
    """A ``(dtype.str, shape, strides)`` signature (None for non-arrays) as a ValueInfo."""
    if sig is None:
        return ValueInfo("object")
    dtype, shape, strides = sig
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    return ValueInfo(
        name,
        None if shape is None else tuple(int(d) for d in shape),
        None if strides is None else tuple(int(s) for s in strides),
    )


def _ints(values: Any) -> list[int]:
    return [int(v) for v in values]


def update_from_vm_stats(fp: FunctionProfile, stats: Mapping[str, Any]) -> None:
    """Replace ``fp``'s node counters (and sizes, shapes when present) by ``stats``."""
    calls = stats["calls"]
    for i, node in enumerate(fp.nodes):
        node.calls = int(calls[i])
        node.ns_total = int(stats["ns_total"][i])
        node.ns_min = int(stats["ns_min"][i])
        node.n_below_resolution = int(stats["n_below_resolution"][i])
        samples = stats.get("ns_samples")
        if samples is not None:
            node.ns_samples = [int(s) for s in samples[i] if s >= 0]
        if "out_bytes_max" in stats and fp.memory_recorded:
            node.out_bytes_min = _ints(stats["out_bytes_min"][i])
            node.out_bytes_max = _ints(stats["out_bytes_max"][i])
        shapes = stats.get("shapes")
        if shapes is not None and i < len(shapes) and shapes[i]:
            ins, outs = shapes[i][-1]
            node.inputs = [value_info(s) for s in ins]
            node.outputs = [value_info(s) for s in outs]
    if "clock_resolution_ns" in stats:
        fp.clock_resolution_ns = max(int(stats["clock_resolution_ns"]), 1)
    if fp.memory_recorded and "peak_bytes" in stats:
        fp.measured_peak_bytes = int(stats["peak_bytes"])
    fp.memory_plan = plan_record(stats)
