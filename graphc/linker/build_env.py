"""What a compiled module's validity depends on besides its source: the CPU it was built
for (``-march=native``) and the versions of graphc, numpy (and its C ABI) and Python. The
compile cache puts them in each key and manifest; an entry built under others is foreign.
"""

from __future__ import annotations

import hashlib
import platform
import sys
import sysconfig
from pathlib import Path


def _cpu_identity() -> str:
    """Model and feature flags of the first CPU (what ``-march=native`` depends on)."""
    wanted: tuple[str, ...] = ("vendor_id", "cpu family", "model", "model name", "flags")
    wanted += ("features", "cpu implementer", "cpu architecture", "cpu variant", "cpu part", "isa")
    found: list[str] = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if found:
                        break
                    continue
                name, _, value = line.partition(":")
                if name.strip().lower() in wanted:
                    found.append(f"{name.strip()}={' '.join(value.split())}")
    except OSError:
        pass
    return "\n".join(found) or f"{platform.machine()} {platform.processor()}"


def _graphc_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("graphc")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def _numpy_versions() -> tuple[str, str]:
    import numpy

    major_minor = ".".join(numpy.__version__.split(".")[:2])
    try:
        from numpy._core import _multiarray_umath as umath  # type: ignore[attr-defined]
    except ImportError:
        try:
            from numpy.core import _multiarray_umath as umath
        except ImportError:
            return major_minor, "unknown"
    return major_minor, hex(umath._get_ndarray_c_version())


_versions_memo: dict[str, str] | None = None


def _versions() -> dict[str, str]:
    """Versions recorded in manifests; an entry whose versions differ is not loaded."""
    global _versions_memo
    if _versions_memo is None:
        np_version, np_capi = _numpy_versions()
        _versions_memo = {
            "graphc": _graphc_version(),
            "numpy": np_version,
            "numpy_c_api": np_capi,
            "python": f"{platform.python_implementation()} {sys.version}",
            "soabi": str(sysconfig.get_config_var("SOABI")),
        }
    return _versions_memo


_cpu_memo: str | None = None


def _cpu() -> str:
    global _cpu_memo
    if _cpu_memo is None:
        _cpu_memo = _cpu_identity()
    return _cpu_memo


def writes_subnormals_at_full_speed() -> bool:
    """Whether this CPU writes a subnormal floating-point result at full speed: AMD's cores
    (on Zen 4 a vector multiply into a subnormal took what any other does); Intel's take a
    microcode assist, ~100 cycles, per instruction that writes one."""
    return "vendor_id=AuthenticAMD" in _cpu()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
