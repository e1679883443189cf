"""The memory plan as the profile records it: buffers kept across calls, and their reuse."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MemoryPlanRecord", "plan_record"]


@dataclass
class MemoryPlanRecord:
    """``buffers`` shared by ``slots`` intermediates, holding ``bytes`` between calls."""

    buffers: int = 0
    slots: int = 0
    bytes: int = 0


def plan_record(stats: Mapping[str, Any]) -> MemoryPlanRecord | None:
    """The plan figures of a VM ``stats()`` snapshot (None when the VM has no plan)."""
    if "plan_buffers" not in stats:
        return None
    return MemoryPlanRecord(
        int(stats["plan_buffers"]), int(stats["plan_slots"]), int(stats["plan_bytes"])
    )
