"""Lasagne 0.1's examples under a real Theano 0.8.2 and under graphc, side by side.

    scripts/theano_reference.sh [--examples mlp,cnn] [--epochs 3] [--floatX float32] ...

(the shell wrapper creates the Theano venv from the package index, then runs this file with
graphc's venv). Each example runs in its own process per library, with ``numpy.random``
seeded alike (``theano_reference/probe.py``) on the same synthetic MNIST, once with
``OPENBLAS_NUM_THREADS=1`` and once with the default threads. Prints the first epoch's mean
training loss of each (from every training call, at full precision), their difference and
the median time per epoch; exits 1 when a loss differs by more than ``--tolerance``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_blas import openblas_core  # noqa: E402  (one copy, beside blas_info)

PROBE = ROOT / "scripts" / "theano_reference" / "probe.py"
EXAMPLES = {
    "mlp": ("mnist.py", ["mlp"]),
    "custom_mlp": ("mnist.py", ["custom_mlp:2,200,0.2,0.5"]),
    "cnn": ("mnist.py", ["cnn"]),
    "recurrent": ("recurrent.py", []),
}


@dataclass
class Run:
    """What one process of one example recorded."""

    first_loss: float
    first_losses: list[float]
    epoch_seconds: list[float]

    @property
    def per_epoch(self) -> float:
        """Median seconds per epoch, leaving out the first (its first calls) when there
        are three or more."""
        times = self.epoch_seconds[1:] if len(self.epoch_seconds) >= 3 else self.epoch_seconds
        return statistics.median(times)


def parse(record: dict, start_line: str) -> Run:
    """Epochs from the probe's record: an epoch ends at each ``Epoch N ...`` line and the
    first starts at ``start_line``."""
    marks = [t for t, line in record["lines"] if line.startswith("Epoch ")]
    start = next(t for t, line in record["lines"] if line.startswith(start_line))
    bounds = [start, *marks]
    first = [v for t, v in record["losses"] if t < marks[0]]
    return Run(
        first_loss=sum(first) / len(first),
        first_losses=first,
        epoch_seconds=[b - a for a, b in zip(bounds, bounds[1:])],
    )


def run_probe(cmd: list[str], env: dict[str, str], cwd: Path, example: str, epochs: int) -> Run:
    script, args = EXAMPLES[example]
    with tempfile.NamedTemporaryFile(suffix=".json", dir=cwd, delete=False) as f:
        out = Path(f.name)
    max_epochs = epochs if script == "recurrent.py" else 0
    extra = [str(epochs)] if script == "mnist.py" else []
    argv = [*cmd, str(PROBE), str(out), "1234", str(max_epochs), script, *args, *extra]
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    record = json.loads(out.read_text())
    out.unlink()
    return parse(record, "Starting training" if script == "mnist.py" else "Training")


THEANO_BLAS = """
import ctypes, re, numpy, theano
flags = theano.config.blas.ldflags
lib = ctypes.CDLL(re.search(r"-L(\\S+)", flags).group(1) + "/libopenblas.so")
lib.openblas_get_config.restype = ctypes.c_char_p
print(f"Theano {theano.__version__} (numpy {numpy.__version__}): C code links {flags!r}: "
      f"{lib.openblas_get_config().decode()}, {lib.openblas_get_num_threads()} threads")
"""
GRAPHC_BLAS = """
import graphc, numpy, threadpoolctl
pools = [f"{i['internal_api']} {i['version']} {i['architecture']}, {i['num_threads']} threads"
         for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(f"graphc (numpy {numpy.__version__}): blas_library={graphc.config.blas_library}: "
      f"{'; '.join(pools)} (blas_threads={graphc.config.blas_threads})")
"""


def blas_line(python: str, code: str, env: dict[str, str]) -> str:
    """Which BLAS a library's process calls and with how many threads."""
    r = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
    return r.stdout.strip() or f"(unknown: {r.stderr.strip().splitlines()[-1:]})"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--theano-python", required=True, help="python of the Theano 0.8.2 venv")
    p.add_argument("--theanorc", required=True, help="THEANORC for that venv (BLAS flags)")
    p.add_argument("--examples-dir", required=True, type=Path, help="Lasagne's examples/")
    p.add_argument("--examples", default="mlp,custom_mlp,cnn,recurrent")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--floatX", default="float32", choices=("float32", "float64"))
    p.add_argument("--threads", default="1,default", help="OPENBLAS_NUM_THREADS settings")
    p.add_argument("--tolerance", type=float, default=1e-6)
    p.add_argument("--work", type=Path, default=ROOT / "build" / "theano_reference")
    a = p.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    for name in ("mnist.py", "recurrent.py"):
        (a.work / name).write_bytes((a.examples_dir / name).read_bytes())
    # written by the Theano venv's numpy (1.23), whose pickles numpy 2 reads too
    subprocess.run(
        [a.theano_python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import lasagne_examples as e, pathlib; "
         "e.write_synthetic_mnist(pathlib.Path('mnist.pkl.gz'))", str(ROOT / "scripts")],
        cwd=a.work, check=True,
    )  # fmt: skip
    libraries = {
        "Theano 0.8.2": ([a.theano_python], {"THEANORC": a.theanorc}),
        "graphc": ([sys.executable, "-m", "graphc.theano"], {"GRAPHC_FLAGS": f"floatX={a.floatX}"}),
    }
    # OpenBLAS 0.3.18 does not know every CPU it runs on (it falls back to its generic
    # Prescott kernels on this machine's); both run the kernels graphc's newer one picked
    core = os.environ.get("OPENBLAS_CORETYPE") or openblas_core()
    print(f"floatX={a.floatX}, {a.epochs} epochs, seed 1234, synthetic MNIST (4000 train), "
          f"OPENBLAS_CORETYPE={core}")  # fmt: skip
    print(f"{'example':<12}{'threads':>8}{'library':>14}{'1st-epoch loss':>18}"
          f"{'max |d| batch':>15}{'s/epoch':>9}")  # fmt: skip
    worst = 0.0
    blas: dict[tuple[str, str], str] = {}
    for example in a.examples.split(","):
        for threads in a.threads.split(","):
            runs: dict[str, Run] = {}
            for library, (cmd, extra) in libraries.items():
                env = {k: v for k, v in os.environ.items() if k not in ("THEANORC", "GRAPHC_FLAGS")}
                env.pop("OPENBLAS_NUM_THREADS", None)
                env.update(extra)
                env["THEANO_FLAGS"] = f"floatX={a.floatX}"
                if core:
                    env["OPENBLAS_CORETYPE"] = core
                if threads != "default":
                    env["OPENBLAS_NUM_THREADS"] = threads
                runs[library] = run_probe(cmd, env, a.work, example, a.epochs)
                if example == a.examples.split(",")[0]:
                    code = THEANO_BLAS if library.startswith("Theano") else GRAPHC_BLAS
                    blas[threads, library] = blas_line(cmd[0], code, env)
            ref, ours = runs["Theano 0.8.2"], runs["graphc"]
            n = min(len(ref.first_losses), len(ours.first_losses))
            batch = max(abs(x - y) for x, y in zip(ref.first_losses[:n], ours.first_losses[:n]))
            diff = abs(ref.first_loss - ours.first_loss)
            worst = max(worst, diff)
            for library, run in runs.items():
                d = f"{batch:15.2e}" if library == "graphc" else " " * 15
                print(f"{example:<12}{threads:>8}{library:>14}{run.first_loss:18.9f}{d}"
                      f"{run.per_epoch:9.3f}")  # fmt: skip
            print(f"{'':<12}{'':>8}{'difference':>14}{diff:18.2e}")
            sys.stdout.flush()
    for (threads, _), line in blas.items():
        print(f"OPENBLAS_NUM_THREADS={threads}: {line}")
    ok = worst <= a.tolerance
    print(f"largest first-epoch loss difference {worst:.2e} ({'ok' if ok else 'FAILED'}: "
          f"tolerance {a.tolerance:g})")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
