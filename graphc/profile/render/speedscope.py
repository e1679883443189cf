"""speedscope export of recorded node traces (https://www.speedscope.app): one evented
profile per traced function, its nodes opening and closing frames."""

from __future__ import annotations

import json
from typing import Any

from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData, function_profiles
from graphc.profile.render.base import Renderer


def speedscope(stats: Any) -> dict[str, Any]:
    """A speedscope (https://www.speedscope.app) evented profile per traced function."""
    fps = [fp for fp in function_profiles(stats) if fp.trace is not None]
    frames: list[dict[str, str]] = []
    index: dict[str, int] = {}

    def frame(name: str) -> int:
        if name not in index:
            index[name] = len(frames)
            frames.append({"name": name})
        return index[name]

    profiles = []
    for fp in fps:
        rows = sorted(fp.trace.events, key=lambda r: (r[2], r[1])) if fp.trace else []
        by_pos = {n.position: n.apply_name for n in fp.nodes}
        evs: list[dict[str, Any]] = []
        end = 0
        for _, pos, start, dur in rows:
            f = frame(by_pos.get(pos, f"node {pos}"))
            evs.append({"type": "O", "frame": f, "at": start})
            evs.append({"type": "C", "frame": f, "at": start + max(dur, 0)})
            end = start + max(dur, 0)
        profiles.append({"type": "evented", "name": fp.name, "unit": "nanoseconds",
                         "startValue": rows[0][2] if rows else 0, "endValue": end,
                         "events": evs})  # fmt: skip
    return {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": frames},
        "profiles": profiles,
        "exporter": "graphc",
    }


class SpeedscopeRenderer(Renderer):
    """The recorded node traces as a speedscope JSON file."""

    name = "speedscope"
    extension = ".speedscope.json"
    description = "speedscope profile of the node traces (turns profile_trace on)"
    needs_trace = True

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return json.dumps(speedscope(stats))
