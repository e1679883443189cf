"""Bounded waits in the compile cache: a hanging compiler is stopped with an error naming
its command; a lock held by a stopped process is reported (who, how long, how to break it)
and bypassed by a private build; a cache folder replaced by a file is a clear error."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from answer_module import child_env, variant

import graphc
from graphc.linker.buildlock import describe_holder
from graphc.linker.cache import CacheError, CacheWarning, CompileCache
from graphc.linker.compiler import CompilerUnavailable, CompileTimeout, find_compiler


@pytest.fixture
def hanging_cc(tmp_path: Path, monkeypatch) -> Path:
    """CC that hangs on sources containing HANG_ME and runs the real compiler otherwise."""
    real = shutil.which(os.environ.get("CC") or "cc")
    assert real is not None
    cc = tmp_path / "hang-cc"
    cc.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in *.c) grep -q HANG_ME "$a" && exec sleep 60;; esac; done\n'
        f'exec {real} "$@"\n'
    )
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    return cc


def test_hanging_compiler_times_out_naming_the_command(tmp_path: Path, hanging_cc: Path):
    cache = CompileCache(tmp_path / "root")
    with graphc.config.change_flags(compile_timeout=1.5):
        t0 = time.monotonic()
        with pytest.raises(CompileTimeout, match="compile_timeout") as info:
            cache.load(variant("HANG_ME"))
        assert time.monotonic() - t0 < 30
    assert str(hanging_cc) in str(info.value) and "within 1.5 s" in str(info.value)
    assert cache.load(variant("fine")).answer() == 42  # the cache still works


def test_lock_held_by_a_stopped_process_is_named_then_bypassed(tmp_path: Path):
    root = tmp_path / "root"
    source = variant("stopped holder")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import time
            from graphc.linker.buildlock import BuildLock
            from graphc.linker.cache import CompileCache
            c = CompileCache({str(root)!r})
            lock = BuildLock(c.dir / "locks" / (c.key({source!r}) + ".lock"))
            assert lock.acquire(5)
            print("locked", flush=True)
            time.sleep(120)
            """)],
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        os.kill(holder.pid, signal.SIGSTOP)
        cache = CompileCache(root)
        cache.lock_timeout = 3.0
        lock_path = cache.dir / "locks" / f"{cache.key(source)}.lock"
        said = describe_holder(lock_path)
        assert f"process {holder.pid} for" in said and f"kill {holder.pid}" in said
        t0 = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert cache.load(source).answer() == 42
        assert time.monotonic() - t0 < 30
        texts = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
        assert any("private copy" in t and str(holder.pid) in t for t in texts), texts
        assert not [p for p in (cache.dir / "tmp").iterdir() if p.name.startswith("private-")]
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def test_lock_without_owner_record_is_found_in_proc_locks(tmp_path: Path):
    cache = CompileCache(tmp_path / "root")
    probe = cache.lock("0" * 64)
    probe.acquire()
    try:
        said = describe_holder(Path(probe.lock_file))
    finally:
        probe.release()
    if os.path.exists("/proc/locks"):
        assert f"process {os.getpid()}" in said
    else:
        assert "unknown process" in said


@pytest.mark.parametrize("sub", ["locks", "tmp"])
def test_cache_folder_replaced_by_a_file_is_a_clear_error(tmp_path: Path, sub: str):
    cache = CompileCache(tmp_path / "root")
    folder = cache.dir / sub
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    with pytest.raises(CacheError, match=f"{sub} must be a directory"):
        CompileCache(tmp_path / "root")


def test_compiler_hanging_on_version_is_unavailable_not_a_hang(tmp_path: Path, monkeypatch):
    cc = tmp_path / "mute-cc"
    cc.write_text("#!/bin/sh\nexec sleep 60\n")
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    with graphc.config.change_flags(compile_timeout=1.0):
        t0 = time.monotonic()
        with pytest.raises(CompilerUnavailable, match="did not answer --version within 1 s"):
            find_compiler(tmp_path / "probes")
        assert time.monotonic() - t0 < 30
