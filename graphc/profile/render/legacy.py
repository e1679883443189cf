"""The legacy ``ProfileMode`` text: ``print_summary`` and ``print_diff_summary``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.summaries.diff import DiffTable, apply_diff, class_diff, op_diff
from graphc.profile.summaries.tables import (
    TimeRow,
    TimeTable,
    apply_table,
    class_table,
    op_table,
    pct,
)
from graphc.profile.summaries.tips import tips as all_tips

C_FOOTNOTE = "(*) Op is running a c implementation"


def _s(ns: float) -> str:
    return f"{ns / 1e9:.3e}s"


def _t(ns: float, row: TimeRow) -> str:
    return _s(ns)  # the measured number, as Theano printed it (never a marker in a column)


def _star(row: TimeRow) -> str:
    return "*" if row.impl == "C" else " "


def _remaining(tbl: TimeTable, noun: str) -> str:
    rem = tbl.remaining
    return (
        f"   ... (remaining {rem.count} {noun} account for "
        f"{rem.pct:.2f}%({rem.ns / 1e9:.2e}s) of the runtime)"
    )


def _time_rows(tbl: TimeTable, extra: Callable[[TimeRow], str]) -> list[str]:
    lines = []
    for r in tbl.rows:
        lines.append(
            f"   {r.pct:5.1f}%  {r.cum_pct:5.1f}%  {_t(r.ns, r)}  {_s(r.cum_ns)}  "
            f"{_t(r.per_call_ns, r)} {_star(r)} {extra(r)}"
        )
    return lines


def _global_lines(fps: Sequence[FunctionProfile]) -> list[str]:
    local = sum(f.thunk_ns() for f in fps)
    call = sum(f.call_ns for f in fps)
    calls = sum(f.calls for f in fps)
    per_call = call / calls if calls else 0.0
    return [
        f"local_time {_s(local)} (Time spent running thunks)",
        f"graphc compile time: {_s(sum(f.compile.total_ns for f in fps))}",
        f"    Optimization time: {_s(sum(f.compile.rewrite_ns for f in fps))}",
        f"    Linker time: {_s(sum(f.compile.linker_ns for f in fps))}",
        f"graphc fct call {_s(call)}",
        f"   graphc Op time {_s(local)} {pct(local, call):.1f}%(of fct call)",
        f"   graphc function overhead in ProfileMode {_s(call - local)} "
        f"{pct(call - local, call):.1f}%(of fct call)",
        f"{calls} graphc fct call, {_s(per_call)} per call",
    ]


def _fct_lines(fps: Sequence[FunctionProfile]) -> list[str]:
    total = sum(f.call_ns for f in fps)
    lines = ["graphc fct summary:"]
    lines.append("<% total fct time> <total time> <time per call> <nb call> <fct name>")
    for f in sorted(fps, key=lambda f: -f.call_ns):
        per = f.call_ns / f.calls if f.calls else 0.0
        lines.append(
            f"   {pct(f.call_ns, total):5.1f}% {_s(f.call_ns)} {per / 1e9:.2e}s {f.calls} {f.name}"
        )
    return lines


def summary_text(stats: ProfileData, options: SummaryOptions) -> str:
    """The ``ProfileMode.print_summary()`` text for ``stats`` (``options.n_ops`` Class and Op
    rows, ``options.n_apply`` Apply rows)."""
    fps = stats.functions
    classes = class_table(fps, options.n_ops)
    ops = op_table(fps, options.n_ops)
    applies = apply_table(fps, options.n_apply)
    n_ops: dict[str, set[str]] = {}
    for f in fps:
        for node in f.nodes:
            if node.calls:
                n_ops.setdefault(node.op_class, set()).add(node.op_name)
    lines = ["ProfileMode.print_summary()", "---------------------------", ""]
    lines += _global_lines(fps) + [""] + _fct_lines(fps) + [""]
    lines += [
        "Single Op-wise summary:",
        "<% of local_time spent on this kind of Op> <cumulative %> <self seconds> "
        "<cumulative seconds> <time per call> [*] <nb_call> <nb_op> <nb_apply> <Op name>",
    ]
    lines += _time_rows(
        classes,
        lambda r: f"{r.calls:5d} {len(n_ops.get(r.label, ())):2d} {r.n_apply:2d} {r.label}",
    )
    lines += [_remaining(classes, "single Op"), C_FOOTNOTE, ""]
    lines += [
        "Op-wise summary:",
        "<% of local_time spent on this kind of Op> <cumulative %> <self seconds> "
        "<cumulative seconds> <time per call> [*]  <nb_call> <nb apply> <Op name>",
    ]
    lines += _time_rows(ops, lambda r: f"{r.calls:5d} {r.n_apply:2d} {r.label}")
    lines += [_remaining(ops, "Op"), C_FOOTNOTE, ""]
    multi = len(fps) > 1
    lines += [
        "Apply-wise summary:",
        "<% of local_time spent at this position> <cumulative %> <apply time> "
        "<cumulative seconds> <time per call> [*] <nb_call> <Apply position> "
        "<Apply Op name>",
    ]
    lines += _time_rows(
        applies,
        lambda r: f"{r.calls:5d} {r.position:3d} " + (f"{r.function}: " if multi else "") + r.label,
    )
    lines += [_remaining(applies, "Apply instances"), C_FOOTNOTE, ""]
    lines += [
        "Here are tips to potentially make your code run faster",
        "Test them first, as they are not guaranteed to always provide a speedup.",
    ]
    lines += [f"  - {t}" for t in all_tips(fps)] or ["  Sorry, no tip for today."]
    return "\n".join(lines) + "\n"


def print_summary(
    stats: ProfileData,
    n_apply_to_print: int = 15,
    n_ops_to_print: int = 20,
    file: TextIO | None = None,
) -> None:
    """Print the legacy summary of ``stats``."""
    options = SummaryOptions(n_apply=n_apply_to_print, n_ops=n_ops_to_print)
    (file or sys.stdout).write(stats.output(summary_text, options))


def _diff_section(title: str, tbl: DiffTable, name_header: str, positions: bool) -> list[str]:
    head = "<time a> <time b> <diff (a - b)> <nb_call a> <nb_call b>"
    if positions:
        head += " <position a> <position b>"
    lines = [title, f"{head} {name_header}"]
    for r in tbl.rows:
        line = f"   {_s(r.ns_a)} {_s(r.ns_b)} {r.diff_ns / 1e9:+.3e}s {r.calls_a:5d} {r.calls_b:5d}"
        if positions:
            pa = "-" if r.position_a is None else str(r.position_a)
            pb = "-" if r.position_b is None else str(r.position_b)
            line += f" {pa:>3} {pb:>3}"
        lines.append(f"{line} {r.label}")
    lines.append(
        f"   ... (remaining {tbl.remaining} rows account for "
        f"{tbl.remaining_abs_ns / 1e9:.2e}s of absolute difference)"
    )
    return lines + [""]


def diff_text(stats_a: ProfileData, stats_b: ProfileData, options: SummaryOptions) -> str:
    """The ``print_diff_summary`` text: a's numbers, b's numbers and a - b (``options.n_ops``
    Class and Op rows, ``options.n_apply`` Apply rows)."""
    a, b = stats_a.functions, stats_b.functions
    local_a = sum(f.thunk_ns() for f in a)
    local_b = sum(f.thunk_ns() for f in b)
    comp_a = sum(f.compile.total_ns for f in a)
    comp_b = sum(f.compile.total_ns for f in b)
    call_a = sum(f.call_ns for f in a)
    call_b = sum(f.call_ns for f in b)
    lines = ["ProfileMode.print_diff_summary()", "--------------------------------", ""]
    lines += [
        f"a: {', '.join(f.name for f in a) or '-'}",
        f"b: {', '.join(f.name for f in b) or '-'}",
        f"local_time (a - b): {(local_a - local_b) / 1e9:+.3e}s (a {_s(local_a)}, b {_s(local_b)})",
        f"compile time (a - b): {(comp_a - comp_b) / 1e9:+.3e}s (a {_s(comp_a)}, b {_s(comp_b)})",
        f"fct call time (a - b): {(call_a - call_b) / 1e9:+.3e}s (a {_s(call_a)}, b {_s(call_b)})",
        "",
    ]
    lines += _diff_section(
        "Single Op-wise summary difference:",
        class_diff(a, b, options.n_ops),
        "<Op class>",
        False,
    )
    lines += _diff_section(
        "Op-wise summary difference:", op_diff(a, b, options.n_ops), "<Op name>", False
    )
    lines += _diff_section(
        "Apply-wise summary difference:",
        apply_diff(a, b, options.n_apply),
        "<Apply name>",
        True,
    )
    return "\n".join(lines)


def print_diff_summary(
    a: ProfileData,
    b: ProfileData,
    n_apply_to_print: int = 15,
    n_ops_to_print: int = 20,
    file: TextIO | None = None,
) -> None:
    """Print the differences between two profiles (e.g. two modes on one graph)."""
    a.refresh()
    b.refresh()
    options = SummaryOptions(n_apply=n_apply_to_print, n_ops=n_ops_to_print)
    (file or sys.stdout).write(diff_text(a, b, options))
