"""The export formats as one table: every format renders through the same interface, the
CSV and pstats exports agree with the JSON one, and registering a renderer is all
``graphc-prof`` needs to offer a new format."""

from __future__ import annotations

import ast
import csv
import io
import pathlib
import pstats
import re

import pytest
from html_report_cases import real_profile

from graphc.profile import ProfileStats
from graphc.profile.cli import _run_options, _write_outputs, main
from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.data.steady import steady_state
from graphc.profile.render.base import Renderer
from graphc.profile.render.formats import RENDERERS, register, renderer

ROOT = pathlib.Path(__file__).resolve().parents[1] / "graphc"
ALL = SummaryOptions(n_apply=5, n_ops=3, all_calls=True, width=100)


@pytest.fixture(scope="module")
def stats() -> ProfileStats:
    return real_profile(steps=6)


@pytest.fixture(scope="module")
def saved(stats, tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("formats") / "p.json"
    stats.save(path)
    return path


def _nodes(fps: list[FunctionProfile]) -> dict[tuple[str, int], NodeRecord]:
    """Every node of ``fps``, loop bodies' included, by (function name, position)."""
    out: dict[tuple[str, int], NodeRecord] = {}
    for fp in fps:
        for n in fp.nodes:
            out[fp.name, n.position] = n
            if n.inner is not None:
                out.update(_nodes([n.inner]))
    return out


def _json_nodes(stats: ProfileStats, all_calls: bool) -> dict[tuple[str, int], NodeRecord]:
    back = ProfileStats.from_json(stats.to_json()).functions
    return _nodes(back if all_calls else [steady_state(fp) for fp in back])


def test_every_format_renders_through_the_interface(stats):
    assert {"text", "legacy", "json", "trace", "speedscope", "dot", "svg", "png", "pdf",
            "html", "pprof", "csv", "pstats"} <= set(RENDERERS)  # fmt: skip
    for name, r in RENDERERS.items():
        assert isinstance(r, Renderer) and r.name == name, name
        assert r.extension.startswith(".") and r.description, name
        doc = r.render(stats, ALL)
        assert isinstance(doc, bytes if r.output_is_binary else str), name
        assert len(doc) > 100, name


def _untimed(summary: str) -> str:
    """``summary`` without the time the memory section's order search took."""
    return re.sub(r"took [0-9.]+s", "took ?s", summary)


def test_summary_methods_and_the_registry_give_the_same_text(stats, capsys):
    stats.summary(n_apply_to_print=5, n_ops_to_print=3, all_calls=True, width=100)
    printed = capsys.readouterr().out
    assert "took ?s" in _untimed(printed)  # the one part that differs from run to run
    assert _untimed(printed) == _untimed(RENDERERS["text"].render(stats, ALL))


def test_csv_rows_are_the_json_nodes(stats):
    for all_calls in (True, False):
        options = SummaryOptions(n_apply=5, n_ops=3, all_calls=all_calls)
        rows = list(csv.DictReader(io.StringIO(RENDERERS["csv"].render(stats, options))))
        nodes = _json_nodes(stats, all_calls)
        assert len(rows) == len(nodes) and len(nodes) > 10
        by_function: dict[str, float] = {}
        for row in rows:
            n = nodes[row["function"], int(row["node"])]
            assert (row["op"], row["class"]) == (n.op_name, n.op_class)
            assert int(row["calls"]) == n.calls
            assert round(float(row["total_s"]) * 1e9) == n.ns_total
            if n.calls:
                assert float(row["per_call_s"]) == pytest.approx(n.ns_total / n.calls / 1e9)
            by_function[row["function"]] = by_function.get(row["function"], 0.0) + float(
                row["pct_of_function"]
            )
            assert row["source"] == (n.origins[0].split(" <- ")[0] if n.origins else "")
        for name, total in by_function.items():
            assert total == pytest.approx(100.0, abs=0.01) or total == 0.0, name


def test_pstats_loads_the_node_calls_and_times(stats, tmp_path):
    path = tmp_path / "p.prof"
    stats.export(path, "pstats", ALL)
    loaded = pstats.Stats(str(path))
    nodes = _json_nodes(stats, all_calls=True)
    fps = ProfileStats.from_json(stats.to_json()).functions
    assert len(loaded.stats) == len(nodes) + len(fps)
    functions = {key[2]: v for key, v in loaded.stats.items() if key[0] == "<graphc>"}
    for fp in fps:
        cc, nc, tt, ct, callers = functions[fp.name]
        assert nc == fp.calls and ct == pytest.approx(fp.vm_ns / 1e9) and not callers
    seen = 0
    for (file, _, name), (_, nc, tt, ct, callers) in loaded.stats.items():
        if file == "<graphc>" and name in functions:
            continue
        matches = [n for n in nodes.values() if name.startswith(n.apply_name)
                   and nc == n.calls and ct == pytest.approx(n.ns_total / 1e9)]  # fmt: skip
        assert matches, name
        assert tt <= ct + 1e-12 and len(callers) == 1
        seen += 1
    assert seen == len(nodes)
    assert loaded.total_calls == sum(n.calls for n in nodes.values()) + sum(fp.calls for fp in fps)
    out = io.StringIO()
    pstats.Stats(str(path), stream=out).sort_stats("tottime").print_stats(5)
    assert "function calls" in out.getvalue()


def test_export_command_writes_each_format(saved, tmp_path, capsys):
    for name in ("csv", "pstats", "json", "legacy"):
        out = tmp_path / f"p{RENDERERS[name].extension}"
        assert main(["export", str(saved), "--format", name, "-o", str(out)]) == 0
        assert out.stat().st_size > 100
    assert main(["export", str(saved), "--format", "csv", "--all-calls"]) == 0
    assert capsys.readouterr().out.startswith("function,node,op,class,calls,total_s")
    assert main(["show", str(saved), "--n-apply", "3"]) == 0
    shown = capsys.readouterr().out
    assert main(["export", str(saved), "--format", "text", "--n-apply", "3"]) == 0
    assert _untimed(capsys.readouterr().out) == _untimed(shown)


class Upper(Renderer):
    """A format only this test knows: the text summary in capitals."""

    name = "upper"
    extension = ".up"
    description = "the summary, shouted"
    command = "shout"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        return RENDERERS["text"].render(stats, options).upper()


def test_registering_a_renderer_is_all_the_command_line_needs(saved, stats, tmp_path,
                                                             monkeypatch, capsys):  # fmt: skip
    monkeypatch.setitem(RENDERERS, "upper", Upper())
    assert _run_options()["--upper"] is True
    _write_outputs(stats, {"--upper": str(tmp_path / "run.up")})
    assert "FUNCTION PROFILING" in (tmp_path / "run.up").read_text()
    assert main(["export", str(saved), "--format", "upper", "-o", str(tmp_path / "e.up")]) == 0
    assert main(["shout", str(saved), str(tmp_path / "c.up")]) == 0
    assert "FUNCTION PROFILING" in (tmp_path / "c.up").read_text()
    assert main(["run", "--help"]) == 0
    assert "--upper PATH" in capsys.readouterr().out


def test_a_format_name_is_registered_once():
    with pytest.raises(ValueError, match="already registered"):
        register(RENDERERS["csv"])
    with pytest.raises(ValueError, match="the formats are"):
        renderer("nope")


def _importers(module: str) -> set[str]:
    out = set()
    for path in ROOT.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.ImportFrom) and n.module == module:
                out.add(str(path.relative_to(ROOT)))
    return out


def test_the_new_formats_follow_the_recipe():
    """A format is its renderer module plus its line in formats.py: nothing else in graphc
    refers to the CSV or pstats modules."""
    for module in ("csv_table", "pstats_file"):
        assert _importers(f"graphc.profile.render.{module}") == {"profile/render/formats.py"}


def test_run_options_still_include_the_old_spellings():
    for option in ("--json", "--trace", "--speedscope", "--svg", "--dot", "--html", "--pprof"):
        assert option in _run_options()
