"""The profile in pprof's format (``profile.proto``, gzip-compressed), for the tools of
continuous profiling (``go tool pprof``, Pyroscope, Parca...).

Each Apply node is a sample whose stack is the node, then (for a loop body's node) the
loop nodes around it, then the compiled function; its values are its calls and its time in
nanoseconds (a loop node's own sample holds only its time outside its body's nodes, so
every stack's total is the node's inclusive time). A node's frame names its first source
line. The encoder writes the protobuf wire format directly.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Sequence
from typing import Any

from graphc.flags import config
from graphc.profile.data.model import FunctionProfile, NodeRecord
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData, function_profiles
from graphc.profile.data.steady import steady_state
from graphc.profile.render.base import Renderer
from graphc.profile.summaries.sampling import scaled


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, n: int) -> bytes:
    return _key(field, 0) + _varint(n) if n else b""


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def _packed(field: int, values: Sequence[int]) -> bytes:
    return _bytes(field, b"".join(_varint(v) for v in values)) if values else b""


class _Builder:
    """String table, functions and locations, each frame interned once."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        self.frames: dict[tuple[str, str, int], int] = {}
        self.functions: list[bytes] = []
        self.locations: list[bytes] = []
        self.samples: list[bytes] = []

    def s(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings))

    def frame(self, name: str, origin: str = "") -> int:
        innermost = origin.split(" <- ", 1)[0]  # a call chain "a.py:4 <- b.py:20"
        path, _, line = innermost.rpartition(":") if ":" in innermost else (innermost, "", "0")
        number = int(line) if line.isdigit() else 0
        key = (name, path, number)
        if key not in self.frames:
            fid = len(self.frames) + 1
            self.frames[key] = fid
            fn = _int(1, fid) + _int(2, self.s(name)) + _int(3, self.s(name))
            self.functions.append(fn + _int(4, self.s(path)) + _int(5, number))
            line_msg = _int(1, fid) + _int(2, number)
            self.locations.append(_int(1, fid) + _bytes(4, line_msg))
        return self.frames[key]

    def sample(self, stack: Sequence[int], calls: int, ns: int) -> None:
        self.samples.append(_packed(1, stack) + _packed(2, [calls, ns]))


def _node_frame(b: _Builder, node: NodeRecord) -> int:
    return b.frame(node.apply_name, node.origins[0] if node.origins else "")


def _add(b: _Builder, fp: FunctionProfile, outer: list[int]) -> None:
    for node in fp.nodes:
        if not node.calls:
            continue
        stack = [_node_frame(b, node), *outer]
        own = node.ns_total
        if node.inner is not None:
            own -= sum(n.ns_total for n in node.inner.nodes)
            _add(b, node.inner, stack)
        b.sample(stack, node.calls, max(own, 0))


def pprof_bytes(stats: Any, all_calls: bool | None = None) -> bytes:
    """The gzip-compressed ``profile.proto`` message of ``stats`` (sampled profiles scaled
    up; every call counted, the first calls left out only when ``all_calls`` is false;
    None: the ``profiling__all_calls`` flag)."""
    if all_calls is None:
        all_calls = config.profiling__all_calls
    b = _Builder()
    fps = function_profiles(stats)
    for fp in fps:
        fp = scaled(fp if all_calls else steady_state(fp))
        _add(b, fp, [b.frame(f"function {fp.name}")])
    types = [(b.s("calls"), b.s("count")), (b.s("time"), b.s("nanoseconds"))]
    msg = b"".join(_bytes(1, _int(1, t) + _int(2, u)) for t, u in types)
    msg += b"".join(_bytes(2, s) for s in b.samples)
    msg += b"".join(_bytes(4, loc) for loc in b.locations)
    msg += b"".join(_bytes(5, fn) for fn in b.functions)
    msg += b"".join(_bytes(6, s.encode("utf-8")) for s in b.strings)
    msg += _int(9, time.time_ns())
    msg += _int(10, sum(f.vm_ns for f in fps))
    msg += _int(14, types[1][0])  # time is the default sample type
    return gzip.compress(msg, mtime=0)


class PprofRenderer(Renderer):
    """pprof's gzipped ``profile.proto``: one sample per Apply node."""

    name = "pprof"
    extension = ".pb.gz"
    description = "pprof profile (gzipped profile.proto), one sample per Apply node"
    output_is_binary = True
    command = "pprof"

    def render(self, stats: ProfileData, options: SummaryOptions) -> bytes:
        return pprof_bytes(stats, options.all_calls)
