"""LeNet end to end: examples/lenet.py and the Theano-style tests/programs/conv_lenet.py train
(their cost falls) and the profile shows the convolution with its flops."""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import graphc

ROOT = Path(__file__).resolve().parents[1]


def test_lenet_example_cost_falls_and_profile_shows_conv_flops(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # wide enough for each Apply name on its row
    lenet = runpy.run_path(str(ROOT / "examples" / "lenet.py"))
    with graphc.config.change_flags(profiling__n_apply=40):  # every node, whatever its rank
        costs = lenet["main"](["--small", "--epochs", "3"])
    out = capsys.readouterr().out
    assert costs[-1] < costs[0] - 0.05, costs
    lines = out.splitlines()
    apply_row = re.compile(r"^\s+[\d.]+%\s+[\d.]+%\s+\S+s\s+\S+s\s+\d+\s+\d+\s+Conv2d\{")
    conv_rows = [i for i, line in enumerate(lines) if apply_row.match(line)]
    assert conv_rows, out
    # The Apply row's flops, on the line under it: 2 * 50*4*24*24 outputs * 1*5*5 taps
    # = 5.76 Mflops.
    unders = [lines[i + 1] for i in conv_rows]
    assert any(re.search(r", 5\.760 Mflops", u) for u in unders), unders


def test_theano_style_lenet_program_cost_falls():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "programs" / "conv_lenet.py"), "4"],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    costs = [float(c) for c in re.findall(r"^epoch \d+ cost (\S+)$", proc.stdout, re.M)]
    assert len(costs) == 4, proc.stdout + proc.stderr
    assert all(b < a for a, b in zip(costs, costs[1:])), costs
