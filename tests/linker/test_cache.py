"""The compile cache: keys, memo, disk hits, concurrency, corruption, safety, CLI."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from answer_module import SRC, child_env, variant
from filelock import Timeout

import graphc.linker.cache as cache_mod
from graphc.linker import build_env
from graphc.linker.cache import (
    CacheError,
    CacheWarning,
    CompileCache,
    CompileError,
    CompilerUnavailable,
    compiler_available,
    get_cache,
    main,
    resolve_root,
)


def run_child(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def entry_dirs(root: Path) -> list[Path]:
    abi = root / cache_mod.abi_tag()
    return [p for p in abi.iterdir() if len(p.name) == 64]


def only_entry(root: Path) -> Path:
    (entry,) = entry_dirs(root)
    return entry


def cache_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


@pytest.fixture
def logging_cc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CC is a wrapper that logs each invocation, then runs the real compiler."""
    real = shutil.which(os.environ.get("CC") or "cc")
    assert real, "a C compiler is needed for these tests"
    log = tmp_path / "cc.log"
    log.write_text("")
    wrapper = tmp_path / "logcc"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    return log


# --------------------------------------------------------------------------- loading


def test_load_memo_then_disk_hit_in_new_process(tmp_path: Path, logging_cc: Path):
    root = tmp_path / "root"
    cache = CompileCache(root)
    mod = cache.load(SRC, name_hint="answer")
    assert mod.answer() == 42
    assert cache.stats.compiled == 1
    assert any("-DGRAPHC_INIT=PyInit_" in line for line in logging_cc.read_text().splitlines())
    assert (root / cache_mod.abi_tag()).stat().st_mode & 0o777 == 0o700
    assert only_entry(root).stat().st_mode & 0o777 == 0o700

    # second load in-process: the very same module object, from the memo, fast
    assert cache.load(SRC) is mod
    assert cache.stats.memo_hits == 1
    t0 = time.perf_counter()
    for _ in range(1000):
        cache.load(SRC)
    per_load = (time.perf_counter() - t0) / 1000
    assert per_load < 50e-6, f"memo hit took {per_load * 1e6:.1f} us"

    # a new process with another hash seed: same key, loaded from disk, no compiler run
    log_before = logging_cc.read_text()
    key = cache.key(SRC)
    out = run_child(
        f"""
        import json
        from graphc.linker.cache import CompileCache
        c = CompileCache({str(root)!r})
        m = c.load({SRC!r})
        print(json.dumps({{"key": c.key({SRC!r}), "answer": m.answer(),
                          "disk": c.stats.disk_hits, "compiled": c.stats.compiled}}))
        """,
        PYTHONHASHSEED="12345",
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"key": key, "answer": 42, "disk": 1, "compiled": 0}
    assert logging_cc.read_text() == log_before, "the child ran the compiler"


def test_key_is_stable_across_hash_seeds_and_tracks_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    cache = CompileCache(tmp_path / "root")
    code = f"""
        from graphc.linker.cache import CompileCache
        print(CompileCache({str(tmp_path / "root")!r}).key({SRC!r}, extra_cflags=["-g"]))
        """
    keys = {run_child(code, PYTHONHASHSEED=seed).stdout.strip() for seed in ("1", "2")}
    assert keys == {cache.key(SRC, extra_cflags=["-g"])}
    base = cache.key(SRC)
    assert cache.key(SRC, extra_cflags=["-g"]) != base
    assert cache.key(variant("x")) != base
    newer = {**cache_mod._versions(), "graphc": "999.0"}
    monkeypatch.setattr(build_env, "_versions_memo", newer)
    assert cache.key(SRC) != base
    monkeypatch.setattr(build_env, "_versions_memo", {**newer, "numpy": "9.9"})
    assert cache.key(SRC) != base


def test_libraries_and_flags_reach_the_compiler(tmp_path: Path, logging_cc: Path):
    cache = CompileCache(tmp_path / "root")
    cache.load(variant("flags"), extra_cflags=["-DGRAPHC_TEST_FLAG=1"], libraries=["m"])
    (cmd,) = [c for c in logging_cc.read_text().splitlines() if "GRAPHC_INIT" in c]
    for flag in (*cache_mod.find_compiler().default_cflags, "-DGRAPHC_TEST_FLAG=1", "-lm"):
        assert flag in cmd.split()
    manifest = json.loads((only_entry(tmp_path / "root") / "manifest.json").read_text())
    assert manifest["libraries"][0] == "m" and manifest["libraries"].count("m") == 1


# --------------------------------------------------------------------------- concurrency


def _build_in_child(root: str, source: str) -> tuple[int, int]:
    cache = CompileCache(root)
    return cache.load(source).answer(), cache.stats.compiled


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_many_processes_build_one_entry(tmp_path: Path, method: str):
    root = tmp_path / "root"
    source = variant(f"concurrent {method} {tmp_path}")
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(8) as pool:
        results = pool.starmap(_build_in_child, [(str(root), source)] * 8)
    assert [answer for answer, _ in results] == [42] * 8
    assert sum(compiled for _, compiled in results) == 1
    assert len(entry_dirs(root)) == 1
    assert list((root / cache_mod.abi_tag() / "tmp").iterdir()) == []


def test_killed_lock_holder_does_not_block(tmp_path: Path):
    root = tmp_path / "root"
    source = variant("killed holder")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import time
                from graphc.linker.cache import CompileCache
                c = CompileCache({str(root)!r})
                held = c.lock(c.key({source!r}))
                held.acquire()
                print("locked", flush=True)
                time.sleep(120)
                """
            ),
        ],
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        cache = CompileCache(root)
        probe = cache.lock(cache.key(source))
        with pytest.raises(Timeout):  # the child really holds it
            probe.acquire(timeout=0.2)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    cache.lock_timeout = 20
    t0 = time.perf_counter()
    assert cache.load(source).answer() == 42
    assert time.perf_counter() - t0 < 10
    assert cache.stats.compiled == 1


# --------------------------------------------------------------------------- bad entries


def _truncate(entry: Path) -> None:
    so = next(entry.glob("*.so"))
    data = so.read_bytes()
    tmp = entry / "cut"
    tmp.write_bytes(data[: len(data) // 2])
    os.replace(tmp, so)  # a new inode: the loaded (mapped) one stays intact


def _flip_byte(entry: Path) -> None:
    so = next(entry.glob("*.so"))
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tmp = entry / "flip"
    tmp.write_bytes(bytes(data))
    os.replace(tmp, so)


def _delete(entry: Path) -> None:
    next(entry.glob("*.so")).unlink()


def _garble(entry: Path) -> None:
    (entry / "manifest.json").write_text('{"format": 1, "key": ')


def _other_versions(entry: Path) -> None:
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["versions"]["numpy"] = "0.1"
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _foreign_owner(entry: Path) -> None:
    os.chown(entry, os.getuid() + 4242, -1)


def _foreign_owner_patched(entry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # without root, ownership cannot be given away: pretend to be another user instead
    fake_uid = os.getuid() + 4242
    monkeypatch.setattr(cache_mod.os, "getuid", lambda: fake_uid)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (_truncate, "truncated"),
        (_flip_byte, "SHA-256"),
        (_delete, "missing"),
        (_garble, "garbled"),
        (_other_versions, "other versions"),
        (_foreign_owner, "owned by uid"),
    ],
)
def test_bad_entry_is_rebuilt_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage, reason: str
):
    root = tmp_path / "root"
    CompileCache(root).load(SRC)
    fresh = CompileCache(root)  # no memo: it has to look at the disk
    if damage is _foreign_owner and os.geteuid() != 0:
        _foreign_owner_patched(only_entry(root), monkeypatch)
        monkeypatch.setattr(cache_mod, "check_root", lambda root: None)
        # rebuilding needs a root the "other user" can write: that is this tmp tree
    else:
        damage(only_entry(root))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert fresh.load(SRC).answer() == 42
    messages = cache_warnings(record)
    assert len(messages) == 1, messages
    assert reason in messages[0] and "rebuilding" in messages[0]
    assert fresh.stats.compiled == 1
    monkeypatch.undo()
    again = CompileCache(root)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        again.load(SRC)
    assert cache_warnings(record) == []
    assert again.stats.disk_hits == 1 and again.stats.compiled == 0
    assert len(entry_dirs(root)) == 1


# --------------------------------------------------------------------------- errors


def test_compile_error_keeps_the_source(tmp_path: Path):
    bad = SRC.replace("return PyLong_FromLong(42);", "return PyLong_FromLong(42) +;")
    cache = CompileCache(tmp_path / "root")
    with pytest.raises(CompileError) as info:
        cache.load(bad)
    err = info.value
    kept = Path(err.source_path)
    assert kept.is_file() and kept.read_text() == bad
    assert "error" in str(err) and str(kept) in str(err)
    assert "expected expression" in str(err) or "error:" in err.stderr
    assert entry_dirs(tmp_path / "root") == []


def test_missing_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert compiler_available()
    monkeypatch.setenv("CC", "/nonexistent/cc -O2")
    assert not compiler_available()
    with pytest.raises(CompilerUnavailable, match="/nonexistent/cc"):
        CompileCache(tmp_path / "root").load(variant("no compiler"))


# --------------------------------------------------------------------------- the root


def test_root_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from graphc.flags import config

    monkeypatch.delenv("GRAPHC_COMPILEDIR", raising=False)
    with config.change_flags(compiledir=str(tmp_path / "cfg")):
        assert resolve_root() == tmp_path / "cfg"
        monkeypatch.setenv("GRAPHC_COMPILEDIR", str(tmp_path / "env"))
        assert resolve_root() == tmp_path / "env"
        assert resolve_root(tmp_path / "arg") == tmp_path / "arg"
        assert get_cache() is get_cache(tmp_path / "env")
        assert get_cache().root == tmp_path / "env"
    with config.change_flags(compiledir=""):
        monkeypatch.delenv("GRAPHC_COMPILEDIR")
        import platformdirs

        assert resolve_root() == Path(platformdirs.user_cache_dir("graphc")).absolute()


def test_new_root_is_private(tmp_path: Path):
    root = tmp_path / "a" / "b"
    CompileCache(root)
    assert root.stat().st_mode & 0o777 == 0o700
    assert (root / cache_mod.TAG).is_file()
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    CompileCache(empty)
    assert (empty / cache_mod.TAG).is_file()
    used = tmp_path / "used"
    used.mkdir()
    (used / "other.txt").write_text("")
    CompileCache(used)
    assert not (used / cache_mod.TAG).exists()


def test_symlink_root_is_refused(tmp_path: Path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(CacheError, match="symbolic link") as info:
        CompileCache(link)
    assert str(link) in str(info.value)


@pytest.mark.parametrize("mode, who", [(0o770, "group"), (0o707, "others"), (0o777, "group")])
def test_shared_writable_root_is_refused(tmp_path: Path, mode: int, who: str):
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(mode)
    with pytest.raises(CacheError, match=f"writable by {who}") as info:
        CompileCache(root)
    assert str(root) in str(info.value) and "chmod 700" in str(info.value)


def test_unwritable_root_falls_back_to_private_tempdir(tmp_path: Path):
    root = tmp_path / "readonly"
    root.mkdir()
    root.chmod(0o500)
    if cache_mod._unwritable(root) is None:
        # running as root: mode bits do not stop us, so use a directory no one can
        # create files in (procfs) to exercise the same code path for real
        root = Path("/proc")
        assert cache_mod._unwritable(root) is not None
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cache = CompileCache(root)
    messages = cache_warnings(record)
    assert len(messages) == 1 and "not writable" in messages[0] and str(root) in messages[0]
    assert cache.root != root and cache.root.stat().st_mode & 0o777 == 0o700
    assert cache.load(variant("fallback")).answer() == 42
    assert entry_dirs(cache.root)


# --------------------------------------------------------------------------- CLI


def test_cli_list_clear_purge(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    root = tmp_path / "root"
    cache = CompileCache(root)
    names = {cache.load(variant(t), name_hint=f"hint-{t}").__spec__.name for t in ("a", "b")}

    assert main(["--root", str(root), "list"]) == 0
    out = capsys.readouterr().out
    assert all(n in out for n in names) and "hint-a" in out and "2 entries" in out

    _garble(entry_dirs(root)[0])
    assert main(["--root", str(root), "list"]) == 0
    assert "INVALID" in capsys.readouterr().out

    assert main(["--root", str(root), "clear"]) == 0
    assert entry_dirs(root) == []
    assert main(["--root", str(root), "list"]) == 0
    assert "no entries" in capsys.readouterr().out

    assert main(["--root", str(root), "purge"]) == 0
    assert not root.exists()
    assert main(["--root", str(root), "purge"]) == 0  # nothing left: still fine


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    foreign = tmp_path / "not-a-cache"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    assert main(["--root", str(foreign), "purge"]) == 1
    assert (foreign / "precious.txt").exists()
    assert "CACHEDIR.TAG" in capsys.readouterr().err
    assert main(["bogus"]) == 1
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert main(["--root", str(shared), "list"]) == 1
    assert "writable by" in capsys.readouterr().err


def test_cli_runs_as_module(tmp_path: Path):
    root = tmp_path / "root"
    CompileCache(root).load(variant("module cli"))
    proc = subprocess.run(
        [sys.executable, "-m", "graphc.linker.cache", "--root", str(root), "list"],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 entry," in proc.stdout
    mode = stat.S_IMODE(root.stat().st_mode)
    assert mode == 0o700
