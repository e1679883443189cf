"""Chrome trace export, the trace record in the JSON, and profiles merged across processes."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, load
from graphc.profile.data.serialize import SCHEMA_VERSION
from graphc.profile.render.speedscope import speedscope
from graphc.profile.render.trace import check_nesting, chrome_trace, iter_node_events

ROOT = Path(__file__).resolve().parents[1]


def _traced(capacity=10_000, calls=5, name="traced"):
    x, y, z = T.vectors("xyz")
    with graphc.config.change_flags(profile_trace=True, profiling__trace_capacity=capacity):
        f = graphc.function([x, y, z], [(x + y + z) * 2, T.exp(x)], profile=True, name=name)
    v = np.random.default_rng(0).random(1000)
    for _ in range(calls):
        f(v, v, v)
    return f


def test_trace_parses_and_nests(tmp_path):
    f = _traced()
    path = tmp_path / "t.json"
    f.profile.to_chrome_trace(path)
    doc = json.loads(path.read_text())
    assert check_nesting(doc) == []
    events = doc["traceEvents"]
    for ev in events:
        assert {"name", "ph", "ts", "pid", "tid"} <= set(ev)
        if ev["ph"] == "X":
            assert ev["dur"] >= 0
    fp = f.profile.functions[0]
    nodes = list(iter_node_events(doc))
    calls = [ev for ev in events if ev.get("cat") == "call"]
    assert len(calls) == fp.calls
    assert len(nodes) == fp.calls * len(fp.nodes)
    assert {ev["name"] for ev in nodes} == {n.apply_name for n in fp.nodes}
    assert all(ev["pid"] == os.getpid() for ev in nodes)
    # node events lie inside their call event on the same thread
    for ev in nodes:
        assert any(
            c["tid"] == ev["tid"]
            and c["ts"] - 1e-3 <= ev["ts"]
            and ev["ts"] + ev["dur"] <= c["ts"] + c["dur"] + 1e-3
            for c in calls
        )
    node = nodes[0]["args"]
    assert node["impl"] in ("C", "Py") and "float64" in node["dtype"] and node["inputs"]
    compile_names = {ev["name"] for ev in events if ev.get("cat") == "compile"}
    assert "compile" in compile_names
    assert doc["otherData"]["dropped_events"] == 0


def test_trace_is_bounded_and_reports_drops():
    f = _traced(capacity=4, calls=5)
    doc = chrome_trace(f.profile)
    fp = f.profile.functions[0]
    assert len(fp.trace.events) == 4
    assert fp.trace.dropped == 5 * len(fp.nodes) - 4
    assert doc["otherData"]["dropped_events"] == fp.trace.dropped
    assert len(list(iter_node_events(doc))) == 4
    assert check_nesting(doc) == []


def test_no_trace_unless_asked():
    x = T.vector("x")
    f = graphc.function([x], x * 2, profile=True)
    f(np.ones(3))
    f.profile.refresh()
    assert f.profile.functions[0].trace is None
    assert list(iter_node_events(chrome_trace(f.profile))) == []


def test_json_round_trip_keeps_trace_and_fields(tmp_path):
    f = _traced()
    path = tmp_path / "p.json"
    f.profile.save(path)
    back = load(path)
    assert back.functions == f.profile.functions
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    fdoc = doc["functions"][0]
    from graphc.profile.data.model import FunctionProfile, NodeRecord, TraceRecord

    want = {fl.name for fl in dataclasses.fields(FunctionProfile)} - {"refresh"}
    assert set(fdoc) == want
    assert set(fdoc["nodes"][0]) == {fl.name for fl in dataclasses.fields(NodeRecord)}
    assert set(fdoc["trace"]) == {fl.name for fl in dataclasses.fields(TraceRecord)}
    assert all(len(row) == 4 for row in fdoc["trace"]["events"])
    # an older file without the trace field still loads
    del fdoc["trace"]
    old = ProfileStats.from_json(json.dumps(doc))
    assert old.functions[0].trace is None


def test_speedscope_export():
    f = _traced(calls=2)
    doc = speedscope(f.profile)
    (prof,) = doc["profiles"]
    assert prof["type"] == "evented"
    assert len(prof["events"]) == 2 * 2 * len(f.profile.functions[0].nodes)


SCRIPT = """
import sys
import numpy as np
import graphc, graphc.tensor as T
graphc.config.profile_trace = True
x, y = T.vectors("xy")
f = graphc.function([x, y], T.exp(x) * y + x, profile=True, name="worker")
v = np.ones(100)
for _ in range(int(sys.argv[2])):
    f(v, v)
f.profile.save(sys.argv[1])
"""


@pytest.mark.parametrize("calls", [(3, 4)])
def test_profiles_of_two_processes_merge(tmp_path, calls):
    script = tmp_path / "w.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    paths = []
    for k, n in enumerate(calls):
        p = tmp_path / f"p{k}.json"
        subprocess.run([sys.executable, str(script), str(p), str(n)], check=True, env=env,
                       timeout=120)  # fmt: skip
        paths.append(p)
    a, b = (load(p) for p in paths)
    merged = ProfileStats.merge([a, b])
    (fa,), (fb,), (fm,) = a.functions, b.functions, merged.functions
    assert fm.calls == fa.calls + fb.calls
    for na, nb, nm in zip(fa.nodes, fb.nodes, fm.nodes):
        assert nm.calls == na.calls + nb.calls
        assert nm.ns_total == na.ns_total + nb.ns_total
    assert (a + b).functions == merged.functions
    # the traces of both processes side by side: one pid each
    doc = chrome_trace([a, b])
    assert len({ev["pid"] for ev in iter_node_events(doc)}) == 2
    assert check_nesting(doc) == []


def test_distributed_example_sums_calls(tmp_path):
    out = tmp_path / "merged.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "distributed_training.py"), "--workers", "2",
         "--steps", "6", "--samples", "200", "--features", "20", "--quiet", "--json", str(out)],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    (fp,) = load(out).functions
    assert fp.calls == 12
    assert "merged profile: 12 calls" in res.stdout
