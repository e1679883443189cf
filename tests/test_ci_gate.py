"""The CI performance gate (benchmarks/baseline/gate.sh) on a throwaway repository: a first
commit skips it, a commit that slows every Elemwise fails it, and says which."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Appended to the C Elemwise generator in the slowed commit: a busy loop in every thunk.
SLOWDOWN = """

_fast_gen_elemwise = gen_elemwise
from graphc.linker.c.registry import _GENERATORS

del _GENERATORS[Elemwise]  # one rule per class: replace the registered one


@register_c(Elemwise)
def _slowed_gen_elemwise(node):
    import dataclasses

    code = _fast_gen_elemwise(node)
    if code is None:
        return None
    spin = "{ volatile double s = 0; for (long i = 0; i < 600000; i++) s += i; }\\n"
    return dataclasses.replace(code, body=spin + code.body, key=("slowed", code.key))
"""


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="ci", GIT_AUTHOR_EMAIL="ci@example.com",
               GIT_COMMITTER_NAME="ci", GIT_COMMITTER_EMAIL="ci@example.com")  # fmt: skip
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env,
                          capture_output=True, text=True).stdout  # fmt: skip


def _gate(repo: Path) -> subprocess.CompletedProcess:
    # the compile entries have their own test (test_ci_gate_compile.py): shorter processes
    # keep the pairs close in time
    env = dict(os.environ, PY=sys.executable, GATE_PROCESSES="3", GATE_CALLS="30",
               GATE_COMPILES="0")  # fmt: skip
    env.pop("GATE_BASE", None)
    env.pop("GATE_TARGET", None)
    return subprocess.run(["bash", "benchmarks/baseline/gate.sh"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


def test_gate_skips_first_commit_and_fails_a_slowed_commit(tmp_path):
    repo = tmp_path / "repo"
    files = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard").split("\n")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    for so in glob.glob(str(ROOT / "graphc" / "vm" / "_*.so")):  # the built VM, loop driver
        shutil.copy2(so, repo / "graphc" / "vm")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")

    first = _gate(repo)
    assert first.returncode == 0, first.stderr
    assert "skipped: HEAD has no parent commit" in first.stdout

    gen = repo / "graphc" / "linker" / "c" / "gen_elemwise.py"
    gen.write_text(gen.read_text() + SLOWDOWN)
    _git(repo, "commit", "-qam", "slower Elemwise")
    slowed = _gate(repo)
    out = slowed.stdout
    assert slowed.returncode == 1, out + slowed.stderr
    assert "FAILED: function elemwise_chain:" in out and "> 1.5x" in out, slowed.stderr
    assert "function dot:" not in out  # Dot22 did not change, and is not blamed
    assert not (repo / "build" / "ci-base").exists()  # the base worktree is cleaned up
