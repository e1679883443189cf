"""The text report fits the terminal: COLUMNS or the terminal's width (else 100), names cut
in the middle, the top ``profiling__n_apply`` Apply rows by default (one function's report
fits about one screen), the Optimizer section only when asked for."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from profile_factory import four_node_function, node

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, SummaryOptions
from graphc.profile.render.fmt import fit_lines, middle_ellipsis, report_width, table
from graphc.profile.render.text import render_summary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONG = "Elemwise{Composite{" + "((i0 * neg(softplus(neg(i1)))) - " * 6 + "i2)},no_inplace}"


def _wide_function(n_nodes: int = 30):
    fp = four_node_function()
    fp.nodes = [
        node(i, f"{LONG}(x{i})", LONG, calls=10, ns_total=1000 * (i + 1), ns_min=90)
        for i in range(n_nodes)
    ]
    for n in fp.nodes:
        n.origins = [f"/some/long/path/to/user_script_{n.position}.py:{n.position + 1}"]
    return fp


def test_report_width_from_columns_then_terminal_then_100(monkeypatch):
    monkeypatch.setenv("COLUMNS", "123")
    assert report_width() == 123
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback: os.terminal_size(fallback))
    assert report_width() == 100


def test_middle_ellipsis_keeps_both_ends():
    assert middle_ellipsis("abcdefghij", 10) == "abcdefghij"
    cut = middle_ellipsis("Elemwise{add,no_inplace}(x, y)  [script.py:12]", 24)
    assert len(cut) == 24 and cut.startswith("Elemwise{a") and cut.endswith("ipt.py:12]")
    assert "..." in cut


def test_table_cuts_only_the_name_column():
    rows = [["1.0%", "x" * 80]]
    head, row = table(["<a>", "<name>"], rows, width=40)
    assert len(row) <= 40 and row.startswith("1.0%") and row.endswith("x")


def test_fit_lines_wraps_prose_and_rows_without_cutting_numbers():
    prose = "  - " + "word " * 40
    row = "   12.0%   " + "z" * 120
    total = "   ... (remaining 2 Apply account for    16B/4800000000B (0.00%) of the Apply"
    out = fit_lines([prose, row, total, "short"], 60)
    assert all(len(line) <= 60 for line in out)
    assert out[-1] == "short"
    assert " ".join(w for line in out[:-5] for w in line.split()) == prose.strip()
    assert out[-5:-3] == ["   12.0%", "       " + "z" * 25 + "..." + "z" * 25]
    assert "16B/4800000000B" in out[-3] + out[-2]  # the numbers whole, wherever they wrap


def test_cut_name_keeps_the_last_dotted_part_whole():
    from graphc.profile.render.fmt import cut_name

    name = "graphc.tensor.elemwise.Elemwise"
    assert cut_name(name, 40) == name
    assert cut_name(name, 26) == "graphc...elemwise.Elemwise"
    assert cut_name(name, 20) == "graphc...Elemwise"
    assert cut_name(name, 12) == "...Elemwise"
    assert cut_name("Elemwise{add,no_inplace}(x, y)", 20) == middle_ellipsis(
        "Elemwise{add,no_inplace}(x, y)", 20)  # fmt: skip


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_no_line_wider_than_the_width(width):
    two = ProfileStats([_wide_function(), _wide_function()], "two")
    text = render_summary(two, SummaryOptions.from_config(width=width))
    assert max(len(line) for line in text.splitlines()) <= width
    assert "Apply" in text and "Source lines" in text


def _apply_section(text: str) -> str:
    return text.split("\nApply\n", 1)[1].split("\n\n", 1)[0]


def test_top_apply_rows_by_default_from_the_flag_and_all_on_request(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    n = graphc.config.profiling__n_apply
    assert 0 < n < 30
    out = io.StringIO()
    ProfileStats([_wide_function()]).summary(file=out)
    apply = _apply_section(out.getvalue())
    assert f"remaining {30 - n} Apply instances" in apply
    assert "from: user_script_29.py:30" in apply  # slowest node shown with its source line
    with graphc.config.change_flags(profiling__n_apply=n + 2, profiling__n_ops=1):
        out = io.StringIO()
        ProfileStats([_wide_function()]).summary(file=out)
    assert f"remaining {30 - n - 2} Apply instances" in _apply_section(out.getvalue())
    assert "remaining 29 source lines" in out.getvalue()
    out = io.StringIO()
    ProfileStats([_wide_function()]).summary(file=out, n_apply_to_print=1000)
    assert "remaining 0 Apply instances" in out.getvalue()


def test_cli_show_full_and_width(tmp_path):
    path = tmp_path / "p.json"
    ProfileStats([_wide_function()]).save(path)
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "graphc.profile", "show", str(path)]
    short = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    full = subprocess.run(cmd + ["--full", "--width", "80"], capture_output=True, text=True,
                          env=env, check=True).stdout  # fmt: skip
    assert f"remaining {30 - graphc.config.profiling__n_apply} Apply instances" in short
    assert "remaining 0 Apply instances" in full
    assert "remaining 0 source lines" in full
    assert max(len(line) for line in full.splitlines()) <= 80


# Theano's sections, in Theano's order (Memory and Optimizer only when recorded)
TIPS = "Here are tips to potentially make your code run faster"
SECTIONS = ["Function profiling", "Class", "Ops", "Apply", "Source lines", TIPS]
SCREEN = 72  # lines: the sections' fixed frame (headers, notes, global section) is ~45
# Tips that appear only when the machine disturbed the measurement (a slow first call, BLAS
# times spread by other load): at most one of each, not counted in the screen.
TIMING_TIPS = (" the first call of ", "BLAS threads may be competing",
               "of this machine's bandwidth", "of both bandwidth and peak")  # fmt: skip


def _tips(block: list[str]) -> list[list[str]]:
    """The lines of each tip of ``block`` (its ``  - `` line and the wrapped ones after it)."""
    tips: list[list[str]] = []
    for line in block[block.index(TIPS) :]:
        if line.startswith("  - "):
            tips.append([line])
        elif line.startswith("    ") and tips:
            tips[-1].append(line)
    return tips


def _text(tip: list[str]) -> str:
    return " " + " ".join(" ".join(tip).split()) + " "


def _screen_lines(block: list[str]) -> int:
    """Lines of ``block`` without the lines of its timing tips."""
    timing = [t for t in _tips(block) if any(m in _text(t) for m in TIMING_TIPS)]
    return len(block) - sum(len(t) for t in timing)


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line == "Function profiling":
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return blocks


def _skeleton(line: str) -> str:
    """A report line with its numbers replaced (they vary from run to run, and so do the
    column widths)."""
    return re.sub(r" +", " ", re.sub(r"\d+(\.\d+)?(e[-+]\d+)?", "#", line)).strip()


def _readme_excerpt_matches(text: str) -> None:
    """The README's excerpt of this example's output is what the code prints, numbers aside:
    every line of it (but the ``...`` that mark cuts) is a line of ``text``."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    block = readme.split("```text\nFunction profiling\n", 1)[1].split("\n```", 1)[0]
    printed = {_skeleton(line) for line in text.splitlines()}
    lines = [line for line in block.splitlines() if line != "..."]
    assert len(lines) > 20
    for line in lines:
        assert _skeleton(line) in printed, line


# Runs a script with the profiles' times replaced, just before they are printed at exit, by
# a fixed cost per call from each node's flops (300 ns + 1 ns per 2 flops) and a fixed
# machine: which rows and tips a loaded machine's timings select would otherwise change the
# report's length from run to run.
FIXED_TIMES = """
import runpy, sys
import graphc.profile.registry as registry
from graphc.profile.data.model import MachineLimits

def fix(fp):
    for n in fp.nodes:
        c = 300 + round((n.flops_per_call or 0) / 2)
        n.ns_total, n.ns_min, n.first_ns = c * n.calls, c, c * n.first_calls
        n.ns_samples, n.n_below_resolution = [c] * min(n.calls, 32), 0
        if n.sampled_flops and n.flops_per_call:
            n.sampled_ns = c * round(n.sampled_flops / n.flops_per_call)
    nodes = sum(n.ns_total for n in fp.nodes)
    fp.vm_ns, fp.call_ns = nodes + 500 * fp.calls, nodes + 1000 * fp.calls
    fp.first_vm_ns, fp.first_call_ns = 500 * fp.first_calls, 1000 * fp.first_calls
    fp.first_vm_ns += sum(n.first_ns for n in fp.nodes)
    fp.first_call_ns += sum(n.first_ns for n in fp.nodes)
    fp.machine = MachineLimits(10.0, 20.0, 1 << 20, 256, "fixed")

def print_fixed(stats_list, *args, **kwargs):
    for stats in stats_list:
        stats.refresh()
        for fp in stats.functions:
            fp.refresh = None
            fix(fp)
    printer(stats_list, *args, **kwargs)

printer, registry.print_at_exit = registry.print_at_exit, print_fixed
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_example_fits_one_screen_per_function_at_100_columns():
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=ROOT)
    env.pop("GRAPHC_FLAGS", None)
    script = os.path.join(ROOT, "examples", "logistic_regression.py")
    cmd = [sys.executable, "-c", FIXED_TIMES, script]
    text = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True,
                          cwd=ROOT).stdout  # fmt: skip
    blocks = _blocks(text)
    assert [b[2] for b in blocks] == [
        "  Message: train",
        "  Message: predict",
        "  Message: Sum of all(2) printed profiles at exit",
    ]
    for block in blocks:
        assert _screen_lines(block) <= SCREEN, (len(block), "\n".join(block))
        tips = [_text(t) for t in _tips(block)]
        assert all(sum(m in t for t in tips) <= 1 for m in TIMING_TIPS), tips
        assert max(len(line) for line in block) <= 100
        at = [block.index(title) for title in SECTIONS]
        assert at == sorted(at)
        apply = block[at[3] : at[4]]
        rows = [line for line in apply if line[:9].strip().endswith("%")]
        assert 0 < len(rows) <= graphc.config.profiling__n_apply
        assert sum("from: logistic_regression.py:" in line for line in apply) == len(rows)
    _readme_excerpt_matches(text)
    # the train function has 17 nodes: the tables are cut, and --full-sized runs are not
    assert "remaining 12 Apply instances" in "\n".join(blocks[0])
    env["GRAPHC_FLAGS"] = "profiling__n_apply=1000,profiling__n_ops=1000"
    full = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True,
                          cwd=ROOT).stdout  # fmt: skip
    train = "\n".join(_blocks(full)[0])
    assert "remaining 0 Apply instances" in train and "remaining 0 Ops" in train
    assert len(_blocks(full)[0]) > 1.5 * SCREEN  # every row of the 17 nodes: well past a screen


def test_optimizer_section_only_when_profile_optimizer_is_set():
    x = T.dvector("x")
    y = T.exp(x) * 2 + 1
    for flag in (False, True):
        with graphc.config.change_flags(profile_optimizer=flag):
            f = graphc.function([x], y, profile=True, name=f"opt{flag}")
        f(np.ones(3))
        out = io.StringIO()
        f.profile.summary(file=out)
        assert ("Optimizer Profile" in out.getvalue()) is flag
