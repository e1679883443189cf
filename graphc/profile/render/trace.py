"""Chrome Trace Event export of recorded node traces (Perfetto, chrome://tracing).

One complete event (``"ph": "X"``) per node execution, inside one enclosing event per function
call, plus the compile phases of each function. ``pid`` is the process that ran the function,
``tid`` the function (numbered per process, named by a ``thread_name`` metadata event).
Timestamps are microseconds (floats) from the earliest event in the document; events that did
not fit in the trace buffer are counted in ``otherData`` and in each thread's name args.

Traces are recorded only when asked: ``graphc.config.profile_trace = True`` (bounded by
``graphc.config.profiling__trace_capacity`` events per function).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from graphc.profile.data.model import FunctionProfile, NodeRecord, ValueInfo
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData, function_profiles
from graphc.profile.render.base import Renderer


def _value(v: ValueInfo) -> str:
    shape = "?" if v.shape is None else "x".join(str(d) for d in v.shape) or "scalar"
    return f"{v.dtype}[{shape}]"


def _node_args(node: NodeRecord) -> dict[str, Any]:
    return {
        "op": node.op_name,
        "impl": node.impl,
        "position": node.position,
        "inputs": [_value(v) for v in node.inputs],
        "outputs": [_value(v) for v in node.outputs],
        "dtype": ", ".join(sorted({v.dtype for v in node.outputs})),
        "source": list(node.origins),
    }


def _compile_events(fp: FunctionProfile, start: int) -> list[tuple[str, int, int, dict]]:
    """(name, start_ns, dur_ns, args) of the compile and its phases.

    Only durations are recorded, so the phases are placed: the linker ends the compile,
    the rewrite ends where the linker starts (validation at the end of the rewrite), and
    code generation, C compiling and importing follow each other from the linker's start.
    """
    c = fp.compile
    end = start + c.total_ns
    out = [("compile", start, c.total_ns, {"n_apply": c.n_apply, "function": fp.name})]
    link0 = end - c.linker_ns
    if c.linker_ns:
        out.append(("linker", link0, c.linker_ns, {}))
        t = link0
        for name, ns in (("codegen", c.codegen_ns), ("c_compile", c.compile_ns),
                         ("import", c.import_ns)):  # fmt: skip
            ns = min(ns, end - t)
            if ns > 0:
                out.append((name, t, ns, {}))
                t += ns
    if c.rewrite_ns:
        r0 = max(start, link0 - c.rewrite_ns)
        out.append(("rewrite", r0, link0 - r0, {}))
        if c.validate_ns:
            v = min(c.validate_ns, link0 - r0)
            out.append(("validate", link0 - v, v, {}))
    return out


def _call_events(fp: FunctionProfile, base: dict, us: Callable[[int], float], label: str,
                 cat: str) -> list[dict[str, Any]]:  # fmt: skip
    """One slice per recorded call of ``fp`` (a step, for a loop body) with its nodes inside,
    then, nested in the loop nodes' slices by time, the recorded steps of their bodies."""
    tr = fp.trace
    if tr is None:
        return []
    events: list[dict[str, Any]] = []
    calls: dict[int, list[list[int]]] = {}
    for row in tr.events:
        calls.setdefault(row[0], []).append(row)
    by_pos = {n.position: n for n in fp.nodes}
    for call, rows in sorted(calls.items()):
        c0 = min(r[2] for r in rows)
        c1 = max(r[2] + max(r[3], 0) for r in rows)
        events.append({"name": label, "cat": cat, "ph": "X", "ts": us(c0),
                       "dur": (c1 - c0) / 1000.0, **base,
                       "args": {cat: call, "nodes": len(rows)}})  # fmt: skip
        for _, pos, start, dur in rows:
            node = by_pos.get(pos)
            name = node.apply_name if node is not None else f"node {pos}"
            args = _node_args(node) if node is not None else {"position": pos}
            events.append({"name": name, "cat": "node", "ph": "X", "ts": us(start),
                           "dur": max(dur, 0) / 1000.0, **base, "args": args})  # fmt: skip
    for node in fp.nodes:
        if node.inner is not None:
            events += _call_events(node.inner, base, us, f"step of {node.op_name}", "step")
    return events


def chrome_trace(stats: Any) -> dict[str, Any]:
    """The Chrome Trace Event document (a dict) for the traces in ``stats``.

    ``stats`` is a ProfileStats, a FunctionProfile, or an iterable of them (e.g. the profiles
    sent back by several worker processes: each keeps its own ``pid``).
    """
    fps = function_profiles(stats)
    starts = []
    for fp in fps:
        tr = fp.trace
        if tr is None:
            continue
        starts += [row[2] for row in tr.events]
        if tr.compile_start_ns is not None:
            starts.append(tr.compile_start_ns)
    t0 = min(starts) if starts else 0

    def us(ns: int) -> float:
        return (ns - t0) / 1000.0

    events: list[dict[str, Any]] = []
    tids: dict[int, int] = {}
    info: list[dict[str, Any]] = []
    for fp in fps:
        tr = fp.trace
        if tr is None:
            info.append({"function": fp.name, "recorded": False})
            continue
        pid = tr.pid
        tid = tids[pid] = tids.get(pid, 0) + 1
        info.append(
            {
                "function": fp.name,
                "recorded": True,
                "pid": pid,
                "tid": tid,
                "events": len(tr.events),
                "capacity": tr.capacity,
                "dropped": tr.dropped,
            }
        )
        base = {"pid": pid, "tid": tid}
        events.append({"name": "process_name", "ph": "M", "ts": 0, **base,
                       "args": {"name": f"graphc pid {pid}"}})  # fmt: skip
        events.append({"name": "thread_name", "ph": "M", "ts": 0, **base,
                       "args": {"name": fp.name, "dropped_events": tr.dropped}})  # fmt: skip
        if tr.compile_start_ns is not None and fp.compile.total_ns:
            for name, s, d, args in _compile_events(fp, tr.compile_start_ns):
                events.append({"name": name, "cat": "compile", "ph": "X", "ts": us(s),
                               "dur": d / 1000.0, **base, "args": args})  # fmt: skip
        events += _call_events(fp, base, us, fp.name, "call")
    dropped = sum(i.get("dropped", 0) for i in info)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"generator": "graphc", "dropped_events": dropped, "functions": info},
    }


class TraceRenderer(Renderer):
    """The Chrome Trace Event JSON of the recorded node traces."""

    name = "trace"
    extension = ".trace.json"
    description = "Chrome trace of the node traces, for Perfetto (turns profile_trace on)"
    needs_trace = True
    command = "trace"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        """Raises ValueError when no function recorded a trace: an empty trace file would
        look like a program that did no work."""
        if not any(fp.trace is not None and fp.trace.events for fp in function_profiles(stats)):
            raise ValueError(
                "no node events were recorded: set graphc.config.profile_trace = True (or "
                "GRAPHC_FLAGS=profile_trace=True) before compiling the functions to trace"
            )
        return json.dumps(chrome_trace(stats))

    def note(self, stats: ProfileData) -> str:
        """How many node events did not fit in the trace buffers, if any."""
        dropped = sum(fp.trace.dropped for fp in stats.functions if fp.trace is not None)
        return f"{dropped} events dropped: raise --trace-capacity" if dropped else ""


def check_nesting(doc: dict[str, Any], tol_us: float = 1e-3) -> list[str]:
    """Problems with ``doc``: missing keys, negative durations, node events outside their
    call event. An empty list means the trace is well formed."""
    problems = []
    spans: dict[tuple[Any, Any], list[tuple[float, float]]] = {}
    for ev in doc["traceEvents"]:
        for key in ("name", "ph", "ts", "pid", "tid"):
            if key not in ev:
                problems.append(f"event without {key!r}: {ev}")
        if ev.get("ph") == "X":
            if ev.get("dur", -1) < 0:
                problems.append(f"X event with bad dur: {ev}")
            if ev.get("cat") == "call":
                spans.setdefault((ev["pid"], ev["tid"]), []).append(
                    (ev["ts"], ev["ts"] + ev["dur"])
                )
    for ev in doc["traceEvents"]:
        if ev.get("cat") != "node":
            continue
        a, b = ev["ts"], ev["ts"] + ev["dur"]
        if not any(s - tol_us <= a and b <= e + tol_us for s, e in _get(spans, ev)):
            problems.append(f"node event outside its call: {ev['name']} at {a}")
    return problems


def _get(spans: dict, ev: dict) -> Sequence[tuple[float, float]]:
    return spans.get((ev["pid"], ev["tid"]), ())


def iter_node_events(doc: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The node execution events of a document."""
    return (ev for ev in doc["traceEvents"] if ev.get("cat") == "node")


def write_chrome_trace(stats: Any, path: str | Path) -> dict[str, Any]:
    """Write the trace of ``stats`` (as for :func:`chrome_trace`: the profiles of several
    workers keep their pids) to ``path`` with :class:`TraceRenderer`; returns the document."""
    data = stats if isinstance(stats, ProfileData) else ProfileData(function_profiles(stats))
    text = TraceRenderer().write(data, path, SummaryOptions.from_config())
    doc: dict[str, Any] = json.loads(text)
    return doc
