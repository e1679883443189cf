"""A/B runs: profile a workload under two versions in alternating fresh processes.

Each side is a command that writes one profile JSON to the path put in place of ``{json}``
(e.g. ``python -m graphc.profile run workload.py --json {json}``), run in its own working
directory and environment. Alternating the sides (A B B A A B ...) spreads the drift of a
loaded machine over both, and the k-th process of each side run back to back make a pair:
the comparison judges the ratio within each pair, so a drift slower than a pair cancels.
The first ``warmup`` pairs are run and discarded (a fresh checkout's bytecode, cold file
and compile caches, the CPU's clock ramping up), and both sides' profile paths have the
same length (so no side gets a different argument or stack layout).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.serialize import loads


@dataclass(frozen=True)
class Side:
    """One version: the command (with a ``{json}`` placeholder), where and how it runs."""

    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)


def python_side(name: str, python: str, script: str, args: Sequence[str] = (),
                tree: str | None = None) -> Side:  # fmt: skip
    """A side that profiles ``script`` with ``python``; with ``tree``, graphc is imported
    from that checkout (put first on ``PYTHONPATH``, run from there)."""
    cmd = (python, "-m", "graphc.profile", "run", str(Path(script).resolve()), *args,
           "--json", "{json}")  # fmt: skip
    env = {}
    if tree is not None:
        tree = str(Path(tree).resolve())
        env["PYTHONPATH"] = os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")])
    return Side(name, cmd, tree, env)


def schedule(processes: int) -> list[int]:
    """Which side (0 or 1) each run uses: ABBA blocks, so neither side always goes first."""
    order: list[int] = []
    for i in range(processes):
        order += [0, 1] if i % 2 == 0 else [1, 0]
    return order


def run_once(side: Side, out: Path, timeout: float = 600) -> list[FunctionProfile]:
    """Run one fresh process of ``side`` and load the profile it wrote."""
    cmd = [a.replace("{json}", str(out)) for a in side.command]
    env = dict(os.environ)
    env.update(side.env)
    proc = subprocess.run(cmd, cwd=side.cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(
            f"graphc-prof ab: the {side.name} command failed (exit {proc.returncode}): "
            f"{' '.join(cmd)}\n{proc.stderr[-2000:]}"
        )
    functions, _ = loads(out.read_text())
    if not functions:
        raise RuntimeError(f"graphc-prof ab: the {side.name} command profiled no function")
    return functions


def run_ab(
    base: Side, new: Side, processes: int = 5, workdir: str | Path | None = None,
    log: TextIO | None = None, warmup: int = 1,
) -> tuple[list[list[FunctionProfile]], list[list[FunctionProfile]]]:  # fmt: skip
    """``processes`` fresh runs of each side, alternating, after ``warmup`` discarded pairs;
    the profiles of each side, in the order they ran (the k-th of each side are a pair)."""
    if processes < 1:
        raise ValueError("graphc-prof ab: --processes must be >= 1")
    if warmup < 0:
        raise ValueError("graphc-prof ab: --warmup must be >= 0")
    runs: tuple[list, list] = ([], [])
    order = schedule(warmup + processes)
    n = len(order)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for i, which in enumerate(order):
            side = (base, new)[which]
            profiles = run_once(side, Path(tmp) / f"run-{i:04d}-{which}.json")
            if i >= 2 * warmup:
                runs[which].append(profiles)
            if log is not None:
                what = "warm-up, discarded" if i < 2 * warmup else side.name
                print(f"graphc-prof ab: run {i + 1}/{n} ({what}) done", file=log)
    return runs[0], runs[1]
