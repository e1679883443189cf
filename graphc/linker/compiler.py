"""Find the C compiler, describe it, and build one shared object with it.

The compiler is ``$CC`` (it may carry arguments, e.g. ``CC="ccache gcc"``) or ``cc``.
Its identity (resolved path and ``--version`` output), whether it can link glibc's
``libmvec`` and whether its ``-march=native`` tuning knows this CPU's vector width are
probed once per process and, when a probe directory is given, once per compiler binary on
disk and CPU (keyed by the binary's path, inode, size and mtime, and the CPU's identity),
so loading an already built module never starts a compiler process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from graphc.flags import config
from graphc.linker.build_env import _cpu

__all__ = [
    "DEFAULT_CFLAGS",
    "CompileError",
    "CompileTimeout",
    "CompilerUnavailable",
    "Compiler",
    "compiler_available",
    "find_compiler",
    "include_dirs",
]

DEFAULT_CFLAGS: tuple[str, ...] = (
    "-O3",
    "-fPIC",
    "-shared",
    "-march=native",
    "-fno-math-errno",
    # every + and * rounded as numpy rounds it: gcc's default for GNU C contracts a*b + c
    # into one fma, and a fused loop then differs from the unfused graph in the last bit
    "-ffp-contract=off",
    "-fopenmp-simd",
    "-fno-strict-aliasing",
    "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION",
)

_MAX_STDERR_LINES = 60


class CompilerUnavailable(RuntimeError):
    """No usable C compiler: ``cxx`` is set empty or names a missing program, as ``$CC``
    may, or there is no ``cc``."""


class CompileError(RuntimeError):
    """The compiler rejected a source; ``source_path`` is where the source was kept."""

    def __init__(self, message: str, source_path: str | os.PathLike[str], stderr: str = "") -> None:
        super().__init__(message)
        self.source_path = str(source_path)
        self.stderr = stderr


class CompileTimeout(CompileError):
    """The compiler ran longer than ``graphc.config.compile_timeout`` and was stopped."""


@dataclass(frozen=True)
class Compiler:
    """A resolved compiler command and what it was found to be."""

    argv: tuple[str, ...]
    path: str
    version: str
    has_mvec: bool
    tune_flags: tuple[str, ...] = ()

    @property
    def default_libraries(self) -> tuple[str, ...]:
        return ("m", "mvec") if self.has_mvec else ("m",)

    @property
    def default_cflags(self) -> tuple[str, ...]:
        """:data:`DEFAULT_CFLAGS` and the tuning this compiler needs on this CPU."""
        return DEFAULT_CFLAGS + self.tune_flags

    def build(
        self,
        source: Path,
        output: Path,
        cflags: tuple[str, ...],
        libraries: tuple[str, ...],
    ) -> None:
        """Compile ``source`` into the shared object ``output``; raise CompileError."""
        cmd = self.command(source, output, cflags, libraries)
        timeout = float(config.compile_timeout)
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, errors="replace", timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            raise CompileTimeout(
                f"the C compiler did not finish within {timeout:g} s and was stopped "
                f"(graphc.config.compile_timeout): {shlex.join(cmd)}",
                source,
                exc.stderr if isinstance(exc.stderr, str) else "",
            ) from None
        except OSError as exc:  # the binary vanished since it was probed
            raise CompilerUnavailable(f"cannot run C compiler {self.argv[0]!r}: {exc}") from exc
        if proc.returncode != 0 or not output.is_file():
            raise CompileError(
                _failure_message(cmd, proc.returncode, proc.stderr or proc.stdout, source),
                source,
                proc.stderr,
            )

    def command(
        self,
        source: Path,
        output: Path,
        cflags: tuple[str, ...],
        libraries: tuple[str, ...],
    ) -> list[str]:
        incs = [f"-I{d}" for d in include_dirs()]
        libs = [f"-l{lib}" for lib in libraries]
        return [*self.argv, *cflags, *incs, str(source), "-o", str(output), *libs]


def _failure_message(cmd: list[str], rc: int, stderr: str, source: Path) -> str:
    lines = stderr.strip().splitlines()
    if len(lines) > _MAX_STDERR_LINES:
        cut = len(lines) - _MAX_STDERR_LINES
        lines = [*lines[:_MAX_STDERR_LINES], f"... ({cut} more lines)"]
    body = "\n".join(lines) or "(no output)"
    return (
        f"C compilation failed (exit status {rc})\n"
        f"command: {shlex.join(cmd)}\n"
        f"{body}\n"
        f"source kept at: {source}"
    )


_include_dirs: tuple[str, ...] | None = None


def include_dirs() -> tuple[str, ...]:
    """Python's and numpy's C header directories."""
    global _include_dirs
    if _include_dirs is None:
        import numpy

        _include_dirs = (sysconfig.get_paths()["include"], numpy.get_include())
    return _include_dirs


def compiler_argv() -> tuple[str, ...]:
    """The compiler command (split like a shell would): the ``cxx`` flag when it is set,
    as in Theano (set empty: no C compiler, CompilerUnavailable), else ``$CC`` or ``cc``."""
    if config.is_set("cxx"):
        argv = tuple(shlex.split(str(config.cxx)))
        if not argv:
            raise CompilerUnavailable("graphc.config.cxx is empty: C code is not compiled")
        return argv
    cc = os.environ.get("CC", "").strip()
    argv = tuple(shlex.split(cc)) if cc else ("cc",)
    return argv or ("cc",)


def compiler_source() -> str:
    """Where the compiler command comes from, for messages and memo keys."""
    if config.is_set("cxx"):
        return f"graphc.config.cxx={config.cxx!r}"
    cc = os.environ.get("CC", "").strip()
    return f"$CC={cc!r}" if cc else "the default"


def _resolve(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        where = compiler_source()
        raise CompilerUnavailable(
            f"C compiler {program!r} ({where}) was not found or is not executable; "
            "install a C compiler or point $CC or graphc.config.cxx at one"
        )
    return os.path.realpath(found)


_lock = threading.Lock()
_memo: dict[tuple[tuple[str, ...], str, str], Compiler] = {}


def find_compiler(probe_dir: Path | None = None) -> Compiler:
    """The current compiler, probed once per process (and per binary if ``probe_dir``)."""
    argv = compiler_argv()
    memo_key = (argv, os.environ.get("PATH", ""), str(probe_dir))
    found = _memo.get(memo_key)
    if found is not None:
        return found
    with _lock:
        path = _resolve(argv[0])
        found = _probe_cached(argv, path, probe_dir)
        _memo[memo_key] = found
        return found


def compiler_available() -> bool:
    """Whether a C compiler can be found (it is not run)."""
    try:
        _resolve(compiler_argv()[0])
    except CompilerUnavailable:
        return False
    return True


def _probe_cached(argv: tuple[str, ...], path: str, probe_dir: Path | None) -> Compiler:
    if probe_dir is None:
        return _probe(argv, path)
    st = os.stat(path)
    ident = json.dumps([argv, path, st.st_ino, st.st_size, st.st_mtime_ns, _cpu()])
    memo_file = probe_dir / (hashlib.sha256(ident.encode()).hexdigest()[:32] + ".json")
    try:
        data = json.loads(memo_file.read_text())
        if (
            memo_file.stat().st_uid == os.getuid()
            and data.get("ident") == ident
            and isinstance(data.get("version"), str)
            and isinstance(data.get("has_mvec"), bool)
            and isinstance(data.get("tune_flags"), list)
        ):
            tune = tuple(str(f) for f in data["tune_flags"])
            return Compiler(argv, path, data["version"], data["has_mvec"], tune)
    except (OSError, ValueError, AttributeError):
        pass
    found = _probe(argv, path)
    record = {"ident": ident, "version": found.version, "has_mvec": found.has_mvec,
              "tune_flags": list(found.tune_flags)}  # fmt: skip
    try:
        probe_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=probe_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, memo_file)
    except OSError:
        pass  # the memo is an optimisation only
    return found


def _probe(argv: tuple[str, ...], path: str) -> Compiler:
    timeout = float(config.compile_timeout)
    try:
        proc = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, errors="replace",
            timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise CompilerUnavailable(
            f"C compiler {shlex.join(argv)!r} did not answer --version within {timeout:g} s "
            "(graphc.config.compile_timeout)"
        ) from None
    except OSError as exc:
        raise CompilerUnavailable(f"cannot run C compiler {argv[0]!r}: {exc}") from exc
    if proc.returncode != 0:
        raise CompilerUnavailable(
            f"C compiler {shlex.join(argv)!r} failed on --version: {proc.stderr.strip()}"
        )
    version = proc.stdout.strip()
    return Compiler(argv, path, version, _links(argv, "mvec"), _tune_flags(argv))


# AMD cores without AVX-512. A gcc older than the CPU takes a newer core for the newest
# it knows (gcc 12.2 on Zen 4: znver3) and schedules the 512-bit code that
# ``-march=native`` allows by a model with no 512-bit operations: the fused exp/tanh
# loop took 0.92-0.99x the time, LeNet layers 0.95-0.97x, with "generic" (Zen 4, gcc 12.2;
# the LSTM, scan, softmax and a bandwidth-bound loop level, same bits).
_TUNES_WITHOUT_AVX512 = frozenset({"znver1", "znver2", "znver3"})


def tune_flags_for(target_help: str) -> tuple[str, ...]:
    """The tuning flags for the compiler whose ``-march=native -Q --help=target`` printed
    ``target_help``: ``-mtune=generic`` when it tunes for an AMD core without AVX-512 on a
    CPU with AVX-512, else none."""
    opts = dict(re.findall(r"^\s*(-m[\w=.-]+)\s+(\S+)\s*$", target_help, re.MULTILINE))
    stale = opts.get("-mtune=") in _TUNES_WITHOUT_AVX512 and opts.get("-mavx512f") == "[enabled]"
    return ("-mtune=generic",) if stale else ()


def _tune_flags(argv: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`tune_flags_for` this compiler; none where it cannot say (not gcc)."""
    cmd = [*argv, "-march=native", "-Q", "--help=target"]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, errors="replace",
            timeout=float(config.compile_timeout),
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tune_flags_for(proc.stdout) if proc.returncode == 0 else ()


def _links(argv: tuple[str, ...], library: str) -> bool:
    """Whether a shared object linking ``-l<library>`` can be built."""
    with tempfile.TemporaryDirectory(prefix="graphc-probe-") as tmp:
        src = Path(tmp, "probe.c")
        src.write_text("int graphc_probe(void) { return 0; }\n")
        out = Path(tmp, "probe.so")
        cmd = [*argv, "-shared", "-fPIC", str(src), "-o", str(out), f"-l{library}"]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=float(config.compile_timeout))
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0 and out.is_file()
