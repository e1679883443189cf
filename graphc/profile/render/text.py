"""Text renderer: the summaries laid out like Theano/PyTensor's profiler output."""

from __future__ import annotations

from collections.abc import Sequence

from graphc.profile.data.memplan import MemoryPlanRecord
from graphc.profile.data.merge import combined_optimizer
from graphc.profile.data.model import FunctionProfile, StorageRecord
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.data.steady import has_first_call, steady_state
from graphc.profile.render.fmt import (
    below,
    fit_lines,
    middle_ellipsis,
    nbytes,
    origins_text,
    report_width,
    seconds,
    shape_text,
    short_origin,
    short_seconds,
    table,
    values_line,
)
from graphc.profile.render.loops import render_loops
from graphc.profile.render.roofline import render_roofline
from graphc.profile.summaries.memory import FunctionMemory, MemorySummary, memory_summary
from graphc.profile.summaries.sampling import sampling_lines, scaled
from graphc.profile.summaries.tables import (
    GlobalSummary,
    Remaining,
    TimeRow,
    TimeTable,
    apply_table,
    class_table,
    global_summary,
    op_table,
    source_table,
)
from graphc.profile.summaries.tips import tips as all_tips

MEDIAN_NOTE = (
    "  (min: over all calls; median: over each node's most recent calls, up to 32 per process)"
)


def render_global(g: GlobalSummary) -> list[str]:
    """The ``Function profiling`` header section."""
    lines = ["Function profiling", "==================", f"  Message: {g.message}"]
    lines += [f"  Settings: {s}" for s in g.settings]
    lines.append(f"  Time in {g.calls} calls to Function.__call__: {seconds(g.call_ns)}")
    lines.append(f"  Time in Function.fn.__call__: {seconds(g.vm_ns)} ({g.vm_pct:.3f}%)")
    if g.timing_supported:
        lines.append(f"  Time in thunks: {seconds(g.thunk_ns)} ({g.thunk_pct:.3f}%)")
    else:
        lines.append("  Time in thunks: not measured (the linker cannot time nodes)")
    lines += [
        f"  Total compile time: {seconds(g.total_compile_ns)}",
        f"    Number of Apply nodes: {g.n_apply}",
        f"    graphc Optimizer time: {seconds(g.rewrite_ns)}",
        f"       graphc validate time: {seconds(g.validate_ns)}",
        "    graphc Linker time (includes C code generation/compiling): " + seconds(g.linker_ns),
        f"       C code generation time {seconds(g.codegen_ns)}",
        f"       C compile time {seconds(g.compile_ns)}",
        f"       Import time {seconds(g.import_ns)}",
        f"       Loop step compile time (scan) {seconds(g.loop_compile_ns)}",
        f"    Python imports on first use: {seconds(g.python_import_ns)}",
        f"    Other compile time: {seconds(g.other_compile_ns)}"
        + (f", profiler setup {seconds(g.profiler_ns)}" if g.profiler_ns else ""),
    ]
    # a phase a function may not have is printed when it took time
    return [ln for ln in lines if g.loop_compile_ns or not ln.startswith("       Loop step")]


def render_first_calls(
    firsts: Sequence[FunctionProfile], calls: int, all_calls: bool = True
) -> list[str]:
    """The first calls, reported apart: the global section above counts them (``calls``
    is every call); the sections below count them too unless ``all_calls`` is false."""
    if not firsts:
        return []
    call_ns = sum(f.first_call_ns for f in firsts)
    vm_ns = sum(f.first_vm_ns for f in firsts)
    n = sum(f.first_calls for f in firsts)
    what = "First call" if n == 1 else f"First calls ({n})"
    tables = (
        f"the tables include {'it' if n == 1 else 'them'}"
        if all_calls
        else f"tables: the other {calls - n} calls"
    )
    return [f"  {what}: {seconds(call_ns)} (Function.fn.__call__ {seconds(vm_ns)}); {tables}"]


def render_waits(fps: Sequence[FunctionProfile]) -> list[str]:
    """What the times mean when threads called one function at once (nothing otherwise)."""
    waited = sum(f.waited_calls for f in fps)
    if not waited:
        return []
    return [
        f"  Calls from several threads: {waited} waited {seconds(sum(f.wait_ns for f in fps))} "
        "in all for another thread's call of the same function. A function runs one call at "
        "a time, each timed from its start to its end, so one function's times add up to at "
        "most the wall time; the waits are not in them."
    ]


def _time_cell(ns: float) -> str:
    return short_seconds(ns)


def _sample_cell(ns: float | None) -> str:
    return "-" if ns is None else short_seconds(ns)


def _resolution_note(row: TimeRow) -> str:
    """What the clock could not resolve in a row's calls ("" when it resolved them all)."""
    if row.all_below:
        return f"every call under the clock resolution ({below(row.resolution_ns)[1:]})"
    if row.some_below:
        return (
            f"some calls under the clock resolution ({below(row.resolution_ns)[1:]}): approximate"
        )
    return ""


def remaining_line(rem: Remaining, noun: str) -> str:
    """``   ... (remaining N <noun> account for  X.XX%(Ys) of the runtime)``."""
    return (
        f"   ... (remaining {rem.count} {noun} account for "
        f"{rem.pct:6.2f}%({rem.ns / 1e9:.2e}s) of the runtime)"
    )


def _common_cells(r: TimeRow) -> list[str]:
    return [f"{r.pct:.1f}%", f"{r.cum_pct:.1f}%", _time_cell(r.ns), _time_cell(r.per_call_ns)]


GROUP_HEADERS = ["<% time>", "<sum %>", "<apply time>", "<time per call>", "<type>"]


def render_grouped(
    title: str, tbl: TimeTable, name_header: str, noun: str, width: int | None = None
) -> list[str]:
    """The Class or Ops section, in Theano's columns (a row the clock could not resolve
    says so on the line under it)."""
    headers = GROUP_HEADERS + ["<#call>", "<#apply>", name_header]
    rows = [_common_cells(r) + [r.impl, str(r.calls), str(r.n_apply), r.label] for r in tbl.rows]
    head, *body = table(headers, rows, width=width)
    lines = [title, "---", head]
    for r, line in zip(tbl.rows, body):
        note = _resolution_note(r)
        lines += [line, f"    ({note})"] if note else [line]
    return lines + [remaining_line(tbl.remaining, noun), ""]


def _opt(v: float | None, unit: str) -> str:
    return "" if v is None else f", {v:.3f} {unit}"


#: Theano's Apply columns; graphc's own (min, median, flops...) go on the lines under a row.
APPLY_HEADERS = ["<% time>", "<sum %>", "<apply time>", "<time per call>", "<#call>", "<id>"]
APPLY_NAME_ROOM = 16  # below this many columns for names, names get their own line


def _apply_extras(r: TimeRow, with_function: bool) -> str:
    """The line under an Apply row: graphc's columns that Theano did not print."""
    head = f"    function {r.function}, " if with_function else "    "
    text = f"{head}min {_sample_cell(r.min_ns)}, median {_sample_cell(r.median_ns)}"
    text += _opt(r.mflops, "Mflops") + _opt(r.gflops_s, "Gflops/s")
    note = _resolution_note(r)
    return text + (f"; {note}" if note else "")


def render_apply(tbl: TimeTable, with_function: bool, width: int | None = None) -> list[str]:
    """The Apply section: Theano's row (name last, on the same line), then the node's
    function, min, median and flops, its inputs and outputs and source lines under it."""
    rows = [
        _common_cells(r) + [str(r.calls), str(r.position), r.label] for r in tbl.rows
    ]  # fmt: skip
    numbers = table(APPLY_HEADERS, [row[:-1] for row in rows])
    if width is not None and len(numbers[0]) + 1 + APPLY_NAME_ROOM > width:
        # too narrow for names after the numbers: each name on its own line
        head = [numbers[0], "    <Apply name>"]
        body = [
            [n, "    " + middle_ellipsis(row[-1], width - 4)] for n, row in zip(numbers[1:], rows)
        ]
    else:
        full = table(APPLY_HEADERS + ["<Apply name>"], rows, width=width)
        head, body = [full[0]], [[line] for line in full[1:]]
    lines = ["Apply", "------", *head]
    for r, text in zip(tbl.rows, body):
        lines += text + [_apply_extras(r, with_function)]
        lines += _values_and_origins(r, width)
    lines.append(remaining_line(tbl.remaining, "Apply instances"))
    lines.append(MEDIAN_NOTE)
    return lines + [""]


def _values_and_origins(r: TimeRow, width: int | None) -> list[str]:
    """A row's shapes and source lines: one line when they fit in ``width``."""
    values = values_line(r.inputs, r.outputs) if r.inputs or r.outputs else ""
    origins = f"from: {origins_text(r.origins)}" if r.origins else ""
    if not origins:
        return [values] if values else []
    if not values:
        return ["    " + origins]
    both = f"{values}    {origins}"
    if width is None or len(both) <= width:
        return [both]
    return [values, "    " + origins]


def render_sources(tbl: TimeTable, width: int | None = None) -> list[str]:
    """Time per user source line (the lines that built each node, through fusion)."""
    headers = ["<% time>", "<sum %>", "<apply time>", "<#apply>", "<source line>"]
    rows = [
        [
            f"{r.pct:.1f}%",
            f"{r.cum_pct:.1f}%",
            _time_cell(r.ns),
            str(r.n_apply),
            short_origin(r.label),
        ]  # fmt: skip
        for r in tbl.rows
    ]
    lines = ["Source lines", "------------"] + table(headers, rows, width=width)
    lines.append(remaining_line(tbl.remaining, "source lines"))
    lines.append("  (a node built by several lines, such as a fused loop, shares its time)")
    return lines + [""]


def _bytes_line(n: int) -> str:
    return f"        CPU: {nbytes(n)} ({n}B)"


def _storage_lines(title: str, records: Sequence[StorageRecord], min_size: int = 0) -> list[str]:
    """One line per record of at least ``min_size`` bytes, the smaller ones summed."""
    if not records:
        return []
    lines = [f"    {title} (not counted above):"]
    big = [r for r in records if r.nbytes >= min_size]
    lines += [f"    {r.nbytes:>9d}B  {shape_text(r.shape)} {r.name}" for r in big]
    small = [r for r in records if r.nbytes < min_size]
    if small:
        total = sum(r.nbytes for r in small)
        lines.append(f"    {total:>9d}B  in {len(small)} smaller than {min_size}B")
    return lines


def _memory_lines(m: FunctionMemory, several: bool) -> list[str]:
    lines = [f"  Function {m.name}:"] if several else []
    lines += [
        f"    Max peak memory with current setting (vm={m.vm_kind}, allow_gc={m.allow_gc})",
        _bytes_line(m.current),
        f"    Max peak memory with vm={m.other_vm} (both VMs free storage at the same points)",
        _bytes_line(m.other_vm_peak),
        f"    Max peak memory if allow_gc={not m.allow_gc}",
        _bytes_line(m.other_gc),
        f"    Memory saved by gc: {nbytes(m.saved_by_gc)} ({m.saved_by_gc}B)",
    ]
    if m.peak_without_inplace is not None:
        lines += [
            "    Max peak memory with current setting and graphc flag optimizer_excluding=inplace",
            _bytes_line(m.peak_without_inplace),
        ]
    if m.measured is not None:
        lines.append(
            f"    Peak measured by the VM (outputs included): {nbytes(m.measured)} ({m.measured}B)"
        )
    if m.min_order is not None:
        o = m.min_order
        how = "exhaustive search" if o.method == "exhaustive" else "greedy heuristic"
        lines += [
            f"    Minimum peak from all valid apply node order is {nbytes(o.peak)} ({o.peak}B)"
            f"(took {o.seconds:.3f}s to compute)",
            f"        found by {how}",
        ]
    return lines + plan_lines(m.plan)


def plan_lines(rec: MemoryPlanRecord | None) -> list[str]:
    """The memory plan's line of the memory section (none without a plan)."""
    if rec is None or rec.buffers == 0:
        return []
    return [
        f"    Memory plan: {rec.slots} intermediates in {rec.buffers} reused buffers, "
        f"{nbytes(rec.bytes)} ({rec.bytes}B) kept between calls"
    ]


def render_memory(s: MemorySummary) -> list[str]:
    """The memory section: peaks over the recorded schedule and the largest outputs."""
    lines = ["Memory Profile", "(intermediate storage created by Apply nodes)", "---"]
    if not s.functions:
        return lines + ["    Memory was not recorded for these functions.", ""]
    several = len(s.functions) > 1
    for m in s.functions:
        lines += _memory_lines(m, several)
    lines += ["---", ""]
    lines.append(
        "    <Sum apply outputs (bytes)> <Apply outputs shape> <created/inplace/view> <Apply node>"
    )
    lines.append("")
    for r in s.shown:
        shapes = ", ".join(shape_text(x) for x in r.shapes)
        name = f"{r.function}: {r.apply_name}" if several else r.apply_name
        lines.append(f"    {r.nbytes:>9d}B  [{shapes}] {r.kinds} {name}")
    lines.append(
        f"   ... (remaining {s.remaining_count} Apply account for {s.remaining_bytes:>5d}B/"
        f"{s.total_bytes}B ({s.remaining_pct:.2f}%) of the Apply with dense outputs sizes)"
    )
    if s.all_small:
        lines.append(
            f"    All Apply nodes have output sizes that take less than {s.min_memory_size}B."
        )
    lines.append("")
    if s.workspace:
        lines.append(
            "    <Scratch workspace per call (bytes)> <Apply node>  (counted in the peaks)"
        )
        lines += [f"    {b:>9d}B  {name}" for name, b in s.workspace]
        lines.append("")
    for m in s.functions:
        prefix = f"{m.name}: " if several else ""
        lines += _storage_lines(prefix + "Inputs", m.inputs)
        lines += _storage_lines(prefix + "Constants", m.constants, s.min_memory_size)
    lines += [
        "    <created/inplace/view> is taken from the Op's declaration.",
        "    Apply nodes marked 'inplace' or 'view' may actually allocate memory, "
        "this is not reported here.",
        "",
    ]
    return lines


def render_optimizer(fps: Sequence[FunctionProfile]) -> list[str]:
    """Time per rewrite pass and per rewrite (tried / applied / time), by time."""
    lines = ["Optimizer Profile", "-----------------"]
    prof = combined_optimizer(fps)
    if prof is None:
        return lines + ["  The rewrite phase was not profiled.", ""]
    passes = sorted(prof.passes, key=lambda p: (-p.ns, p.name))
    lines.append(f" Rewrite passes: {seconds(sum(p.ns for p in passes))} in total")
    lines += [
        "   " + x for x in table(["<time>", "<pass>"], [[seconds(p.ns), p.name] for p in passes])
    ]
    rewrites = sorted(prof.rewrites, key=lambda r: (-r.ns, r.name))
    lines.append(" Rewrites, by time:")
    rows = [[seconds(r.ns), str(r.tried), str(r.applied), r.name] for r in rewrites]
    lines += ["   " + x for x in table(["<time>", "<tried>", "<applied>", "<rewrite>"], rows)]
    return lines + [""]


def render_tips(items: Sequence[str]) -> list[str]:
    """The closing list of suggestions."""
    lines = [
        "Here are tips to potentially make your code run faster",
        "                 Test them first, as they are not guaranteed to always provide a speedup.",
    ]
    lines += [f"  - {t}" for t in items] or ["  Sorry, no tip for today."]
    return lines


def _step_tables(body: FunctionProfile, n: int, width: int) -> list[str]:
    """A loop step's own Class and Apply tables (its nodes, over all steps)."""
    lines = render_grouped(f"Class ({body.name})", class_table([body], n), "<Class name>",
                           "Classes", width)  # fmt: skip
    return lines + render_apply(apply_table([body], n), False, width)


def render_summary(stats: ProfileData, options: SummaryOptions) -> str:
    """Every section for ``stats``, laid out by ``options``: no line wider than
    ``options.width`` (None: the terminal's, see ``report_width``); the memory and optimizer
    sections when asked, or (None) when recorded; ``options.n_apply`` Apply rows and
    ``options.n_ops`` Class, Op and source-line rows.

    Every section counts every call, as Theano's did; each function's first call is also
    reported on its own line. With ``options.all_calls`` false, the sections below the
    global one describe the steady state: the first calls are left out of them.
    """
    width = options.width or report_width()
    n_apply, n_ops = options.n_apply, options.n_ops
    recorded = stats.functions
    firsts = [f for f in recorded if has_first_call(f)]
    fps = recorded if options.all_calls else [steady_state(f) for f in recorded]
    sampled = sampling_lines(recorded)
    fps = [scaled(f) for f in fps]
    every = global_summary([scaled(f) for f in recorded], stats.name)
    lines = render_global(every) + render_first_calls(firsts, every.calls, options.all_calls)
    lines += render_waits(recorded) + sampled + [""]
    if all(f.timing_supported for f in fps):
        lines += render_grouped("Class", class_table(fps, n_ops), "<Class name>", "Classes", width)
        lines += render_grouped("Ops", op_table(fps, n_ops), "<Op name>", "Ops", width)
        lines += render_apply(apply_table(fps, n_apply), len(fps) > 1, width)
        lines += render_sources(source_table(fps, n_ops), width)
        lines += render_loops(
            fps, width, lambda body: _step_tables(body, n_apply, width), n_rows=n_apply
        )
        lines += render_roofline(fps, n_apply, width)
    else:
        lines += [
            "Class, Ops and Apply sections omitted: the linker cannot time nodes.",
            "",
        ]
    memory = options.memory
    if memory or (memory is None and any(f.memory_recorded for f in fps)):
        lines += render_memory(memory_summary(fps, n_apply, options.min_memory_size))
    optimizer = options.optimizer
    if optimizer or (optimizer is None and any(f.optimizer_profile for f in fps)):
        lines += render_optimizer(fps)
    lines += render_tips(all_tips(recorded))
    return "\n".join(fit_lines(lines, width)) + "\n"
