"""The compiled graph of a profile as Graphviz DOT (and SVG), coloured by time.

Built from the profile records alone: storage slots connect producers to consumers
(``NodeRecord.output_slots`` -> ``input_slots``). Each Apply node is filled from white (no
time) to red (the node with the largest share) and labelled with its share of the function's
node time (and its largest output size when the memory profile is on). As in the text
report, the times count every call, the first too, unless ``all_calls`` is false. Edges into
an input that a node overwrites in place (``i`` outputs) are drawn bold red, edges into an
input that a node returns a view of (``v`` outputs) dashed blue.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from graphc.flags import config
from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData, function_profiles
from graphc.profile.data.steady import has_first_call, steady_state
from graphc.profile.render.base import Renderer
from graphc.profile.render.fmt import duration, short_origin
from graphc.profile.render.fmt import nbytes as _fmt_bytes

DESTROY_STYLE = 'color="#c00000", style=bold, penwidth=2.0, label="destroy"'
VIEW_STYLE = 'color="#1f5fbf", style=dashed, label="view"'
MAX_LABEL = 60


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 3] + "..."


def heat_color(t: float) -> str:
    """White (t=0) to red (t=1)."""
    t = min(max(t, 0.0), 1.0)
    gb = round(255 * (1.0 - t))
    return f"#ff{gb:02x}{gb:02x}"


def _tooltip(n: NodeRecord) -> str:
    """The full Apply name and the source lines that built the node."""
    lines = [n.apply_name] + [f"from {short_origin(o)}" for o in n.origins]
    return "\n".join(lines)


def _function_dot(fp: FunctionProfile, k: int, lines: list[str], all_calls: bool) -> None:
    first = ""
    if not all_calls and has_first_call(fp):
        first = ", first call left out" if fp.first_calls == 1 else ", first calls left out"
    if first:
        fp = steady_state(fp)
    total = sum(n.ns_total for n in fp.nodes)
    hottest = max((n.ns_total for n in fp.nodes), default=0)
    p = f"f{k}_"
    lines.append(f"  subgraph cluster_{k} {{")
    title = f"{fp.name} ({fp.calls} calls, {duration(total)} in nodes{first})"
    lines.append(f"    label={_quote(title)};")
    producer: dict[int, str] = {}
    for s in fp.inputs:
        producer[s.slot] = f"{p}in{s.slot}"
        lines.append(f"    {p}in{s.slot} [shape=ellipse, label={_quote(_short(s.name))}];")
    for s in fp.constants:
        producer[s.slot] = f"{p}c{s.slot}"
        lines.append(
            f"    {p}c{s.slot} [shape=ellipse, style=dotted, label={_quote(_short(s.name))}];"
        )
    for n in fp.nodes:
        nid = f"{p}n{n.position}"
        share = n.ns_total / total if total else 0.0
        label = [_short(n.apply_name), f"{share:.1%}  {duration(n.ns_total)}  [{n.impl}]"]
        if fp.memory_recorded and n.out_bytes_max:
            label.append(f"out {_fmt_bytes(sum(n.out_bytes_max))}")
        color = heat_color(n.ns_total / hottest if hottest else 0.0)
        lines.append(
            f"    {nid} [shape=box, style=filled, fillcolor={_quote(color)}, "
            f"label={_quote(chr(10).join(label))}, tooltip={_quote(_tooltip(n))}];"
        )
        destroyed = {a or 0 for kind, a in zip(n.output_kinds, n.output_aliases) if kind == "i"}
        viewed = {a or 0 for kind, a in zip(n.output_kinds, n.output_aliases) if kind == "v"}
        for pos, slot in enumerate(n.input_slots):
            src = producer.get(slot)
            if src is None:
                src = producer[slot] = f"{p}s{slot}"
                lines.append(f"    {src} [shape=point];")
            style = DESTROY_STYLE if pos in destroyed else VIEW_STYLE if pos in viewed else ""
            lines.append(f"    {src} -> {nid}" + (f" [{style}];" if style else ";"))
        for slot in n.output_slots:
            producer[slot] = nid
    for i, slot in enumerate(fp.output_slots):
        lines.append(f"    {p}out{i} [shape=ellipse, style=bold, label={_quote(f'output {i}')}];")
        src = producer.get(slot)
        if src is not None:
            lines.append(f"    {src} -> {p}out{i};")
    lines.append("  }")


def to_dot(stats: Any, all_calls: bool | None = None) -> str:
    """DOT text of every function in ``stats`` (ProfileStats or FunctionProfile); the
    times count every call unless ``all_calls`` is false (each function's first call left
    out; None: the ``profiling__all_calls`` flag)."""
    if all_calls is None:
        all_calls = config.profiling__all_calls
    fps = function_profiles(stats)
    lines = [
        "digraph graphc_profile {",
        "  rankdir=TB;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for k, fp in enumerate(fps):
        _function_dot(fp, k, lines, all_calls)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(dot_text: str) -> str:
    """SVG text from DOT with Graphviz ``dot``; RuntimeError when it is not installed."""
    return _render(dot_text, "svg").decode("utf-8")


def _render(dot_text: str, fmt: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "Graphviz 'dot' was not found on PATH: install Graphviz (e.g. "
            "'apt-get install graphviz') or write the DOT text with graphc.profile.render.graphviz."
            "to_dot / 'graphc-prof ... --dot out.dot'"
        )
    res = subprocess.run(
        [exe, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True, check=False
    )
    if res.returncode != 0:
        raise RuntimeError(f"Graphviz 'dot' failed: {res.stderr.decode(errors='replace').strip()}")
    return res.stdout


class DotRenderer(Renderer):
    """The profile-coloured graph as Graphviz DOT text."""

    name = "dot"
    extension = ".dot"
    description = "profile-coloured graph, Graphviz DOT text"
    command = "graph"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return to_dot(stats, options.all_calls)


class PictureRenderer(Renderer):
    """The profile-coloured graph drawn by Graphviz ``dot`` (needs it on PATH)."""

    command = "graph"

    def __init__(self, fmt: str, binary: bool) -> None:
        self.fmt = fmt
        self.name = fmt
        self.extension = "." + fmt
        self.output_is_binary = binary
        self.description = f"profile-coloured graph as {fmt.upper()} (needs Graphviz)"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str | bytes:
        picture = _render(to_dot(stats, options.all_calls), self.fmt)
        return picture if self.output_is_binary else picture.decode("utf-8")
