"""Golden layout of each text section, numbers computed by hand from profile_factory."""

from __future__ import annotations

import io

import pytest
from profile_factory import four_node_function, node

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.render.text import render_apply, render_global, render_grouped
from graphc.profile.summaries.tables import apply_table, class_table, global_summary, op_table


@pytest.fixture(autouse=True)
def _wide_report(monkeypatch):
    """These tests check content, not layout: a width where nothing is cut
    (tests/test_profile_width.py checks the layout)."""
    monkeypatch.setenv("COLUMNS", "400")


def _section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(title)
    end = lines.index("", start)
    return lines[start:end]


def test_global_section_golden():
    lines = render_global(global_summary([four_node_function()]))
    assert lines == [
        "Function profiling",
        "==================",
        "  Message: f",
        "  Settings: mode=FAST_RUN, linker=c|py, vm=cvm, allow_gc=True, "
        "optimizer=fast_run, excluding=fusion:inplace, including=-",
        "  Time in 10 calls to Function.__call__: 8.000000e-03s",
        "  Time in Function.fn.__call__: 6.000000e-03s (75.000%)",
        "  Time in thunks: 5.000000e-03s (62.500%)",
        "  Total compile time: 2.500000e+00s",
        "    Number of Apply nodes: 4",
        "    graphc Optimizer time: 1.000000e+00s",
        "       graphc validate time: 1.000000e-03s",
        "    graphc Linker time (includes C code generation/compiling): 1.400000e+00s",
        "       C code generation time 2.000000e-01s",
        "       C compile time 1.000000e+00s",
        "       Import time 3.000000e-03s",
        "    Python imports on first use: 0.000000e+00s",
        "    Other compile time: 1.000000e-01s",
    ]


def test_class_section_golden():
    lines = render_grouped("Class", class_table([four_node_function()]), "<Class name>", "Classes")
    assert lines == [
        "Class",
        "---",
        "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <Class name>",
        "   80.0%   80.0%    4.00e-03s       1.33e-04s      C      30        3 "
        "graphc.tensor.elemwise.Elemwise",
        "   20.0%  100.0%    1.00e-03s       1.00e-04s     Py      10        1 "
        "graphc.tensor.blas.Dot",
        "   ... (remaining 0 Classes account for   0.00%(0.00e+00s) of the runtime)",
        "",
    ]


def test_ops_section_cut_and_remaining():
    lines = render_grouped("Ops", op_table([four_node_function()], 2), "<Op name>", "Ops")
    assert lines == [
        "Ops",
        "---",
        "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <Op name>",
        "   70.0%   70.0%    3.50e-03s       1.75e-04s      C      20        2 add",
        "   20.0%   90.0%    1.00e-03s       1.00e-04s     Py      10        1 dot",
        "   ... (remaining 1 Ops account for  10.00%(5.00e-04s) of the runtime)",
        "",
    ]


def test_apply_section_golden():
    """Theano's Apply columns, each row on one line; graphc's min, median and flops under it."""
    lines = render_apply(apply_table([four_node_function()], 2), with_function=False)
    assert lines == [
        "Apply",
        "------",
        "<% time> <sum %> <apply time> <time per call> <#call> <id> <Apply name>",
        "   60.0%   60.0%    3.00e-03s       3.00e-04s      10    0 add(x, y)",
        "    min 2.50e-04s, median 3.00e-04s, 1.000 Mflops, 3.333 Gflops/s",
        "    float64 (1000,) (1000,) -> (1000,)",
        "   20.0%   80.0%    1.00e-03s       1.00e-04s      10    1 dot(x, W)",
        "    min 9.00e-05s, median 1.00e-04s",
        "    float64 (1000,) (1000,1000)s -> (1000,)",
        "   ... (remaining 2 Apply instances account for  20.00%(1.00e-03s) of the runtime)",
        "  (min: over all calls; median: over each node's most recent calls, up to 32 per process)",
        "",
    ]


def test_apply_ties_keep_schedule_order():
    rows = apply_table([four_node_function()]).rows
    assert [r.position for r in rows] == [0, 1, 2, 3]
    assert [r.cum_pct for r in rows] == [60.0, 80.0, 90.0, 100.0]


def test_columns_right_aligned_under_headers():
    lines = render_grouped("Ops", op_table([four_node_function()]), "<Op name>", "Ops")
    header, rows = lines[2], lines[3:6]
    ends = [i + len(tok) for i, tok in _tokens(header)][:-1]
    for row in rows:
        row_ends = [i + len(tok) for i, tok in _tokens(row)][: len(ends)]
        assert row_ends == ends


def _tokens(line: str) -> list[tuple[int, str]]:
    out, i = [], 0
    for tok in line.split(" "):
        if tok:
            out.append((i, tok))
        i += len(tok) + 1
    # header tokens like "<% time>" contain a space: glue "<..." pieces back together
    glued: list[tuple[int, str]] = []
    for i, tok in out:
        if glued and glued[-1][1].startswith("<") and not glued[-1][1].endswith(">"):
            j, prev = glued.pop()
            glued.append((j, line[j : i + len(tok)]))
        else:
            glued.append((i, tok))
    return glued


def _two_functions() -> ProfileStats:
    g = FunctionProfile(
        "g",
        calls=2,
        call_ns=3_000_000,
        vm_ns=2_500_000,
        nodes=[node(0, "exp(x)", "exp", impl="C", calls=2, ns_total=2_000_000, ns_min=900_000)],
    )
    return ProfileStats([four_node_function(), g])


def test_function_named_under_each_row_when_several_functions():
    out = io.StringIO()
    _two_functions().summary(file=out)
    apply = _section(out.getvalue(), "Apply")
    assert apply[2] == "<% time> <sum %> <apply time> <time per call> <#call> <id> <Apply name>"
    # 7e6 ns of node time in all: add 3e6 (42.9%), exp 2e6 (28.6%, cum 71.4%)
    assert apply[3] == "   42.9%   42.9%    3.00e-03s       3.00e-04s      10    0 add(x, y)"
    assert apply[4].startswith("    function f, min 2.50e-04s")
    k = apply.index("   28.6%   71.4%    2.00e-03s       1.00e-03s       2    0 exp(x)")
    assert apply[k + 1].startswith("    function g, min 9.00e-04s")


def test_summed_global_numbers_over_functions():
    g = global_summary(_two_functions().functions, "both")
    assert (g.calls, g.call_ns, g.vm_ns, g.thunk_ns) == (12, 11_000_000, 8_500_000, 7_000_000)
    assert g.message == "both"
    assert round(g.thunk_pct, 6) == round(700 / 11, 6)


def test_below_resolution_marked_and_explained():
    fp = FunctionProfile(
        "tiny",
        calls=5,
        call_ns=1000,
        clock_resolution_ns=50,
        nodes=[
            node(0, "a(x)", "a", calls=5, ns_total=0, n_below_resolution=5),
            node(1, "b(x)", "b", calls=4, ns_total=400, ns_min=30, n_below_resolution=1),
        ],
    )
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out)
    apply = _section(out.getvalue(), "Apply")
    # the rows keep Theano's plain numbers (what was measured); the line under says why
    k = apply.index("    0.0%  100.0%    0.00e+00s       0.00e+00s       5    0 a(x)")
    assert apply[k + 1].endswith("; every call under the clock resolution (5.0e-08s)")
    k = apply.index("  100.0%  100.0%    4.00e-07s       1.00e-07s       4    1 b(x)")
    assert apply[k + 1].endswith("; some calls under the clock resolution (5.0e-08s): approximate")
    ops = _section(out.getvalue(), "Ops")
    k = [i for i, line in enumerate(ops) if line.endswith(" a")][0]
    assert ops[k + 1] == "    (every call under the clock resolution (5.0e-08s))"


def test_untimed_linker_says_so():
    fp = four_node_function()
    fp.timing_supported = False
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out)
    text = out.getvalue()
    assert "Time in thunks: not measured (the linker cannot time nodes)" in text
    assert "Class, Ops and Apply sections omitted: the linker cannot time nodes." in text
    assert "\nClass\n" not in text


def test_tips_section_last():
    out = io.StringIO()
    ProfileStats([four_node_function()]).summary(file=out)
    lines = out.getvalue().splitlines()
    start = lines.index("Here are tips to potentially make your code run faster")
    assert lines[start + 2 :] == [
        "  - Try the graphc flag floatX=float32 (2 Apply node(s) produce float64)",
        "  - f: a chain of 3 Elemwise nodes is not fused; do not exclude the `fusion` rewrite",
    ]


def test_optimizer_section_sorted_by_time_and_summed_over_functions():
    from graphc.profile import OptimizerProfile, PassRecord, RewriteRecord
    from graphc.profile.render.text import render_optimizer

    f, g = four_node_function("f"), four_node_function("g")
    f.optimizer_profile = OptimizerProfile(
        [PassRecord("canonicalize", 3_000_000), PassRecord("specialize", 5_000_000)],
        [
            RewriteRecord("local_add_canon", 40, 2, 1_000_000),
            RewriteRecord("constant_fold", 9, 1, 250),
        ],
    )
    g.optimizer_profile = OptimizerProfile(
        [PassRecord("canonicalize", 4_000_000)], [RewriteRecord("constant_fold", 1, 1, 2_000_000)]
    )
    assert render_optimizer([f, g]) == [
        "Optimizer Profile",
        "-----------------",
        " Rewrite passes: 1.200000e-02s in total",
        "          <time> <pass>",
        "   7.000000e-03s canonicalize",
        "   5.000000e-03s specialize",
        " Rewrites, by time:",
        "          <time> <tried> <applied> <rewrite>",
        "   2.000250e-03s      10         2 constant_fold",
        "   1.000000e-03s      40         2 local_add_canon",
        "",
    ]
    assert render_optimizer([four_node_function()])[2] == "  The rewrite phase was not profiled."


def test_no_tip():
    fp = FunctionProfile("quiet", nodes=[node(0, "a(x)", "a", "pkg.A", impl="C", calls=1)])
    out = io.StringIO()
    ProfileStats([fp]).summary(file=out)
    assert out.getvalue().endswith(
        "Here are tips to potentially make your code run faster\n"
        "                 Test them first, as they are not guaranteed to always provide a "
        "speedup.\n"
        "  Sorry, no tip for today.\n"
    )
