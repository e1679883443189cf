"""The roofline of each Apply node: the bytes it moves and the flops it does per call, hence
its arithmetic intensity, its achieved GB/s and GFLOP/s, and their shares of this machine's
limits (``FunctionProfile.machine``: triad bandwidth and GEMM peak).

Bytes moved are counted from the shapes and dtypes seen: every input read once and every
output written once, except outputs that are views of an input (nothing is written). A
node with an unknown shape has no byte count; a node whose Op does not count its flops has
none either (its GFLOP/s and intensity stay unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np

from graphc.profile.data.model import FunctionProfile, MachineLimits, NodeRecord, ValueInfo

#: A node at or above this share of the bandwidth is memory-bound.
MEMORY_BOUND = 0.8
#: A node below this share of both limits is overhead-bound (calls too small to load them).
OVERHEAD_BOUND = 0.1


@dataclass(frozen=True)
class RooflinePoint:
    """One Apply node on the roofline (per call: bytes, flops; over all calls: rates)."""

    function: str
    function_index: int
    position: int
    name: str
    ns: int
    calls: int
    bytes_per_call: int | None
    flops_per_call: float | None
    gbs: float | None  # achieved bandwidth
    gflops: float | None  # achieved rate
    intensity: float | None  # flops per byte
    bw_share: float | None  # gbs / the machine's bandwidth
    flop_share: float | None  # gflops / the machine's peak

    @property
    def bound(self) -> str:
        """``memory``, ``compute``, ``overhead`` or ``""`` (unknown): what limits the node."""
        bw, fl = self.bw_share, self.flop_share
        if bw is None:
            return ""
        if bw >= MEMORY_BOUND:
            return "memory"
        if fl is not None and fl >= MEMORY_BOUND:
            return "compute"
        if bw < OVERHEAD_BOUND and (fl is None or fl < OVERHEAD_BOUND):
            return "overhead"
        return ""


def value_bytes(v: ValueInfo) -> int | None:
    """Bytes of one value seen (None: shape or dtype unknown)."""
    if v.shape is None:
        return None
    try:
        itemsize = np.dtype(v.dtype).itemsize
    except TypeError:
        return None
    return prod(v.shape) * itemsize


#: Ops that read only their inputs' shapes, never their data.
METADATA_OPS = frozenset({"graphc.tensor.shape.Shape", "graphc.tensor.shape.Shape_i"})


def node_bytes(node: NodeRecord) -> int | None:
    """Bytes a call reads and writes: its inputs and outputs, except the outputs that view
    an input and those inputs (a view moves no data), and the inputs of Ops that read only
    shapes (``METADATA_OPS``)."""
    if not node.inputs and not node.outputs:
        return None
    kinds, aliases = node.output_kinds, node.output_aliases
    views = {k for k in range(len(node.outputs)) if k < len(kinds) and kinds[k] == "v"}
    viewed = {(aliases[k] if k < len(aliases) else None) or 0 for k in views}
    read = [] if node.op_class in METADATA_OPS else node.inputs
    moved = [v for i, v in enumerate(read) if i not in viewed]
    moved += [v for k, v in enumerate(node.outputs) if k not in views]
    sizes = [value_bytes(v) for v in moved]
    return None if None in sizes else sum(s for s in sizes if s is not None)


def _share(value: float | None, limit: float) -> float | None:
    return None if value is None or limit <= 0 else value / limit


def node_point(
    fp: FunctionProfile, index: int, node: NodeRecord, machine: MachineLimits | None
) -> RooflinePoint:
    """``node`` of ``fp`` (the ``index``-th function) on the roofline of ``machine``."""
    nbytes = node_bytes(node)
    flops = node.flops_per_call
    timed = node.ns_total > 0 and node.calls > 0
    gbs = nbytes * node.calls / node.ns_total if timed and nbytes is not None else None
    gflops = flops * node.calls / node.ns_total if timed and flops is not None else None
    intensity = flops / nbytes if flops is not None and nbytes else None
    return RooflinePoint(
        function=fp.name,
        function_index=index,
        position=node.position,
        name=node.apply_name,
        ns=node.ns_total,
        calls=node.calls,
        bytes_per_call=nbytes,
        flops_per_call=flops,
        gbs=gbs,
        gflops=gflops,
        intensity=intensity,
        bw_share=_share(gbs, machine.bandwidth_gbs) if machine else None,
        flop_share=_share(gflops, machine.peak_gflops) if machine else None,
    )


def machine_of(fps: Sequence[FunctionProfile]) -> MachineLimits | None:
    """The limits recorded with the profiles (the first function that has them)."""
    return next((f.machine for f in fps if f.machine is not None), None)


def roofline(fps: Sequence[FunctionProfile]) -> list[RooflinePoint]:
    """Every node that ran, most time first."""
    machine = machine_of(fps)
    points = [node_point(f, i, n, machine) for i, f in enumerate(fps) for n in f.nodes if n.calls]
    return sorted(points, key=lambda p: (-p.ns, p.function_index, p.position))


#: Nodes below this share of all node time get no roofline tip.
TIP_MIN_SHARE = 0.05
#: Above this share of the (main-memory) bandwidth a node's data comes from the caches:
#: the memory-bound tip would mislead, so it is not given.
CACHE_RESIDENT_SHARE = 1.25


def roofline_tips(fps: Sequence[FunctionProfile]) -> list[str]:
    """What the roofline says of the nodes that matter (at least 5% of the time): one at
    80% of the bandwidth (and not above it, from the caches) gains only from moving fewer
    bytes (fusion, a smaller dtype); one
    below 10% of both limits is held by per-call overhead, not by the machine. One tip per
    kind, naming the node with the most time and counting the others."""
    points = roofline(fps)
    total = sum(p.ns for p in points)
    found: dict[str, list[RooflinePoint]] = {"memory": [], "overhead": []}
    for p in points:
        if total and p.ns >= TIP_MIN_SHARE * total and p.bound in found:
            if p.bound == "memory" and (p.bw_share or 0) > CACHE_RESIDENT_SHARE:
                continue  # runs from the caches, faster than main memory allows
            found[p.bound].append(p)
    out = []
    for kind, hits in found.items():
        if not hits:
            continue
        p = hits[0]
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        where = f"{p.function} node {p.position}{more} ({100 * p.ns / total:.0f}% of the time)"
        if kind == "memory":
            out.append(
                f"{where} is at {100 * (p.bw_share or 0):.0f}% of this machine's bandwidth: "
                "only moving fewer bytes (fusion, a smaller dtype) can help"
            )
        else:
            out.append(
                f"{where} is under {100 * OVERHEAD_BOUND:.0f}% of both bandwidth and peak: "
                "per-call overhead (give calls more data)"
            )
    return out
