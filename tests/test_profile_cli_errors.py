"""graphc-prof answers wrong usage in one line (exit 2, no traceback), writes the picture
format its file name asks for, and never writes an empty trace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile.cli import main

WORKLOAD = textwrap.dedent(
    """
    import numpy as np, graphc, graphc.tensor as T
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x).sum())
    for _ in range(3):
        f(np.ones(10))
    """
)


@pytest.fixture(scope="module")
def profile_json(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x).sum(), profile=True, name="f")
    f(np.ones(4))
    path = d / "p.json"
    f.profile.save(path)
    return path


def _one_line_error(capsys, argv, *, words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("graphc-prof: error:"), err
    for w in words:
        assert w in err[0]


def test_missing_and_unreadable_profiles(capsys, tmp_path):
    _one_line_error(capsys, ["show", str(tmp_path / "missing.json")], words=["no such profile"])
    bad = tmp_path / "bad.json"
    bad.write_text("hello")
    _one_line_error(capsys, ["show", str(bad)], words=["not a graphc profile"])
    _one_line_error(capsys, ["diff", str(bad), str(bad)], words=["not a graphc profile"])


def test_run_of_a_missing_script(capsys, tmp_path):
    _one_line_error(capsys, ["run", str(tmp_path / "nope.py")], words=["no such script"])


def test_run_without_outputs_prints_the_summary(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(WORKLOAD)
    res = subprocess.run([sys.executable, "-m", "graphc.profile", "run", str(script)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "Function profiling" in res.stdout + res.stderr


def test_run_full_prints_every_row(tmp_path):
    script = tmp_path / "many.py"
    script.write_text(textwrap.dedent(
        """
        import numpy as np, graphc, graphc.tensor as T
        x = T.dvector("x")
        y = x
        for i in range(12):
            y = T.exp(y) if i % 2 else T.tanh(y)
        f = graphc.function([x], y, mode=graphc.Mode().excluding("fusion"))
        f(np.ones(10))
        """
    ))  # fmt: skip
    cmd = [sys.executable, "-m", "graphc.profile", "run", str(script)]
    env = dict(os.environ, COLUMNS="100")
    short = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env).stdout
    full = subprocess.run(cmd + ["--full"], capture_output=True, text=True, timeout=300,
                          env=env).stdout  # fmt: skip
    assert f"remaining {12 - graphc.config.profiling__n_apply} Apply instances" in short
    assert "remaining 0 Apply instances" in full and "remaining 0 Ops" in full


def test_run_help_documents_every_option():
    from graphc.profile import cli

    for option in cli._RUN_OPTIONS:
        assert option in cli.__doc__


def test_trace_without_recorded_events_is_refused(capsys, profile_json, tmp_path):
    out = tmp_path / "t.json"
    _one_line_error(capsys, ["trace", str(profile_json), str(out)], words=["profile_trace"])
    assert not out.exists()
    with pytest.raises(ValueError, match="profile_trace"):
        graphc.profile.load(profile_json).to_chrome_trace(out)


def test_graph_format_follows_the_file_name(capsys, profile_json, tmp_path):
    _one_line_error(capsys, ["graph", str(profile_json), str(tmp_path / "g.jpg")],
                    words=[".png", ".svg"])  # fmt: skip
    assert main(["graph", str(profile_json), str(tmp_path / "g.dot")]) == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    if shutil.which("dot") is None:
        _one_line_error(capsys, ["graph", str(profile_json), str(tmp_path / "g.png")],
                        words=["Graphviz"])  # fmt: skip
        return
    assert main(["graph", str(profile_json), str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["graph", str(profile_json), str(tmp_path / "g.svg")]) == 0
    assert b"<svg" in (tmp_path / "g.svg").read_bytes()[:2000]
