"""Memory over the execution order: the intermediate bytes alive while each node runs.

The same model as ``memory.peak_with_gc`` (a buffer lives from the node creating it to the
last slot sharing it being freed; a node's scratch workspace lives during that node), kept
step by step so a report can draw it; its maximum is that peak.
"""

from __future__ import annotations

from graphc.profile.data.model import FunctionProfile
from graphc.profile.summaries.memory import _created, gc_schedule, storage_roots


def live_bytes(fp: FunctionProfile) -> list[int]:
    """Per node, in schedule order: bytes of intermediates alive while it runs (its new
    outputs and workspace included, the slots it frees still counted)."""
    roots = storage_roots(fp)
    alive_slots: dict[int, int] = {}  # root -> live slots sharing it
    size: dict[int, int] = {}
    live = 0
    out: list[int] = []
    for node, made, frees in zip(fp.nodes, _created(fp), gc_schedule(fp)):
        for root, b in made.items():
            size[root] = b
            live += b
        for slot in node.output_slots:
            root = roots.get(slot, slot)
            alive_slots[root] = alive_slots.get(root, 0) + 1
        out.append(live + node.workspace_bytes)
        for slot in frees:
            root = roots.get(slot, slot)
            if root in alive_slots:
                alive_slots[root] -= 1
                if alive_slots[root] == 0:
                    del alive_slots[root]
                    live -= size.pop(root, 0)
    return out
