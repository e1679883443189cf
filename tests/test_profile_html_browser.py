"""The HTML profile report in a real browser (headless Chromium, installed by .ci/run):
it loads with no console error, sorts a table, filters it, expands nested loops, follows a
node from the graph to its Apply row, draws the comparison slower first, and its screenshot
is not blank. GRAPHC_UPDATE_SCREENSHOT=1 also writes the README's screenshot."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from headless_browser import Browser, png_pixels
from html_report_cases import real_profile
from profile_factory import four_node_function

from graphc.profile import ProfileStats
from graphc.profile.render.html import write_html
from graphc.profile.summaries.compare import Options, compare
from graphc.profile.summaries.roofline import node_bytes

SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "profile-report.png"


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    stats = real_profile()
    path = tmp_path_factory.mktemp("html") / "report.html"
    stats.to_html(path)
    return stats, path


def _keys(browser: Browser, table: str) -> list[str]:
    return browser.js(
        f"[...document.querySelectorAll('#{table} tbody tr')].map(r => r.dataset.key)"
    )


def _nodes(stats: ProfileStats) -> dict[str, object]:
    """The report's Apply rows: every call counted, the first too (the default)."""
    fps = stats.functions
    return {f"f{k}_n{n.position}": n for k, f in enumerate(fps) for n in f.nodes if n.calls}


def test_report_loads_sorts_filters(browser, report):
    stats, path = report
    browser.goto(path.as_uri())
    assert browser.js("document.body.dataset.ready") == "1"
    nodes = _nodes(stats)
    assert sorted(_keys(browser, "tbl-apply")) == sorted(nodes)
    browser.click("#tbl-apply th[data-col=ns]")  # first click: largest first
    browser.click("#tbl-apply th[data-col=ns]")  # second: smallest first
    shown = [nodes[k].ns_total for k in _keys(browser, "tbl-apply")]
    assert shown == sorted(n.ns_total for n in nodes.values())
    assert browser.js("document.querySelector('#tbl-apply th[data-col=ns]').className") == "asc"
    browser.click("#sec-apply input.filter")
    browser.page("Input.insertText", text="elemwise")
    keys = _keys(browser, "tbl-apply")
    expected = {k for k, n in nodes.items() if "elemwise" in n.apply_name.lower()}
    assert expected and set(keys) == expected
    assert browser.console_errors() == []


def test_nested_loops_expand(browser, report):
    stats, path = report
    browser.goto(path.as_uri())
    outer = next(n for f in stats.functions for n in f.nodes if n.inner is not None)
    inner = next(n for n in outer.inner.nodes if n.inner is not None)
    assert browser.js("document.querySelector('details.loop').open") is False
    browser.click("details.loop > summary")
    assert browser.js("document.querySelector('details.loop').open") is True
    browser.click("details.loop details.loop > summary")
    names = browser.js(
        "[...document.querySelectorAll('details.loop details.loop table tbody tr td:first-child')]"
        ".filter(td => td.offsetParent !== null).map(td => td.textContent)"
    )
    assert {n.apply_name for n in inner.inner.nodes} <= set(names)
    assert browser.console_errors() == []


def test_graph_node_leads_to_its_row(browser, report):
    stats, path = report
    browser.goto(path.as_uri())
    nodes = _nodes(stats)
    key, hottest = max(nodes.items(), key=lambda kv: kv[1].ns_total)
    browser.click(f'#graph-box g.node[data-key="{key}"]')
    assert browser.js("document.querySelector('tr.hit').id") == f"tbl-apply-{key}"
    in_view = browser.js(
        "(() => { const r = document.querySelector('tr.hit').getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight; })()"
    )
    assert in_view
    detail = browser.js("document.getElementById('node-detail').textContent")
    assert hottest.apply_name in detail
    for v in hottest.inputs + hottest.outputs:
        assert f"{v.dtype} {tuple(v.shape)}" in detail
    for origin in hottest.origins:
        assert Path(origin.rsplit(":", 1)[0]).name in detail
    browser.js("document.getElementById('graph').scrollIntoView()")
    png = browser.screenshot()
    width, height, ch, rows = png_pixels(png)
    pixels = Counter(row[i : i + 3] for row in rows[::4] for i in range(0, width * ch, ch * 4))
    assert len(pixels) > 50  # text, the coloured graph, the table
    assert pixels.most_common(1)[0][1] < 0.95 * sum(pixels.values())
    if os.environ.get("GRAPHC_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(png)
    assert browser.console_errors() == []


def test_roofline_dot_leads_to_its_row(browser, report):
    stats, path = report
    browser.goto(path.as_uri())
    nodes = _nodes(stats)
    drawn = browser.js("[...document.querySelectorAll('#roofline-chart circle.dot')]"
                       ".map(c => c.dataset.key)")  # fmt: skip
    # one dot per node that ran with a flop count (the products and element-wise nodes),
    # a time and known shapes
    placed = [k for k, n in nodes.items() if n.flops_per_call and n.ns_total and node_bytes(n)]
    assert placed and sorted(drawn) == sorted(placed)
    # the last dot drawn is on top: a click at its centre reaches it even where dots overlap
    browser.click(f'#roofline-chart circle.dot[data-key="{drawn[-1]}"]')
    assert browser.js("document.querySelector('tr.hit').id") == f"tbl-apply-{drawn[-1]}"
    assert browser.console_errors() == []


def test_memory_chart_marks_the_peak(browser, report):
    stats, path = report
    browser.goto(path.as_uri())
    text = browser.js("[...document.querySelectorAll('#memory text')].map(t => t.textContent)")
    assert len(text) == len([f for f in stats.functions if f.memory_recorded])
    assert browser.js("document.querySelectorAll('#timeline rect').length") > 0


def test_comparison_lists_slower_first(browser, tmp_path):
    base, new = four_node_function(), four_node_function()
    for n in base.nodes + new.nodes:
        n.ns_samples = [100_000 + 10 * i for i in range(20)]
    new.nodes[3].ns_samples = [300_000 + 10 * i for i in range(20)]  # 3x slower
    report = compare([base], [new], Options(threshold=1.2))
    path = tmp_path / "cmp.html"
    write_html(ProfileStats([new]), path, report)
    browser.goto(path.as_uri())
    rows = browser.js(
        "[...document.querySelectorAll('#tbl-compare tbody tr')]"
        ".map(r => [...r.children].map(td => td.textContent))"
    )
    # node 3 takes 3x its time, so its Op "add" (with node 0) 2x and the function 1.5x:
    # each interval lies wholly above the gate's 1.2; the largest ratio comes first
    n_slow = 3
    assert len(report.slower) == n_slow
    assert [r[0] for r in rows[:n_slow]] == ["slower"] * n_slow
    assert "slower" not in [r[0] for r in rows[n_slow:]]
    assert [r[1] for r in rows[:n_slow]] == ["apply", "op", "function"]
    assert new.nodes[3].apply_name in rows[0][-1]
    assert len(rows) == len(report.entries)
    assert browser.console_errors() == []
