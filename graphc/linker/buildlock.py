"""The inter-process lock of one compile-cache build, and who holds it.

A holder records its pid, host and start time next to the lock (``<key>.lock.owner``), so a
process left waiting can say which process holds the lock, for how long, and how to break
it. Without a record (an older holder), the holder is looked up in ``/proc/locks``.
A wait is bounded: the caller builds a private copy when it gives up.
"""

from __future__ import annotations

import json
import os
import socket
import time
import warnings
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["BuildLock", "describe_holder"]

_POLL_SECONDS = 0.5  # how often a waiter retries
_NOTICE_AFTER = 5.0  # seconds of waiting before a waiter says why it waits


class BuildLock:
    """``acquire(wait, warn)`` -> True once held, False after ``wait`` seconds; ``release()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.owner_path = path.with_name(path.name + ".owner")
        self._lock = FileLock(str(path))

    def acquire(self, wait: float, warn: type[Warning] = RuntimeWarning) -> bool:
        """Wait up to ``wait`` seconds; after a few seconds, warn once naming the holder."""
        deadline = time.monotonic() + max(0.0, wait)
        started, noticed = time.monotonic(), False
        while True:
            remaining = deadline - time.monotonic()
            try:
                self._lock.acquire(timeout=max(0.0, min(_POLL_SECONDS, remaining)))
            except Timeout:
                if time.monotonic() >= deadline:
                    return False
                if not noticed and time.monotonic() - started >= min(_NOTICE_AFTER, wait / 2):
                    noticed = True
                    warnings.warn(
                        warn(
                            f"waiting for the compile lock {self.path}: "
                            f"{describe_holder(self.path)}; a private copy is built after "
                            f"{wait:g} s (graphc.config.compile_lock_wait)"
                        ),
                        stacklevel=4,
                    )
                continue
            self._record_owner()
            return True

    def release(self) -> None:
        try:
            self.owner_path.unlink()
        except OSError:
            pass
        self._lock.release()

    def _record_owner(self) -> None:
        record = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        tmp = self.owner_path.with_name(f"{self.owner_path.name}.{os.getpid()}")
        try:
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, self.owner_path)
        except OSError:
            pass  # the record only improves messages


def describe_holder(path: Path) -> str:
    """Which process holds the lock at ``path``, since when, and how to break the lock."""
    pid, host, since = _owner_record(path)
    if pid is None:
        pid = _proc_locks_holder(path)
    if pid is None:
        who = "held by an unknown process"
        fix = f"if no graphc process is compiling, delete {path}"
    else:
        where = "" if host in (None, socket.gethostname()) else f" on host {host}"
        who = f"held by process {pid}{where}"
        if since is not None:
            who += f" for {max(0.0, time.time() - since):.0f} s"
        fix = f"if that process is stopped or hung, end it (kill {pid}) or delete {path}"
    return f"{who}; {fix}"


def _owner_record(path: Path) -> tuple[int | None, str | None, float | None]:
    try:
        rec = json.loads(path.with_name(path.name + ".owner").read_text(encoding="utf-8"))
        return int(rec["pid"]), str(rec.get("host")), float(rec["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None, None


def _proc_locks_holder(path: Path) -> int | None:
    """The pid holding a flock on ``path`` according to Linux's ``/proc/locks``, or None."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        parts = line.split()
        if "->" in parts:  # a waiter, not the holder
            continue
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == want:
            try:
                return int(parts[4])
            except ValueError:
                return None
    return None
