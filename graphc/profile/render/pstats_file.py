"""The profile as the stats file of Python's profilers, for ``pstats.Stats(path)``,
snakeviz and the other tools that read ``cProfile`` output.

The file is the marshalled dict ``{(file, line, funcname): (cc, nc, tt, ct, callers)}``.
Each compiled function is an entry (``("<graphc>", 0, name)``) calling its Apply nodes;
each node is an entry at its first source line named by the node (a node whose key is
taken by an earlier one gets its function and position added), a loop body's nodes
called by their loop node. Calls are counts, times seconds: ``tt`` a node's own time,
``ct`` its time with its loop body's (a function's: its VM time, ``tt`` the VM's own).
"""

from __future__ import annotations

import marshal

from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.data.steady import steady_state
from graphc.profile.render.base import Renderer
from graphc.profile.render.fmt import origin_key
from graphc.profile.summaries.sampling import scaled

Key = tuple[str, int, str]
Entry = tuple[int, int, float, float, dict[Key, tuple[int, int, float, float]]]


def _unique(stats: dict[Key, Entry], key: Key, detail: str) -> Key:
    """``key``, or when taken ``key`` with ``detail`` (and a number) added to its name."""
    path, line, name = key
    k = 1
    while key in stats:
        key = (path, line, f"{name} [{detail}]" + (f" #{k}" if k > 1 else ""))
        k += 1
    return key


def _add_nodes(stats: dict[Key, Entry], fp: FunctionProfile, caller: Key) -> int:
    """Add ``fp``'s nodes as called by ``caller``; returns their time in ns."""
    total = 0
    for n in fp.nodes:
        path, line = origin_key(n.origins[0]) if n.origins else ("<graphc>", 0)
        key = _unique(stats, (path, line, n.apply_name), f"{fp.name} node {n.position}")
        stats[key] = (0, 0, 0.0, 0.0, {})  # reserve the key before the loop body's nodes
        own = n.ns_total
        if n.inner is not None:
            own -= _add_nodes(stats, n.inner, key)
        tt, ct = max(own, 0) / 1e9, n.ns_total / 1e9
        stats[key] = (n.calls, n.calls, tt, ct, {caller: (n.calls, n.calls, tt, ct)})
        total += n.ns_total
    return total


def pstats_dict(stats: ProfileData, all_calls: bool = False) -> dict[Key, Entry]:
    """The stats dict of ``stats`` (first calls left out unless ``all_calls``; sampled
    profiles scaled up)."""
    out: dict[Key, Entry] = {}
    for fp in stats.functions:
        fp = scaled(fp if all_calls else steady_state(fp))
        key = _unique(out, ("<graphc>", 0, fp.name), "function")
        out[key] = (0, 0, 0.0, 0.0, {})
        nodes_ns = _add_nodes(out, fp, key)
        own = max(fp.vm_ns - nodes_ns, 0) / 1e9
        out[key] = (fp.calls, fp.calls, own, fp.vm_ns / 1e9, {})
    return out


class PstatsRenderer(Renderer):
    """The stats file ``pstats.Stats(path)`` loads (marshal of the profiler's dict)."""

    name = "pstats"
    extension = ".prof"
    description = "Python profiler stats for pstats.Stats / snakeviz, one entry per node"
    output_is_binary = True

    def render(self, stats: ProfileData, options: SummaryOptions) -> bytes:
        return marshal.dumps(pstats_dict(stats, options.all_calls))
