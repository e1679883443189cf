"""Pure summaries of profile data: the numbers every renderer prints, computed once."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from graphc.profile.data.model import FunctionProfile, NodeRecord, ValueInfo


def pct(part: float, whole: float) -> float:
    """``part`` as a percentage of ``whole``; 0 when ``whole`` is 0."""
    return 100.0 * part / whole if whole else 0.0


@dataclass(frozen=True)
class GlobalSummary:
    """The global section's numbers, summed over functions."""

    message: str
    calls: int
    call_ns: int
    vm_ns: int
    thunk_ns: int
    vm_pct: float
    thunk_pct: float
    total_compile_ns: int
    n_apply: int
    rewrite_ns: int
    validate_ns: int
    linker_ns: int
    codegen_ns: int
    compile_ns: int
    import_ns: int
    python_import_ns: int
    other_compile_ns: int
    loop_compile_ns: int
    profiler_ns: int
    settings: tuple[str, ...]
    timing_supported: bool


@dataclass(frozen=True)
class TimeRow:
    """One row of the Class, Ops or Apply section."""

    label: str
    pct: float
    cum_pct: float
    ns: int
    calls: int
    cum_ns: int
    n_apply: int
    impl: str
    resolution_ns: int
    all_below: bool  # every call was shorter than the clock resolution
    some_below: bool  # some (not all) calls were
    function: str = ""
    function_index: int = 0
    position: int = -1
    min_ns: int | None = None
    median_ns: float | None = None
    mflops: float | None = None
    gflops_s: float | None = None
    inputs: tuple[ValueInfo, ...] = ()
    outputs: tuple[ValueInfo, ...] = ()
    origins: tuple[str, ...] = ()

    @property
    def per_call_ns(self) -> float:
        """Mean time per call."""
        return self.ns / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class Remaining:
    """What the rows that were not printed account for."""

    count: int
    pct: float
    ns: int


@dataclass(frozen=True)
class TimeTable:
    """Sorted rows, the first ``n`` shown, and the rest summed."""

    rows: tuple[TimeRow, ...]
    remaining: Remaining
    total_ns: int


def settings_line(fp: FunctionProfile) -> str:
    """The effective compile settings of one function, in one line."""
    text = (
        f"mode={fp.mode or '-'}, linker={fp.linker or '-'}, vm={fp.vm_kind or '-'}, "
        f"allow_gc={fp.allow_gc}, optimizer={fp.optimizer or '-'}"
    )
    if fp.rewrites_excluded or fp.rewrites_included:  # both named when either is set
        excl = ":".join(fp.rewrites_excluded) or "-"
        incl = ":".join(fp.rewrites_included) or "-"
        text += f", excluding={excl}, including={incl}"
    return text


def global_summary(fps: Sequence[FunctionProfile], message: str | None = None) -> GlobalSummary:
    """Sum the global numbers of ``fps``."""
    call_ns = sum(f.call_ns for f in fps)
    vm_ns = sum(f.vm_ns for f in fps)
    thunk_ns = sum(f.thunk_ns() for f in fps)
    settings = tuple(dict.fromkeys(settings_line(f) for f in fps))
    return GlobalSummary(
        message=message if message is not None else ", ".join(f.name for f in fps),
        calls=sum(f.calls for f in fps),
        call_ns=call_ns,
        vm_ns=vm_ns,
        thunk_ns=thunk_ns,
        vm_pct=pct(vm_ns, call_ns),
        thunk_pct=pct(thunk_ns, call_ns),
        total_compile_ns=sum(f.compile.total_ns for f in fps),
        n_apply=sum(f.compile.n_apply or len(f.nodes) for f in fps),
        rewrite_ns=sum(f.compile.rewrite_ns for f in fps),
        validate_ns=sum(f.compile.validate_ns for f in fps),
        linker_ns=sum(f.compile.linker_ns for f in fps),
        codegen_ns=sum(f.compile.codegen_ns for f in fps),
        compile_ns=sum(f.compile.compile_ns for f in fps),
        import_ns=sum(f.compile.import_ns for f in fps),
        python_import_ns=sum(f.compile.python_import_ns for f in fps),
        other_compile_ns=sum(f.compile.other_ns() for f in fps),
        loop_compile_ns=sum(f.compile.loop_compile_ns for f in fps),
        profiler_ns=sum(f.compile.profiler_ns for f in fps),
        settings=settings,
        timing_supported=all(f.timing_supported for f in fps),
    )


def _impl(nodes: Sequence[NodeRecord]) -> str:
    kinds = sorted({n.impl for n in nodes})
    return "+".join(kinds)


def _finish(
    rows: list[TimeRow], n: int, total_ns: int, key: Callable[[TimeRow], tuple]
) -> TimeTable:
    """Sort, fill percentages from cumulated nanoseconds, cut at ``n``."""
    rows.sort(key=key)
    out: list[TimeRow] = []
    cum = 0
    for r in rows:
        cum += r.ns
        out.append(replace(r, pct=pct(r.ns, total_ns), cum_pct=pct(cum, total_ns), cum_ns=cum))
    shown, rest = out[: max(n, 0)], out[max(n, 0) :]
    rest_ns = sum(r.ns for r in rest)
    return TimeTable(tuple(shown), Remaining(len(rest), pct(rest_ns, total_ns), rest_ns), total_ns)


def _ran(fps: Sequence[FunctionProfile]) -> list[tuple[FunctionProfile, NodeRecord]]:
    return [(f, n) for f in fps for n in f.nodes if n.calls > 0]


def _group_row(label: str, members: list[tuple[FunctionProfile, NodeRecord]]) -> TimeRow:
    nodes = [n for _, n in members]
    calls = sum(n.calls for n in nodes)
    below = sum(n.n_below_resolution for n in nodes)
    ns = sum(n.ns_total for n in nodes)
    return TimeRow(
        label=label,
        pct=0.0,
        cum_pct=0.0,
        ns=ns,
        calls=calls,
        cum_ns=0,
        n_apply=len(nodes),
        impl=_impl(nodes),
        resolution_ns=max(f.clock_resolution_ns for f, _ in members),
        all_below=ns == 0 or below >= calls,
        some_below=0 < below < calls,
    )


def _grouped(fps: Sequence[FunctionProfile], n: int, attr: str) -> TimeTable:
    groups: dict[str, list[tuple[FunctionProfile, NodeRecord]]] = {}
    for f, node in _ran(fps):
        groups.setdefault(getattr(node, attr), []).append((f, node))
    rows = [_group_row(label, members) for label, members in groups.items()]
    total = sum(r.ns for r in rows)
    return _finish(rows, n, total, key=lambda r: (-r.ns, r.label))


def class_table(fps: Sequence[FunctionProfile], n: int = 20) -> TimeTable:
    """Time per Op class."""
    return _grouped(fps, n, "op_class")


def op_table(fps: Sequence[FunctionProfile], n: int = 20) -> TimeTable:
    """Time per Op (Apply nodes with equal Ops share an ``op_name``)."""
    return _grouped(fps, n, "op_name")


def median_ns(node: NodeRecord) -> float | None:
    """Median of the recent per-call samples, None without samples."""
    return float(statistics.median(node.ns_samples)) if node.ns_samples else None


def _apply_row(f: FunctionProfile, index: int, node: NodeRecord, labels: dict) -> TimeRow:
    row = _group_row(node.apply_name, [(f, node)])
    flops = node.flops_per_call
    gflops = None
    if node.sampled_flops is not None and node.sampled_ns > 0:  # flops per ns == Gflop/s
        gflops = node.sampled_flops / node.sampled_ns  # the same calls' flops and time
    elif flops is not None and node.ns_total > 0:
        gflops = flops * node.calls / node.ns_total
    return replace(
        row,
        function=f.name,
        function_index=index,
        position=node.position,
        min_ns=node.ns_min,
        median_ns=median_ns(node),
        mflops=None if flops is None else flops / 1e6,
        gflops_s=gflops,
        inputs=tuple(node.inputs),
        outputs=tuple(node.outputs),
        origins=tuple(dict.fromkeys(labels.get(o, o) for o in node.origins)),
    )


#: Separator of a source line's call chain (``graphc.graph.basic.CHAIN``).
CHAIN = " <- "


def origin_labels(fps: Sequence[FunctionProfile]) -> dict[str, str]:
    """How each recorded source line is shown: its innermost line, or its whole call chain
    when that line was reached by several chains (one helper building two layers)."""
    chains: dict[str, set[str]] = {}
    for _, node in _ran(fps):
        for o in node.origins:
            chains.setdefault(o.split(CHAIN, 1)[0], set()).add(o)
    return {o: (o if len(group) > 1 else line) for line, group in chains.items() for o in group}


def apply_table(fps: Sequence[FunctionProfile], n: int = 20) -> TimeTable:
    """Time per Apply node; ties keep function order and schedule position."""
    labels = origin_labels(fps)
    rows = [_apply_row(f, i, node, labels) for i, f in enumerate(fps) for node in f.nodes
            if node.calls]  # fmt: skip
    total = sum(r.ns for r in rows)
    return _finish(rows, n, total, key=lambda r: (-r.ns, r.function_index, r.position))


def source_table(fps: Sequence[FunctionProfile], n: int = 20) -> TimeTable:
    """Time per user source line: a node built by several lines (a fused loop) shares its
    time between them equally; nodes with no recorded line are grouped as ``?``."""
    ns: dict[str, float] = {}
    calls: dict[str, int] = {}
    applies: dict[str, int] = {}
    res: dict[str, int] = {}
    labels = origin_labels(fps)
    for f, node in _ran(fps):
        lines = list(dict.fromkeys(labels.get(o, o) for o in node.origins)) or ["?"]
        for line in lines:
            ns[line] = ns.get(line, 0.0) + node.ns_total / len(lines)
            calls[line] = calls.get(line, 0) + node.calls
            applies[line] = applies.get(line, 0) + 1
            res[line] = max(res.get(line, 1), f.clock_resolution_ns)
    rows = [
        TimeRow(
            label=line,
            pct=0.0,
            cum_pct=0.0,
            ns=round(t),
            calls=calls[line],
            cum_ns=0,
            n_apply=applies[line],
            impl="",
            resolution_ns=res[line],
            all_below=t == 0,
            some_below=False,
        )  # fmt: skip
        for line, t in ns.items()
    ]
    total = sum(r.ns for r in rows)
    return _finish(rows, n, total, key=lambda r: (-r.ns, r.label))
