"""Legacy ProfileMode text: print_summary and a print_diff_summary that works."""

from __future__ import annotations

import io

from profile_factory import four_node_function, node

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.render.legacy import print_diff_summary, print_summary
from graphc.profile.summaries.diff import match_nodes


def _summary(stats, **kw) -> list[str]:
    out = io.StringIO()
    print_summary(stats, file=out, **kw)
    return out.getvalue().splitlines()


def test_print_summary_layout():
    lines = _summary(ProfileStats([four_node_function()]), n_apply_to_print=2)
    assert lines[:13] == [
        "ProfileMode.print_summary()",
        "---------------------------",
        "",
        "local_time 5.000e-03s (Time spent running thunks)",
        "graphc compile time: 2.500e+00s",
        "    Optimization time: 1.000e+00s",
        "    Linker time: 1.400e+00s",
        "graphc fct call 8.000e-03s",
        "   graphc Op time 5.000e-03s 62.5%(of fct call)",
        "   graphc function overhead in ProfileMode 3.000e-03s 37.5%(of fct call)",
        "10 graphc fct call, 8.000e-04s per call",
        "",
        "graphc fct summary:",
    ]
    assert "   100.0% 8.000e-03s 8.00e-04s 10 f" in lines
    i = lines.index("Single Op-wise summary:")
    assert lines[i + 2 : i + 6] == [
        "    80.0%   80.0%  4.000e-03s  4.000e-03s  1.333e-04s *    30  2  3 "
        "graphc.tensor.elemwise.Elemwise",
        "    20.0%  100.0%  1.000e-03s  5.000e-03s  1.000e-04s      10  1  1 "
        "graphc.tensor.blas.Dot",
        "   ... (remaining 0 single Op account for 0.00%(0.00e+00s) of the runtime)",
        "(*) Op is running a c implementation",
    ]
    i = lines.index("Apply-wise summary:")
    assert lines[i + 1].endswith("<nb_call> <Apply position> <Apply Op name>")
    assert "%%" not in lines[i + 1]
    assert lines[i + 2 : i + 6] == [
        "    60.0%   60.0%  3.000e-03s  3.000e-03s  3.000e-04s *    10   0 add(x, y)",
        "    20.0%   80.0%  1.000e-03s  4.000e-03s  1.000e-04s      10   1 dot(x, W)",
        "   ... (remaining 2 Apply instances account for 20.00%(1.00e-03s) of the runtime)",
        "(*) Op is running a c implementation",
    ]


def _py_mode() -> FunctionProfile:
    """The same graph scheduled differently (mul before add) and run in Python."""
    f = FunctionProfile(
        "f",
        calls=10,
        call_ns=20_000_000,
        compile=four_node_function().compile,
        nodes=[
            node(0, "mul(add.0, 2.0)", "mul", impl="Py", calls=10, ns_total=2_000_000),
            node(1, "add(x, y)", "add", impl="Py", calls=10, ns_total=9_000_000),
            node(
                2,
                "dot(x, W)",
                "dot",
                "graphc.tensor.blas.Dot",
                impl="Py",
                calls=10,
                ns_total=1_000_000,
            ),
            node(3, "add(mul.0, dot.0)", "add", impl="Py", calls=10, ns_total=4_000_000),
        ],
    )
    f.compile.total_ns = 500_000_000
    return f


def test_match_nodes_position_then_op_name():
    a = four_node_function().nodes
    b = _py_mode().nodes
    pairs = [(x.position if x else None, y.position if y else None) for x, y in match_nodes(a, b)]
    # add@3 matches exactly; add@0 falls back to b's first free add (1), mul@2 -> mul@0
    assert sorted(pairs) == [(0, 1), (1, 2), (2, 0), (3, 3)]


def test_match_nodes_unmatched_sides():
    # other Op classes: nothing says the two compute the same thing
    a = [node(0, "a", "a", "pkg.A")]
    b = [node(0, "b", "b", "pkg.B")]
    assert [(x and x.op_name, y and y.op_name) for x, y in match_nodes(a, b)] == [
        ("a", None),
        (None, "b"),
    ]


def test_print_diff_summary():
    out = io.StringIO()
    print_diff_summary(ProfileStats([four_node_function()]), ProfileStats([_py_mode()]), file=out)
    lines = out.getvalue().splitlines()
    assert "local_time (a - b): -1.100e-02s (a 5.000e-03s, b 1.600e-02s)" in lines
    assert "compile time (a - b): +2.000e+00s (a 2.500e+00s, b 5.000e-01s)" in lines
    i = lines.index("Op-wise summary difference:")
    assert lines[i + 2 : i + 6] == [
        "   3.500e-03s 1.300e-02s -9.500e-03s    20    20 add",
        "   5.000e-04s 2.000e-03s -1.500e-03s    10    10 mul",
        "   1.000e-03s 1.000e-03s +0.000e+00s    10    10 dot",
        "   ... (remaining 0 rows account for 0.00e+00s of absolute difference)",
    ]
    i = lines.index("Apply-wise summary difference:")
    assert lines[i + 1].endswith("<position a> <position b> <Apply name>")
    assert lines[i + 2 : i + 6] == [
        "   3.000e-03s 9.000e-03s -6.000e-03s    10    10   0   1 add(x, y)",
        "   5.000e-04s 4.000e-03s -3.500e-03s    10    10   3   3 add(mul.0, dot.0)",
        "   5.000e-04s 2.000e-03s -1.500e-03s    10    10   2   0 mul(add.0, 2.0)",
        "   1.000e-03s 1.000e-03s +0.000e+00s    10    10   1   2 dot(x, W)",
    ]
    i = lines.index("Single Op-wise summary difference:")
    assert lines[i + 2] == (
        "   4.000e-03s 1.500e-02s -1.100e-02s    30    30 graphc.tensor.elemwise.Elemwise"
    )


def test_print_summary_parses_as_theano_0_8_2_printed_it():
    """Headers and rows in the layout of Theano 0.8.2's ProfileMode.print_summary (reference
    output, section 13), read by a parser of that layout; the numbers are the hand counts
    of profile_factory (Elemwise 4e6 ns in 30 calls, 80%; Dot 1e6 ns in 10 calls)."""
    import re

    lines = _summary(ProfileStats([four_node_function()]))
    num = r"[0-9.]+(?:e[-+][0-9]+)?"
    single = re.compile(rf"^\s+({num})%\s+({num})%\s+({num})s\s+({num})s\s+({num})s\s+(\*?)\s+"
                        r"(\d+)\s+(\d+)\s+(\d+)\s+(\S.*)$")  # fmt: skip
    i = lines.index("Single Op-wise summary:")
    assert lines[i + 1] == (
        "<% of local_time spent on this kind of Op> <cumulative %> <self seconds> "
        "<cumulative seconds> <time per call> [*] <nb_call> <nb_op> <nb_apply> <Op name>"
    )
    rows = [single.match(line).groups() for line in lines[i + 2 : i + 4]]
    assert [(float(r[2]), int(r[6]), int(r[8]), r[9]) for r in rows] == [
        (4e-3, 30, 3, "graphc.tensor.elemwise.Elemwise"),
        (1e-3, 10, 1, "graphc.tensor.blas.Dot"),
    ]
    assert [r[5] for r in rows] == ["*", ""] and float(rows[0][0]) == 80.0
    i = lines.index("Op-wise summary:")
    assert lines[i + 1].endswith("<time per call> [*]  <nb_call> <nb apply> <Op name>")
    tips = lines.index("Here are tips to potentially make your code run faster")
    assert lines[tips + 1].startswith("Test them first") and lines[tips + 2].startswith("  - ")
