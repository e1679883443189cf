"""Per-node overhead of the VMs: a 200-node chain of trivial C thunks / Python performs.

Run: ``python benchmarks/bench_vm.py [--repeats N]``.  Prints ns per node for the Cython
("cvm") and Python ("py") VMs with timing off and on: the median over interleaved repeats
of (time of a 200-node call - time of a 1-node call) / 199, so per-call costs cancel.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from graphc.linker.program import NodeSpec, Program
from graphc.vm import make_vm

ROOT = Path(__file__).resolve().parent.parent
N_NODES = 200


def load_thunks(tmp: Path):
    """Compile tests/c_thunks_fixture.c into ``tmp`` and import it."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("no C compiler found")
    so = tmp / ("_graphc_test_thunks" + sysconfig.get_config_var("EXT_SUFFIX"))
    paths = sysconfig.get_paths()
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O2",
            f"-I{paths['include']}",
            f"-I{paths['platinclude']}",
            str(ROOT / "tests" / "c_thunks_fixture.c"),
            "-o",
            str(so),
        ],
        check=True,
    )
    spec = importlib.util.spec_from_file_location("_graphc_test_thunks", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def py_copy(inputs, cells):
    cells[0][0] = inputs[0]


def chain(n: int, c_thunk=None) -> Program:
    nodes = [
        NodeSpec(f"n{i}", (i,), (i + 1,), perform=None if c_thunk else py_copy, c_thunk=c_thunk)
        for i in range(n)
    ]
    return Program(n + 1, (0,), (n,), (), tuple(nodes))


def time_call(vm, calls: int) -> float:
    args = [1.0]
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        vm(args)
    return (time.perf_counter_ns() - t0) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--calls", type=int, default=2000)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mod = load_thunks(Path(tmp))
        cases = {}
        for thunk_kind, capsule in (("C thunk", mod.copy), ("Python perform", None)):
            for vm_kind in ("cvm", "py"):
                for timing in (False, True):
                    vms = []
                    for n in (1, N_NODES):
                        vm = make_vm(chain(n, capsule), kind=vm_kind)
                        vm.set_profiling(timing=timing)
                        vms.append(vm)
                    cases[(thunk_kind, vm_kind, timing)] = (vms, [])
        for _ in range(opts.repeats):  # interleaved: every case once per round
            for (thunk_kind, vm_kind, _timing), (vms, samples) in cases.items():
                calls = opts.calls if vm_kind == "cvm" else max(opts.calls // 20, 20)
                if thunk_kind != "C thunk":
                    calls = max(calls // 5, 20)
                small, big = (time_call(vm, calls) for vm in vms)
                samples.append((big - small) / (N_NODES - 1))
        print(f"{'nodes':<16}{'vm':<6}{'timing':<8}{'ns/node (median)':>18}{'min':>10}")
        for (thunk_kind, vm_kind, timing), (_vms, samples) in cases.items():
            print(
                f"{thunk_kind:<16}{vm_kind:<6}{'on' if timing else 'off':<8}"
                f"{statistics.median(samples):>18.1f}{min(samples):>10.1f}"
            )


if __name__ == "__main__":
    main()
