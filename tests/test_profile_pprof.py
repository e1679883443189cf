"""The pprof export, read back with a protobuf wire-format reader written here from the
format's specification (varints, length-delimited fields, packed repeated ints) and
profile.proto's field numbers: the samples' times must be the profile's node times."""

from __future__ import annotations

import gzip
from collections import defaultdict

from html_report_cases import real_profile
from profile_factory import four_node_function

from graphc.profile import ProfileStats
from graphc.profile.cli import main
from graphc.profile.data.steady import steady_state
from graphc.profile.render.pprof import pprof_bytes


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def fields(buf: bytes) -> dict[int, list]:
    """Field number -> values (ints, or bytes for length-delimited ones)."""
    out: dict[int, list] = defaultdict(list)
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i : i + n], i + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out[field].append(value)
    return out


def packed(data: bytes) -> list[int]:
    values, i = [], 0
    while i < len(data):
        v, i = _varint(data, i)
        values.append(v)
    return values


def decode(blob: bytes) -> tuple[list[str], list[tuple[list[str], list[int]]]]:
    """The sample types and the samples as (stack of function names, values)."""
    prof = fields(gzip.decompress(blob))
    strings = [s.decode() for s in prof[6]]
    assert strings[0] == ""
    names = {}
    for fn in prof[5]:
        f = fields(fn)
        names[f[1][0]] = strings[f[2][0]]
    loc_fn = {}
    for loc in prof[4]:
        f = fields(loc)
        loc_fn[f[1][0]] = fields(f[4][0])[1][0]
    types = [strings[fields(t)[1][0]] for t in prof[1]]
    samples = []
    for s in prof[2]:
        f = fields(s)
        stack = [names[loc_fn[loc]] for loc in packed(f[1][0])]
        samples.append((stack, packed(f[2][0])))
    return types, samples


def test_samples_hold_every_nodes_calls_and_time():
    fp = four_node_function()
    types, samples = decode(pprof_bytes(ProfileStats([fp])))
    assert types == ["calls", "time"]
    got = {stack[0]: values for stack, values in samples}
    assert got == {n.apply_name: [n.calls, n.ns_total] for n in fp.nodes}
    assert all(stack[1:] == ["function f"] for stack, _ in samples)


def test_loop_bodies_nest_under_their_loop_and_add_up(tmp_path):
    stats = real_profile(steps=3)
    path = tmp_path / "p.json"
    stats.save(path)
    assert main(["pprof", str(path), str(tmp_path / "out.pb.gz")]) == 0
    _, samples = decode((tmp_path / "out.pb.gz").read_bytes())
    for fp in stats.functions:  # every call, the first too (the default)
        loops = [n for n in fp.nodes if n.inner is not None and n.calls]
        for loop in loops:
            under = [v[1] for stack, v in samples if loop.apply_name in stack]
            assert sum(under) == loop.ns_total  # the loop's inclusive time
            body = sorted(s[0] for s, _ in samples if len(s) > 1 and s[1] == loop.apply_name)
            assert body == sorted(n.apply_name for n in loop.inner.nodes if n.calls)
    total = sum(v[1] for _, v in samples)
    assert total == sum(n.ns_total for f in stats.functions for n in f.nodes)
    _, samples = decode(pprof_bytes(stats, all_calls=False))  # the steady state
    total = sum(v[1] for _, v in samples)
    steady = sum(n.ns_total for f in map(steady_state, stats.functions) for n in f.nodes)
    assert total == steady < sum(n.ns_total for f in stats.functions for n in f.nodes)


def frame_lines(blob: bytes) -> dict[str, tuple[str, int]]:
    """Function name -> (file name, line) of each function in the profile."""
    prof = fields(gzip.decompress(blob))
    strings = [s.decode() for s in prof[6]]
    out = {}
    for fn in prof[5]:
        f = fields(fn)
        out[strings[f[2][0]]] = (strings[f[4][0]] if f[4] else "", f[5][0] if f[5] else 0)
    return out


def test_a_call_chain_origin_gives_its_innermost_line():
    fp = four_node_function()
    fp.nodes[0].origins = ["layers.py:4 <- model.py:20 <- train.py:7"]
    lines = frame_lines(pprof_bytes(ProfileStats([fp])))
    assert lines[fp.nodes[0].apply_name] == ("layers.py", 4)
