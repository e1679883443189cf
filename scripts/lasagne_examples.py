"""Lasagne 0.1's examples, unchanged, under ``python -m graphc.theano``: ``mnist.py`` (mlp,
custom_mlp, cnn) on a small synthetic MNIST and ``recurrent.py``; each must run and its
loss fall.

    python scripts/lasagne_examples.py EXAMPLES_DIR [WORK_DIR]

``mnist.py`` downloads ``mnist.pkl.gz`` only when the file is missing, so a small one in
the same format (a gzipped pickle of three ``(X float32 (n, 784) in [0, 1], y int64)``
pairs) is written where it looks (its working directory): ten noisy class prototypes,
learnable in a couple of epochs. Prints each run's losses and times; exits 1 on a failure.
"""

from __future__ import annotations

import gzip
import pickle
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MNIST_RUNS = (("cnn", "2"), ("mlp", "2"), ("custom_mlp:2,200,0.2,0.5", "2"))


def write_synthetic_mnist(path: Path, n_train: int = 4000, n_eval: int = 500) -> None:
    """A learnable stand-in for ``mnist.pkl.gz`` (train, validation, test)."""
    rng = np.random.RandomState(1234)
    prototypes = rng.rand(10, 784)

    def split(n: int):
        y = rng.randint(0, 10, n).astype("int64")
        x = np.clip(prototypes[y] + 0.35 * rng.randn(n, 784), 0, 1).astype("float32")
        return x, y

    with gzip.open(path, "wb") as f:
        pickle.dump((split(n_train), split(n_eval), split(n_eval)), f)


def run(script: Path, args: list[str], cwd: Path, pattern: str) -> tuple[list[float], float]:
    """Run ``script`` under the Theano runner; the floats its output gives for ``pattern``."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "graphc.theano", str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return [float(v) for v in re.findall(pattern, r.stdout)], elapsed


def check_falls(what: str, losses: list[float], expected: int) -> None:
    if len(losses) != expected or not all(np.isfinite(losses)):
        raise RuntimeError(f"{what}: expected {expected} finite losses, got {losses}")
    if not losses[-1] < losses[0]:
        raise RuntimeError(f"{what}: the loss did not fall: {losses}")


def main(argv: list[str]) -> int:
    examples = Path(argv[0]).resolve()
    work = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="lasagne-ex-"))
    work.mkdir(parents=True, exist_ok=True)
    write_synthetic_mnist(work / "mnist.pkl.gz")
    failed = 0
    jobs = [
        (f"mnist.py {m}", "mnist.py", [m, n], r"training loss:\s+([-\d.eE+]+)", int(n))
        for m, n in MNIST_RUNS
    ]
    jobs.append(("recurrent.py", "recurrent.py", [], r"validation cost = ([-\d.eE+]+)", 10))
    for what, script, args, pattern, n in jobs:
        try:
            losses, seconds = run(examples / script, args, work, pattern)
            check_falls(what, losses, n)
            print(f"{what}: ok in {seconds:.1f}s, losses {' '.join(f'{v:.4f}' for v in losses)}")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            failed += 1
            print(f"{what}: FAILED: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
