"""The compile cache: C source in, loaded extension module out.

Layout of a cache root (one per user; see :func:`resolve_root`)::

    <root>/CACHEDIR.TAG            written if the root was new or empty (purge needs it)
    <root>/<abi>/<key>/            an entry: <module>.c, <module><ext>, manifest.json
    <root>/<abi>/tmp/              private build dirs (renamed into place when done)
    <root>/<abi>/locks/<key>.lock  flock locks (the kernel releases them if a holder dies)
    <root>/<abi>/failed/<module>/  source and compiler output of the last failed build
    <root>/<abi>/compilers/        memoized compiler probes (``--version``, libmvec)

``<abi>`` names the interpreter and machine (e.g. ``cpython-311-x86_64``). ``<key>`` is the
SHA-256 of the source, the compiler (path and ``--version``), the flags and libraries, the
CPU (``-march=native``), the numpy ABI, Python and graphc versions. Entries are checked
(owner, manifest, size and SHA-256 of the binary) before being loaded; a bad entry is
rebuilt with a :class:`CacheWarning`. Nothing in the cache is unpickled.

An unsafe root (a symbolic link, writable by group or others, or owned by another user) is
refused with :class:`CacheError`: point ``GRAPHC_COMPILEDIR`` (or the ``compiledir`` flag)
at a directory of your own, or fix it with ``chmod 700 DIR`` / by replacing the link with
a real directory. A root that cannot be written falls back to a private temporary
directory for the process.

Command line: ``graphc-cache [--root DIR] {list,clear,purge}``.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import stat
import sys
import sysconfig
import tempfile
import threading
import time
import types
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from filelock import FileLock

from graphc.flags import config
from graphc.linker.build_env import _cpu, _sha256_file, _versions
from graphc.linker.buildlock import BuildLock, describe_holder
from graphc.linker.compiler import (
    CompileError,
    Compiler,
    CompilerUnavailable,
    compiler_available,
    find_compiler,
)

__all__ = [
    "CacheError",
    "CacheStats",
    "CacheWarning",
    "CompileCache",
    "CompileError",
    "CompilerUnavailable",
    "Entry",
    "compiler_available",
    "get_cache",
    "main",
    "resolve_root",
]

FORMAT = 1
MANIFEST = "manifest.json"
TAG = "CACHEDIR.TAG"
_TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by graphc (compiled C modules).\n"
)
_EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


class CacheError(RuntimeError):
    """The cache directory cannot be used safely (the message says which and why)."""


class CacheWarning(UserWarning):
    """A cache entry was ignored (and rebuilt), or the cache fell back to a temp dir."""


@dataclass
class CacheStats:
    """What :meth:`CompileCache.load` did, per cache object."""

    memo_hits: int = 0
    disk_hits: int = 0
    compiled: int = 0


@dataclass(frozen=True)
class Entry:
    """One published entry as found on disk; ``problem`` is None for a valid one."""

    key: str
    path: Path
    module: str
    name_hint: str
    size: int
    created: float
    problem: str | None


# --------------------------------------------------------------------------- root


def abi_tag() -> str:
    """The interpreter/machine subdirectory name, e.g. ``cpython-311-x86_64``."""
    return f"{sys.implementation.cache_tag}-{platform.machine() or 'unknown'}"


def _configured_dir() -> str:
    """The ``compiledir`` flag of graphc's config, or "" when unset."""
    try:
        value = config.compiledir
    except (AttributeError, KeyError):
        return ""
    return str(value or "")


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``root`` > ``$GRAPHC_COMPILEDIR`` > config ``compiledir`` > per-user cache dir."""
    chosen = root or os.environ.get("GRAPHC_COMPILEDIR") or _configured_dir()
    if not chosen:
        import platformdirs

        chosen = platformdirs.user_cache_dir("graphc")
    return Path(chosen).expanduser().absolute()


def check_root(root: Path) -> None:
    """Raise CacheError if an existing ``root`` is unsafe to load code from."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return
    fix = "set GRAPHC_COMPILEDIR (or the compiledir flag) to a directory only you can write"
    if stat.S_ISLNK(st.st_mode):
        raise CacheError(
            f"compile cache root {root} is a symbolic link; refusing to use it "
            f"(replace it with a real directory, or {fix})"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"compile cache root {root} is not a directory ({fix})")
    if st.st_uid != os.getuid():
        raise CacheError(
            f"compile cache root {root} is owned by uid {st.st_uid}, not by you "
            f"(uid {os.getuid()}); refusing to load code from it ({fix})"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = " and ".join(
            w for w, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if st.st_mode & bit
        )
        raise CacheError(
            f"compile cache root {root} is writable by {who} (mode "
            f"{stat.S_IMODE(st.st_mode):04o}); refusing to load code from it "
            f"(run `chmod 700 {root}`, or {fix})"
        )


def _unwritable(path: Path) -> OSError | None:
    """None if a file can be created in ``path`` (tried for real: root ignores modes)."""
    try:
        fd, name = tempfile.mkstemp(dir=path, prefix=".probe-")
    except OSError as exc:
        return exc
    os.close(fd)
    os.unlink(name)
    return None


def _mkdir_private(path: Path) -> None:
    """Create ``path`` and any missing parents, each with mode 0700; CacheError when
    ``path`` exists but is not a directory."""
    target, missing = path, []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    for p in reversed(missing):
        try:
            p.mkdir(mode=0o700)
        except FileExistsError:
            pass
    if not target.is_dir():
        raise CacheError(
            f"compile cache: {target} must be a directory but is not; remove it "
            f"(rm {target}) or point graphc.config.compiledir elsewhere"
        )


def _private_tempdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="graphc-cache-"))  # mode 0700
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # not from a forked child
            shutil.rmtree(path, ignore_errors=True)

    atexit.register(remove)
    return path


# --------------------------------------------------------------------------- entries


def module_name(key: str) -> str:
    """The extension module name for ``key`` (``PyInit_<name>`` is its init function)."""
    return f"g_{key[:20]}"


def entry_problem(entry: Path, key: str) -> str | None:
    """Why ``entry`` must not be loaded; "" if it does not exist; None if it is fine."""
    try:
        st = os.lstat(entry)
    except FileNotFoundError:
        return ""
    uid = os.getuid()
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by you (uid {uid})"
    mpath = entry / MANIFEST
    try:
        if os.lstat(mpath).st_uid != uid:
            return f"{MANIFEST} is owned by another user"
        manifest = _read_manifest(entry)
    except FileNotFoundError:
        return f"{MANIFEST} is missing"
    except (OSError, ValueError) as exc:
        return f"{MANIFEST} is unreadable or garbled ({exc})"
    if manifest.get("format") != FORMAT or manifest.get("key") != key:
        return f"{MANIFEST} does not describe this key"
    if manifest.get("versions") != _versions():
        return (
            f"it was built by other versions ({manifest.get('versions')}); treating it as foreign"
        )
    so_name = manifest.get("so")
    if not isinstance(so_name, str) or "/" in so_name or so_name != _so_name(key):
        return f"{MANIFEST} names an unexpected binary {so_name!r}"
    so = entry / so_name
    try:
        so_st = os.lstat(so)
    except FileNotFoundError:
        return f"the binary {so_name} is missing"
    if not stat.S_ISREG(so_st.st_mode) or so_st.st_uid != uid:
        return f"the binary {so_name} is not a regular file owned by you"
    if so_st.st_size != manifest.get("so_size"):
        return (
            f"the binary {so_name} has {so_st.st_size} bytes, the manifest says "
            f"{manifest.get('so_size')} (truncated or replaced)"
        )
    if _sha256_file(so) != manifest.get("so_sha256"):
        return f"the binary {so_name} does not match its SHA-256 (corrupt)"
    return None


def _read_manifest(entry: Path) -> dict:
    data = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _so_name(key: str) -> str:
    return module_name(key) + _EXT_SUFFIX


# --------------------------------------------------------------------------- the cache


@dataclass(frozen=True)
class _BuildJob:
    """What one module is compiled from, and the key it is cached under."""

    key: str
    source: str
    compiler: Compiler
    cflags: tuple[str, ...]
    libs: tuple[str, ...]
    name_hint: str


class CompileCache:
    """Compiles C extension sources once per key and loads them (see module docstring)."""

    lock_timeout: float | None = None  # seconds; None: graphc.config.compile_lock_wait

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.configured_root = Path(root).expanduser().absolute()
        check_root(self.configured_root)
        self.root = self._usable_root(self.configured_root)
        self.dir = self.root / abi_tag()
        for sub in ("tmp", "locks"):
            _mkdir_private(self.dir / sub)
        self.stats = CacheStats()
        self._memo: dict[tuple[str, tuple[str, ...], tuple[str, ...]], types.ModuleType] = {}
        self._by_key: dict[str, types.ModuleType] = {}
        self._memo_lock = threading.Lock()

    @staticmethod
    def _usable_root(root: Path) -> Path:
        problem: OSError | None
        try:
            fresh = not root.exists() or not any(root.iterdir())
            _mkdir_private(root)
            problem = _unwritable(root)
            if problem is None and fresh:
                (root / TAG).write_text(_TAG_TEXT)
        except OSError as exc:
            problem = exc
        if problem is None:
            return root
        fallback = _private_tempdir()
        warnings.warn(
            CacheWarning(
                f"compile cache root {root} is not writable "
                f"({problem.strerror or problem}); "
                f"using the temporary directory {fallback} for this process"
            ),
            stacklevel=4,
        )
        return fallback

    # ------------------------------------------------------------------ keys

    def key(
        self,
        source: str,
        *,
        extra_cflags: Sequence[str] = (),
        libraries: Sequence[str] = (),
    ) -> str:
        """The cache key of ``source`` built with these options by the current compiler."""
        compiler = find_compiler(self.dir / "compilers")
        cflags, libs = self._options(compiler, tuple(extra_cflags), tuple(libraries))
        return self._key(source, compiler, cflags, libs)

    @staticmethod
    def _options(
        compiler: Compiler, extra_cflags: tuple[str, ...], libraries: tuple[str, ...]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        defaults = compiler.default_libraries
        libs = defaults + tuple(lib for lib in libraries if lib not in defaults)
        return compiler.default_cflags + extra_cflags, libs

    @staticmethod
    def _key(
        source: str, compiler: Compiler, cflags: tuple[str, ...], libs: tuple[str, ...]
    ) -> str:
        payload = {
            "format": FORMAT,
            "source": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "compiler": [compiler.path, list(compiler.argv), compiler.version],
            "cflags": list(cflags),
            "libraries": list(libs),
            "cpu": _cpu(),
            "versions": _versions(),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    module_name = staticmethod(module_name)

    def lock(self, key: str) -> FileLock:
        """The inter-process lock guarding the build of ``key``."""
        return FileLock(str(self.dir / "locks" / f"{key}.lock"), timeout=self._lock_wait())

    def _lock_wait(self) -> float:
        return float(config.compile_lock_wait if self.lock_timeout is None else self.lock_timeout)

    # ------------------------------------------------------------------ loading

    def load(
        self,
        source: str,
        *,
        extra_cflags: Sequence[str] = (),
        libraries: Sequence[str] = (),
        name_hint: str = "",
    ) -> types.ModuleType:
        """Compile ``source`` (unless cached) and return the loaded extension module.

        ``extra_cflags`` follow the default flags; ``libraries`` are linked in addition to
        ``m`` (and ``mvec`` when the C library has it).
        """
        memo_key = (source, tuple(extra_cflags), tuple(libraries))
        module = self._memo.get(memo_key)
        if module is not None:
            self.stats.memo_hits += 1
            return module
        module = self._load_slow(source, memo_key[1], memo_key[2], name_hint)
        with self._memo_lock:
            return self._memo.setdefault(memo_key, module)

    def _load_slow(
        self,
        source: str,
        extra_cflags: tuple[str, ...],
        libraries: tuple[str, ...],
        name_hint: str,
    ) -> types.ModuleType:
        compiler = find_compiler(self.dir / "compilers")
        cflags, libs = self._options(compiler, extra_cflags, libraries)
        key = self._key(source, compiler, cflags, libs)
        job = _BuildJob(key, source, compiler, cflags, libs, name_hint)
        module = self._by_key.get(key)
        if module is not None:
            self.stats.memo_hits += 1
            return module
        entry = self.dir / key
        module, _ = self._try_entry(entry, key)
        if module is None:
            lock = BuildLock(self.dir / "locks" / f"{key}.lock")
            if not lock.acquire(self._lock_wait(), CacheWarning):
                return self._build_private(job, lock)
            try:
                module, problem = self._try_entry(entry, key)
                if module is None:
                    if problem is not None:
                        warnings.warn(
                            CacheWarning(
                                f"ignoring compile cache entry {entry}: {problem}; rebuilding it"
                            ),
                            stacklevel=4,
                        )
                        self._discard(entry)
                    self._build(entry, job)
                    self.stats.compiled += 1
                    module = self._import(entry, _read_manifest(entry))
                else:
                    self.stats.disk_hits += 1
            finally:
                lock.release()
        else:
            self.stats.disk_hits += 1
        with self._memo_lock:
            return self._by_key.setdefault(key, module)

    def _build_private(self, job: _BuildJob, lock: BuildLock) -> types.ModuleType:
        """Build and load a copy of ``key`` for this process alone (under ``tmp/``): another
        process has held the build lock longer than the bounded wait."""
        warnings.warn(
            CacheWarning(
                f"gave up waiting {self._lock_wait():g} s for the compile lock {lock.path} "
                f"({describe_holder(lock.path)}); building a private copy for this process"
            ),
            stacklevel=5,
        )
        private = Path(tempfile.mkdtemp(prefix="private-", dir=self.dir / "tmp")) / job.key
        try:
            self._build(private, job)
            self.stats.compiled += 1
            return self._import(private, _read_manifest(private))
        finally:  # a loaded extension stays mapped once its file is gone
            shutil.rmtree(private.parent, ignore_errors=True)

    def _try_entry(self, entry: Path, key: str) -> tuple[types.ModuleType | None, str | None]:
        """(module, None) if good, (None, why) if bad, (None, None) if there is none."""
        problem = entry_problem(entry, key)
        if problem is not None:
            return None, (None if problem == "" else problem)
        try:
            return self._import(entry, _read_manifest(entry)), None
        except ImportError as exc:
            return None, f"it cannot be loaded ({exc})"

    def _import(self, entry: Path, manifest: dict) -> types.ModuleType:
        name = manifest["module"]
        path = str(entry / manifest["so"])
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        if spec is None:
            raise ImportError(f"cannot make a module spec for {path}", path=path)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module

    # ------------------------------------------------------------------ building

    def _build(self, entry: Path, job: _BuildJob) -> None:
        """Compile into a private temp dir, write the manifest, rename it to ``entry``."""
        name = self.module_name(job.key)
        tmp = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.dir / "tmp"))
        try:
            src = tmp / f"{name}.c"
            src.write_text(job.source, encoding="utf-8")
            so = tmp / _so_name(job.key)
            started = time.perf_counter()
            try:
                job.compiler.build(src, so, (*job.cflags, f"-DGRAPHC_INIT=PyInit_{name}"), job.libs)
            except CompileError as exc:
                raise self._keep_failed(tmp, name, exc) from None
            manifest = {
                "format": FORMAT,
                "key": job.key,
                "module": name,
                "name_hint": job.name_hint,
                "so": so.name,
                "so_sha256": _sha256_file(so),
                "so_size": so.stat().st_size,
                "source_size": src.stat().st_size,
                "versions": _versions(),
                "compiler": job.compiler.version.splitlines()[0] if job.compiler.version else "",
                "cflags": list(job.cflags),
                "libraries": list(job.libs),
                "created": time.time(),
                "build_seconds": round(time.perf_counter() - started, 4),
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            try:
                os.rename(tmp, entry)
            except OSError:
                if entry_problem(entry, job.key) is not None:  # nobody else published it
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _keep_failed(self, tmp: Path, name: str, exc: CompileError) -> CompileError:
        """Move a failed build to failed/<name>/ and return the error pointing there."""
        kept = self.dir / "failed" / name
        try:
            _mkdir_private(kept.parent)
            self._discard(kept)
            (tmp / "compiler-output.txt").write_text(exc.stderr, encoding="utf-8")
            os.rename(tmp, kept)
        except OSError:
            return exc  # the source stays where the message already says
        message = str(exc).replace(str(tmp), str(kept))
        return type(exc)(message, kept / Path(exc.source_path).name, exc.stderr)

    def _discard(self, path: Path) -> None:
        """Remove ``path`` (an entry or failed build) by renaming it away first."""
        if not os.path.lexists(path):
            return
        trash = Path(tempfile.mkdtemp(prefix="discard-", dir=self.dir / "tmp"))
        try:
            os.rename(path, trash / "old")
        except OSError as exc:
            shutil.rmtree(trash, ignore_errors=True)
            raise CacheError(f"cannot remove the bad cache entry {path}: {exc}") from exc
        shutil.rmtree(trash, ignore_errors=True)

    # ------------------------------------------------------------------ maintenance

    def entries(self) -> list[Entry]:
        """Published entries of this ABI, oldest first."""
        return list_entries(self.dir)

    def clear(self) -> int:
        """Remove every entry (and failed build) of this ABI; return how many entries."""
        with self._memo_lock:
            self._memo.clear()
            self._by_key.clear()
        return clear_dir(self.dir)


def _is_key(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


def _tree_size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def list_entries(abi_dir: Path) -> list[Entry]:
    """Entries found in ``abi_dir`` (a missing directory has none)."""
    try:
        names = sorted(n for n in os.listdir(abi_dir) if _is_key(n))
    except FileNotFoundError:
        return []
    found = []
    for key in names:
        path = abi_dir / key
        problem = entry_problem(path, key)
        try:
            manifest = _read_manifest(path)
        except (OSError, ValueError):
            manifest = {}
        created = manifest.get("created")
        if not isinstance(created, (int, float)):
            created = os.lstat(path).st_mtime
        found.append(
            Entry(
                key=key,
                path=path,
                module=str(manifest.get("module", "?")),
                name_hint=str(manifest.get("name_hint", "")),
                size=_tree_size(path),
                created=float(created),
                problem=problem or None,
            )
        )
    found.sort(key=lambda e: e.created)
    return found


def clear_dir(abi_dir: Path) -> int:
    """Remove the entries and failed builds in ``abi_dir``; return the number of entries."""
    try:
        names = os.listdir(abi_dir)
    except FileNotFoundError:
        return 0
    removed = 0
    for name in names:
        if _is_key(name) or name == "failed":
            shutil.rmtree(abi_dir / name, ignore_errors=True)
            removed += _is_key(name)
    return removed


# --------------------------------------------------------------------------- entry points

_caches: dict[Path, CompileCache] = {}
_caches_lock = threading.Lock()


def get_cache(root: str | os.PathLike[str] | None = None) -> CompileCache:
    """The cache for ``root`` (resolved as in :func:`resolve_root`), one per directory."""
    path = resolve_root(root)
    cache = _caches.get(path)
    if cache is None:
        with _caches_lock:
            cache = _caches.get(path)
            if cache is None:
                cache = _caches[path] = CompileCache(path)
    return cache


def _human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _human_age(seconds: float) -> str:
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{seconds / span:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"


def _cmd_list(root: Path) -> int:
    abi_dir = root / abi_tag()
    entries = list_entries(abi_dir)
    if not entries:
        print(f"no entries in {abi_dir}")
        return 0
    now = time.time()
    print(f"{'module':<24} {'size':>10} {'age':>6}  name / status")
    for e in entries:
        status = f"INVALID: {e.problem}" if e.problem else e.name_hint
        age = _human_age(now - e.created)
        print(f"{e.module:<24} {_human_size(e.size):>10} {age:>6}  {status}")
    total = sum(e.size for e in entries)
    noun = "entry" if len(entries) == 1 else "entries"
    print(f"{len(entries)} {noun}, {_human_size(total)} in {abi_dir}")
    return 0


def _cmd_clear(root: Path) -> int:
    n = clear_dir(root / abi_tag())
    print(f"removed {n} entries from {root / abi_tag()}")
    return 0


def _cmd_purge(root: Path) -> int:
    if not os.path.lexists(root):
        print(f"nothing to purge: {root} does not exist")
        return 0
    if os.path.islink(root):
        raise CacheError(f"{root} is a symbolic link; not purging through it")
    if not (root / TAG).is_file():
        raise CacheError(
            f"not purging {root}: it has no {TAG}, so graphc did not create it; "
            f"use `graphc-cache clear`, or remove it by hand"
        )
    shutil.rmtree(root)
    print(f"removed {root}")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit status 1, not argparse's 2
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def main(argv: Iterable[str] | None = None) -> int:
    """``graphc-cache [--root DIR] {list,clear,purge}``; returns the exit status."""
    parser = _Parser(prog="graphc-cache", description="Inspect or empty graphc's compile cache.")
    parser.add_argument("--root", help="cache root (default: as graphc resolves it)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="entries of this Python/machine, with size and age")
    sub.add_parser("clear", help="remove all entries of this Python/machine")
    sub.add_parser("purge", help="remove the whole cache root (temp dirs and locks too)")
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        root = resolve_root(args.root)
        if args.command != "purge":
            check_root(root)
        return {"list": _cmd_list, "clear": _cmd_clear, "purge": _cmd_purge}[args.command](root)
    except (CacheError, OSError) as exc:
        print(f"graphc-cache: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
