"""The HTML report's data, escaping, command line and at-exit flag (the page itself is
driven in a browser by tests/test_profile_html_browser.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from html_report_cases import real_profile
from profile_factory import four_node_function, node

from graphc.profile import FunctionProfile, ProfileStats
from graphc.profile.cli import main
from graphc.profile.render.html import compare_model, to_html
from graphc.profile.render.html_model import page_model
from graphc.profile.summaries.compare import compare
from graphc.profile.summaries.memory import live_bytes, peak_with_gc

ROOT = Path(__file__).resolve().parents[1]


def _embedded(page: str) -> dict:
    m = re.search(r'<script id="profile-data" type="application/json">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def _chain() -> FunctionProfile:
    """x -> a (1000 B) -> b (2000 B, 100 B scratch) -> out (500 B, reads a and b)."""
    return FunctionProfile(
        name="chain",
        calls=1,
        memory_recorded=True,
        nodes=[
            node(0, "a(x)", "a", input_slots=[0], output_slots=[1], out_bytes_max=[1000]),
            node(
                1,
                "b(a)",
                "b",
                input_slots=[1],
                output_slots=[2],
                out_bytes_max=[2000],
                workspace_bytes=100,
            ),  # fmt: skip
            node(2, "c(a, b)", "c", input_slots=[1, 2], output_slots=[3], out_bytes_max=[500]),
        ],
        output_slots=[3],
    )


def test_live_bytes_by_hand():
    # a alone; a, b and b's scratch; a, b and the output (a and b are freed after c)
    assert live_bytes(_chain()) == [1000, 1000 + 2000 + 100, 1000 + 2000 + 500]


def test_live_bytes_peak_is_the_memory_sections_peak():
    stats = real_profile(steps=3)
    for fp in [_chain(), four_node_function(), *stats.functions]:
        assert max(live_bytes(fp), default=0) == peak_with_gc(fp)


def test_tables_hold_every_row_with_the_hand_counted_shares():
    model = page_model(ProfileStats([four_node_function()]))
    apply = model["tables"]["apply"]
    names = [c["key"] for c in apply["columns"]]
    rows = [dict(zip(names, r)) for r in apply["rows"]]
    # docstring of four_node_function: add 60%, dot 20%, mul 10%, add 10% of 5e6 ns
    assert [(r["name"], round(r["pct"], 6)) for r in rows] == [
        ("add(x, y)", 60.0), ("dot(x, W)", 20.0), ("mul(add.0, 2.0)", 10.0),
        ("add(mul.0, dot.0)", 10.0),
    ]  # fmt: skip
    assert apply["keys"] == ["f0_n0", "f0_n1", "f0_n2", "f0_n3"]
    ops = dict((r[-1], r[0]) for r in model["tables"]["ops"]["rows"])
    assert ops == pytest.approx({"add": 70.0, "dot": 20.0, "mul": 10.0})
    classes = {r[-1]: r[0] for r in model["tables"]["class"]["rows"]}
    assert classes == pytest.approx({"graphc.tensor.elemwise.Elemwise": 80.0,
                                     "graphc.tensor.blas.Dot": 20.0})  # fmt: skip


def test_names_cannot_break_out_of_the_page():
    fp = four_node_function()
    evil = "</script><script>alert(1)</script><!--"
    fp.nodes[0].apply_name = evil
    page = to_html(ProfileStats([fp]))
    assert page.count("</script>") == 2  # the data's and the code's own
    assert _embedded(page)["functions"][0]["nodes"][0]["name"] == evil


def test_comparison_model_orders_worst_first():
    base, new = four_node_function(), four_node_function()
    for n in base.nodes + new.nodes:
        n.ns_samples = [100_000 + 10 * i for i in range(20)]
    new.nodes[1].ns_samples = [50_000 + 10 * i for i in range(20)]  # dot 2x faster
    new.nodes[2].ns_samples = [400_000 + 10 * i for i in range(20)]  # mul 4x slower
    doc = compare_model(compare([base], [new]))
    verdicts = [e["verdict"] for e in doc["entries"]]
    assert verdicts.index("faster") > max(i for i, v in enumerate(verdicts) if v == "slower")
    assert "mul" in doc["entries"][0]["label"]  # the Op or its one node, both 4x
    assert doc["entries"][0]["ratio"] == pytest.approx(4.0, rel=0.01)


def test_cli_html_one_two_and_a_comparison_json(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    ProfileStats([four_node_function()]).save(a)
    slow = four_node_function()
    slow.nodes[0].ns_samples = [s * 3 for s in slow.nodes[0].ns_samples]
    ProfileStats([slow]).save(b)
    assert main(["html", str(a), "-o", str(tmp_path / "one.html")]) == 0
    one = _embedded((tmp_path / "one.html").read_text())
    assert one["compare"] is None and one["functions"][0]["name"] == "f"
    assert main(["html", str(a), str(b), "-o", str(tmp_path / "two.html")]) == 0
    two = _embedded((tmp_path / "two.html").read_text())
    assert two["compare"]["entries"] and two["functions"]
    main(["diff", str(a), str(b), "--json", str(tmp_path / "d.json"), "--min-matched", "0"])
    assert main(["html", str(tmp_path / "d.json"), "-o", str(tmp_path / "d.html")]) == 0
    only = _embedded((tmp_path / "d.html").read_text())
    assert only["functions"] == [] and len(only["compare"]["entries"]) == len(
        json.loads((tmp_path / "d.json").read_text())["entries"]
    )
    assert main(["html", str(a), str(b), str(a), "-o", str(tmp_path / "x.html")]) == 2
    assert main(["html", str(tmp_path / "nope.json"), "-o", str(tmp_path / "x.html")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_profile_html_flag_writes_the_report_at_exit(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import graphc, graphc.tensor as T
        x = T.dvector("x")
        f = graphc.function([x], T.exp(x) * 2, name="job_fn")
        for _ in range(5):
            f(np.ones(100))
    """))  # fmt: skip
    out = tmp_path / "out.html"
    env = dict(os.environ, GRAPHC_FLAGS=f"profile=True,profile_html={out}")
    res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert f"wrote the HTML profile report {out}" in res.stderr
    doc = _embedded(out.read_text())
    assert [f["name"] for f in doc["functions"]] == ["job_fn"]
    assert doc["functions"][0]["calls"] == 5  # every call, the first too, as in the text
    assert doc["first_calls_left_out"] == 0
    assert any("First call: " in line for line in doc["global"])  # also reported apart


def test_example_report_is_small_and_self_contained(tmp_path):
    stats = real_profile()
    page = to_html(stats)
    assert len(page.encode()) < 1_000_000
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert _embedded(page)["svg"].startswith("<svg")  # the Graphviz graph is embedded
