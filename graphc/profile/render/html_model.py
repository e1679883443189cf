"""The data an HTML report shows, as plain JSON-ready values (no markup).

Numbers stay raw (nanoseconds, bytes, percentages) so the page can sort on them and format
them; each table names its columns and their kinds. As in the text report, times count
every call, each function's first call too, unless ``all_calls`` is false.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any

from graphc.profile.data.model import FunctionProfile, NodeRecord, ValueInfo
from graphc.profile.data.profiles import ProfileData
from graphc.profile.data.steady import has_first_call, steady_state
from graphc.profile.render.fmt import shape_text, short_origin
from graphc.profile.render.graphviz import render_svg, to_dot
from graphc.profile.render.text import render_first_calls, render_global
from graphc.profile.summaries.loops import loop_summary
from graphc.profile.summaries.memory import live_bytes
from graphc.profile.summaries.roofline import RooflinePoint, machine_of, roofline
from graphc.profile.summaries.sampling import sampling_lines, scaled
from graphc.profile.summaries.tables import (
    TimeTable,
    apply_table,
    class_table,
    global_summary,
    op_table,
    source_table,
)
from graphc.profile.summaries.tips import tips

#: Trace events kept per function for the timeline (the page stays small).
TIMELINE_EVENTS = 3000
#: Graphs with more nodes than this are not drawn (Graphviz would take too long).
GRAPH_MAX_NODES = 2000
_ALL = 1 << 62

_GROUP_COLUMNS = [
    ("pct", "% time", "pct"),
    ("cum", "cum %", "pct"),
    ("ns", "time", "ns"),
    ("per_call", "per call", "ns"),
    ("impl", "type", "str"),
    ("calls", "calls", "int"),
    ("n_apply", "applies", "int"),
    ("name", "name", "str"),
]
_APPLY_COLUMNS = [
    ("pct", "% time", "pct"),
    ("cum", "cum %", "pct"),
    ("ns", "time", "ns"),
    ("per_call", "per call", "ns"),
    ("min", "min", "ns"),
    ("median", "median", "ns"),
    ("calls", "calls", "int"),
    ("id", "id", "int"),
    ("gflops", "GFLOP/s", "float"),
    ("gbs", "GB/s", "float"),
    ("bw", "% bw", "share"),
    ("impl", "type", "str"),
    ("function", "function", "str"),
    ("name", "Apply name", "str"),
]


def _columns(spec: Sequence[tuple[str, str, str]]) -> list[dict[str, str]]:
    return [{"key": k, "label": label, "kind": kind} for k, label, kind in spec]


def _grouped(tbl: TimeTable) -> dict[str, Any]:
    rows = [
        [r.pct, r.cum_pct, r.ns, r.per_call_ns, r.impl, r.calls, r.n_apply, r.label]
        for r in tbl.rows
    ]
    return {"columns": _columns(_GROUP_COLUMNS), "rows": rows}


def _key(function_index: int, position: int) -> str:
    return f"f{function_index}_n{position}"


def _apply(tbl: TimeTable, points: dict[str, RooflinePoint]) -> dict[str, Any]:
    rows = []
    keys = []
    for r in tbl.rows:
        key = _key(r.function_index, r.position)
        p = points.get(key)
        rows.append([r.pct, r.cum_pct, r.ns, r.per_call_ns, r.min_ns, r.median_ns, r.calls,
                     r.position, r.gflops_s, p and p.gbs, p and p.bw_share, r.impl, r.function,
                     r.label])  # fmt: skip
        keys.append(key)
    return {"columns": _columns(_APPLY_COLUMNS), "rows": rows, "keys": keys}


def _sources(tbl: TimeTable) -> dict[str, Any]:
    spec = [_GROUP_COLUMNS[i] for i in (0, 1, 2, 6)] + [("name", "source line", "str")]
    rows = [[r.pct, r.cum_pct, r.ns, r.n_apply, short_origin(r.label)] for r in tbl.rows]
    return {"columns": _columns(spec), "rows": rows}


def value_text(v: ValueInfo) -> str:
    """``float64 (400, 784)``; several shapes seen are joined by ``|``."""
    shapes = v.shapes_seen if len(v.shapes_seen) > 1 else [v.shape]
    return f"{v.dtype} " + " | ".join(shape_text(s) for s in shapes)


def _node(n: NodeRecord, total: int) -> dict[str, Any]:
    return {
        "pos": n.position,
        "name": n.apply_name,
        "op": n.op_name,
        "cls": n.op_class,
        "impl": n.impl,
        "calls": n.calls,
        "ns": n.ns_total,
        "share": n.ns_total / total if total else 0.0,
        "inputs": [value_text(v) for v in n.inputs],
        "outputs": [value_text(v) for v in n.outputs],
        "out_bytes": sum(n.out_bytes_max),
        "workspace": n.workspace_bytes,
        "origins": [short_origin(o) for o in n.origins],
        "loop": n.inner is not None,
    }


def _function(k: int, fp: FunctionProfile, trace_fp: FunctionProfile) -> dict[str, Any]:
    total = sum(n.ns_total for n in fp.nodes)
    memory = live_bytes(fp) if fp.memory_recorded else []
    trace = trace_fp.trace
    events = trace.events[:TIMELINE_EVENTS] if trace else []
    dropped = trace.dropped + len(trace.events) - len(events) if trace else 0
    return {
        "index": k,
        "name": fp.name,
        "calls": fp.calls,
        "node_ns": total,
        "nodes": [_node(n, total) for n in fp.nodes],
        "memory": memory,
        "peak": max(range(len(memory)), key=memory.__getitem__) if memory else None,
        "events": events,
        "dropped": dropped,
    }


def _loop(fp: FunctionProfile, node: NodeRecord) -> dict[str, Any]:
    s = loop_summary(fp, node)
    assert node.inner is not None
    body = node.inner
    return {
        "name": s.name,
        "function": s.function,
        "pos": s.position,
        "calls": s.calls,
        "steps": s.steps,
        "ns": s.ns,
        "rows": [[r.label, r.inclusive_ns, r.exclusive_ns, r.per_step] for r in s.rows],
        "children": [_loop(body, n) for n in body.nodes if n.inner is not None and n.calls],
    }


def _phases(fps: Sequence[FunctionProfile]) -> list[list[Any]]:
    g = global_summary(fps)
    return [
        ["rewrite", g.rewrite_ns],
        ["C code generation", g.codegen_ns],
        ["C compile", g.compile_ns],
        ["import", g.import_ns],
        ["other linking", max(g.linker_ns - g.codegen_ns - g.compile_ns - g.import_ns, 0)],
        ["Python imports", g.python_import_ns],
        ["other", g.other_compile_ns],
    ]


def _graph_svg(recorded: Sequence[FunctionProfile], all_calls: bool) -> str | None:
    if shutil.which("dot") is None or sum(len(f.nodes) for f in recorded) > GRAPH_MAX_NODES:
        return None
    svg = render_svg(to_dot(list(recorded), all_calls=all_calls))
    return svg[svg.find("<svg") :]


def _roofline(fps: Sequence[FunctionProfile], points: list[RooflinePoint]) -> dict[str, Any]:
    machine = machine_of(fps)
    return {
        "machine": None if machine is None else vars(machine),
        "points": [
            {
                "key": _key(p.function_index, p.position),
                "name": p.name,
                "ns": p.ns,
                "intensity": p.intensity,
                "gflops": p.gflops,
                "gbs": p.gbs,
                "bw_share": p.bw_share,
                "flop_share": p.flop_share,
                "bound": p.bound,
            }  # fmt: skip
            for p in points
        ],
    }


def page_model(stats: ProfileData, all_calls: bool = True) -> dict[str, Any]:
    """Everything the report shows for ``stats``: the global lines count every call, the
    tables too unless ``all_calls`` is false (then the first calls are left out of them)."""
    recorded = list(stats.functions)
    fps = recorded if all_calls else [steady_state(f) for f in recorded]
    sampled = sampling_lines(recorded)
    fps = [scaled(f) for f in fps]
    points = roofline(fps)
    by_key = {_key(p.function_index, p.position): p for p in points}
    with_first = [f for f in recorded if has_first_call(f)]
    firsts = 0 if all_calls else sum(f.first_calls for f in with_first)
    every = global_summary([scaled(f) for f in recorded], stats.name)
    first_lines = render_first_calls(with_first, every.calls, all_calls)
    return {
        "title": stats.name or ", ".join(f.name for f in fps) or "empty profile",
        "global": render_global(every)[3:] + first_lines + sampled,
        "first_calls_left_out": firsts,
        "phases": _phases(fps),
        "tables": {
            "class": _grouped(class_table(fps, _ALL)),
            "ops": _grouped(op_table(fps, _ALL)),
            "apply": _apply(apply_table(fps, _ALL), by_key),
            "sources": _sources(source_table(fps, _ALL)),
        },
        "functions": [_function(k, fp, r) for k, (fp, r) in enumerate(zip(fps, recorded))],
        "loops": [_loop(fp, n) for fp in fps for n in fp.nodes if n.inner is not None and n.calls],
        "roofline": _roofline(fps, points),
        "tips": tips(recorded),
        "svg": _graph_svg(recorded, all_calls),
    }
