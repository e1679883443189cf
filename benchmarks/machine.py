"""What the benchmarks ran on: the CPU, its cores, memory, BLAS, the peers' versions and the
load before and after, so that a published table names its machine."""

from __future__ import annotations

import os
import platform
import sys

import numpy as np


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _isa() -> str:
    """The widest vector extension the CPU reports (what the generated C is built for)."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((ln.split(":", 1)[1].split() for ln in fh if ln.startswith("flags")), [])
    except OSError:
        return "unknown"
    for isa in ("avx512f", "avx2", "avx", "sse4_2"):
        if isa in flags:
            return isa
    return "none of avx512f/avx2/avx/sse4_2"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def load_average() -> float | None:
    """The one-minute load average, or None where the OS has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def describe(peers: dict[str, object]) -> dict[str, object]:
    """The machine and software of this run, as plain data for the JSON and the header."""
    from benchmarks.bench_blas import blas_info, openblas_core

    mem = _memory_gib()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": None if mem is None else round(mem, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "isa": _isa(),
        "blas": blas_info(),
        "openblas_core": openblas_core(),
        "peers": {k: getattr(m, "__version__", "?") for k, m in peers.items()},
        "env": {
            k: os.environ[k]
            for k in ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OMP_NUM_THREADS")
            if k in os.environ
        },  # fmt: skip
        "argv": sys.argv[1:],
    }


def header(info: dict[str, object], load: tuple[float | None, float | None]) -> str:
    """One line naming the machine, as the table's caption."""
    mem = info.get("memory_gib")
    peers = info.get("peers") or {}
    assert isinstance(peers, dict)
    parts = [
        f"{info['cpu']} ({info['isa']}; OpenBLAS kernels {info['openblas_core']}), "
        f"{info['cores']} logical cores" + (f", {mem} GiB" if mem is not None else ""),
        str(info["os"]),
        f"Python {info['python']}, numpy {info['numpy']}",
        ", ".join(f"{k} {v}" for k, v in peers.items()) or "no peers",
        "env: " + (" ".join(f"{k}={v}" for k, v in info["env"].items()) or "-"),  # type: ignore[union-attr]
    ]
    before, after = load
    if before is not None and after is not None:
        parts.append(f"load average {before:.2f} before, {after:.2f} after")
    return "; ".join(parts)
