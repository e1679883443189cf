"""graphc-prof: run a script, show a profile, diff two profiles with a noise-aware gate."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, benchmark, load
from graphc.profile.cli import main


def _profile(mode, name="g", n=20_000, repeat=40) -> ProfileStats:
    x, y, z = T.vectors("xyz")
    f = graphc.function([x, y, z], T.exp(x + y) * z, mode=mode, profile=True, name=name)
    v = np.random.default_rng(0).random(n)
    return benchmark(f, [v, v, v], repeat=repeat, warmup=2)


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("prof")
    fused = _profile(graphc.Mode())
    unfused = _profile(graphc.Mode().excluding("fusion"))
    again = _profile(graphc.Mode())
    paths = {}
    for key, st in (("fused", fused), ("unfused", unfused), ("again", again)):
        paths[key] = d / f"{key}.json"
        st.save(paths[key])
    slow = load(paths["fused"])
    for fp in slow.functions:
        for node in fp.nodes:
            node.ns_samples = [s * 5 for s in node.ns_samples]
            node.ns_total *= 5
            node.ns_min *= 5
    paths["slow"] = d / "slow.json"
    slow.save(paths["slow"])
    return paths


def test_diff_names_changed_ops(profiles, capsys):
    assert (
        main(["diff", str(profiles["unfused"]), str(profiles["fused"]), "--min-matched", "0"]) == 0
    )
    out = capsys.readouterr().out
    base_ops = {n.op_name for f in load(profiles["unfused"]).functions for n in f.nodes}
    new_ops = {n.op_name for f in load(profiles["fused"]).functions for n in f.nodes}
    assert base_ops != new_ops, "fusion should change the Ops of exp(x + y) * z"
    for op in base_ops ^ new_ops:
        assert op in out
    assert "unmatched (base only)" in out and "unmatched (new only)" in out
    assert "Functions" in out and "Ops" in out and "Apply nodes" in out


def test_fail_above_on_slower_build(profiles, capsys):
    code = main(["diff", str(profiles["fused"]), str(profiles["slow"]), "--fail-above", "3"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAILED" in out and "FAIL" in out
    assert "function g:" in out and "> 3x" in out


def test_fail_above_passes_on_repeat(profiles, capsys):
    code = main(["diff", str(profiles["fused"]), str(profiles["again"]), "--fail-above", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "OK" in out


def test_show(profiles, capsys):
    assert main(["show", str(profiles["fused"]), "--n-apply", "3", "--n-ops", "3"]) == 0
    out = capsys.readouterr().out
    assert "Message: g" in out and "Apply" in out


def test_benchmark_requires_profiled_function():
    x = T.vector("x")
    f = graphc.function([x], x * 2, profile=False)
    with pytest.raises(ValueError, match="profile=True"):
        benchmark(f, [np.ones(3)])


def test_run_writes_json(tmp_path):
    script = tmp_path / "tiny.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import numpy as np
            import graphc, graphc.tensor as T

            def main():
                x = T.vector("x")
                f = graphc.function([x], T.exp(x) * 2, name="tiny")
                for _ in range(int(sys.argv[1])):
                    f(np.ones(10))

            main()
            """
        )
    )
    out = tmp_path / "p.json"
    trace = tmp_path / "p.trace.json"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphc.profile",
            "run",
            str(script),
            "7",
            "--json",
            str(out),
            "--trace",
            str(trace),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    stats = load(out)
    (fp,) = stats.functions
    assert fp.name == "tiny"
    assert fp.calls == 7 - (1 if graphc.config.profiling__ignore_first_call else 0)
    assert sum(n.calls for n in fp.nodes) > 0
    doc = json.loads(trace.read_text())
    assert any(ev.get("cat") == "node" for ev in doc["traceEvents"])
