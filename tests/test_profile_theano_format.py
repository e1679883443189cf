"""The printed profile parses as Theano's: a parser written to the format of Theano 1.0's
and PyTensor's real output (the Class / Ops / Apply sections as Theano 1.0.5 prints them;
``graphc.ProfileStats`` with Theano's signature) reads back the numbers of the JSON export,
at the default width and at a wide one, with every number whole."""

from __future__ import annotations

import inspect
import io
import json
import re

import numpy as np
import pytest

import graphc
import graphc.tensor as T

# ---------------------------------------------------------------- a parser for Theano's text
CLASS_HEADER = "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <Class name>"
OPS_HEADER = "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <Op name>"
APPLY_HEADER = "<% time> <sum %> <apply time> <time per call> <#call> <id> <Apply name>"
NUM = r"[0-9.]+(?:e[-+][0-9]+)?"
GROUP_ROW = re.compile(
    rf"^\s+(?P<pct>{NUM})%\s+(?P<cum>{NUM})%\s+(?P<time>{NUM})s\s+(?P<per>{NUM})s\s+"
    r"(?P<type>C|Py|C\+Py)\s+(?P<calls>\d+)\s+(?P<n_apply>\d+)\s+(?P<name>\S.*)$"
)
APPLY_ROW = re.compile(
    rf"^\s+(?P<pct>{NUM})%\s+(?P<cum>{NUM})%\s+(?P<time>{NUM})s\s+(?P<per>{NUM})s\s+"
    r"(?P<calls>\d+)\s+(?P<id>\d+)\s+(?P<name>\S.*)$"
)
CALLS = re.compile(rf"^  Time in (?P<n>\d+) calls to Function.__call__: (?P<t>{NUM})s$")


def parse_section(lines: list[str], title: str, header: str, row: re.Pattern) -> list[dict]:
    """Rows of the section ``title``: Theano prints the title, a rule, the header, then one
    line per row until ``   ... (remaining``; lines that are no row (graphc's, PyTensor's
    ``input 0:`` lines) are skipped, as a parser of PyTensor's output must."""
    start = lines.index(title)
    assert set(lines[start + 1]) == {"-"}
    assert lines[start + 2] == header
    rows = []
    for line in lines[start + 3 :]:
        if line.startswith("   ... (remaining"):
            return rows
        m = row.match(line)
        if m:
            rows.append(m.groupdict())
    raise AssertionError(f"no end to section {title}")


# ---------------------------------------------------------------- the program


@pytest.fixture(scope="module")
def profiled():
    x, w = T.dmatrix("x"), T.dvector("w")
    y = T.tanh(T.dot(x, w)) * 2 + T.exp(w).sum()
    f = graphc.function([x, w], [y, (y**2).mean()], profile=True, name="model")
    rng = np.random.default_rng(0)
    xv, wv = rng.random((300, 200)), rng.random(200)
    for _ in range(5):
        f(xv, wv)
    return f.profile


def _summary(stats, **kw) -> list[str]:
    out = io.StringIO()
    stats.summary(file=out, n_apply_to_print=100, n_ops_to_print=100, **kw)
    return out.getvalue().splitlines()


def _close(printed: str, ns: float, total_ns: float | None = None) -> None:
    """A ``%.2e`` second count agrees with nanoseconds to its 3 digits (half a unit in the
    last place: 0.5%)."""
    value = float(printed)
    assert abs(value - ns / 1e9) <= 0.005 * ns / 1e9 + 1e-12, (printed, ns)


@pytest.mark.parametrize("width", [100, 400])
@pytest.mark.parametrize("all_calls", [False, True])
def test_class_ops_apply_parse_back_to_the_json(profiled, width, all_calls):
    doc = json.loads(profiled.to_json())
    (fn,) = doc["functions"]
    lines = _summary(profiled, width=width, all_calls=all_calls)
    assert max(len(line) for line in lines) <= width
    # the global section counts every call (5, by hand), at every setting
    (m,) = [CALLS.match(line) for line in lines if CALLS.match(line)]
    assert int(m["n"]) == fn["calls"] == 5
    assert float(m["t"]) == pytest.approx(fn["call_ns"] / 1e9, rel=1e-6)
    first = 0 if all_calls else 1  # all_calls=False leaves the first call out of the tables
    nodes = {n["position"]: n for n in fn["nodes"]}
    calls = {p: n["calls"] - first * n["first_calls"] for p, n in nodes.items()}
    ns = {p: n["ns_total"] - first * n["first_ns"] for p, n in nodes.items()}
    total = sum(ns.values())

    apply = parse_section(lines, "Apply", APPLY_HEADER, APPLY_ROW)
    assert sorted(int(r["id"]) for r in apply) == sorted(nodes)
    for r in apply:
        p = int(r["id"])
        assert int(r["calls"]) == calls[p] == 5 - first
        _close(r["time"], ns[p])
        _close(r["per"], ns[p] / calls[p])
        assert float(r["pct"]) == pytest.approx(100 * ns[p] / total, abs=0.051)
        if width == 400:
            assert r["name"] == nodes[p]["apply_name"]
    for title, header, key in (("Class", CLASS_HEADER, "op_class"), ("Ops", OPS_HEADER, "op_name")):
        rows = parse_section(lines, title, header, GROUP_ROW)
        groups: dict[str, list[int]] = {}
        for p, n in nodes.items():
            groups.setdefault(n[key], []).append(p)
        assert len(rows) == len(groups)
        by_ns = sorted(groups.items(), key=lambda kv: (-sum(ns[p] for p in kv[1]), kv[0]))
        for r, (label, members) in zip(rows, by_ns):
            _close(r["time"], sum(ns[p] for p in members))
            assert int(r["calls"]) == sum(calls[p] for p in members)
            assert int(r["n_apply"]) == len(members)
            if width == 400:
                assert r["name"] == label
            elif key == "op_class":  # a cut class name keeps its last dotted part whole
                assert r["name"].endswith("." + label.rsplit(".", 1)[-1])
            else:  # an Op name cut in the middle keeps both ends
                assert r["name"][:5] == label[:5] and r["name"][-5:] == label[-5:]


def test_profile_stats_has_theanos_signature_at_the_top_level():
    sig = inspect.signature(graphc.ProfileStats)
    assert [(p.name, p.default) for p in sig.parameters.values()] == [
        ("atexit_print", True), ("flag_time_thunks", None), ("gpu_checks", True),
        ("kwargs", inspect.Parameter.empty)]  # fmt: skip
    assert sig.parameters["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
    quiet = graphc.ProfileStats(False, message="shared")
    assert quiet.atexit_print is False and quiet.name == "shared" and quiet.functions == []
    x = T.dvector("x")
    f = graphc.function([x], T.exp(x), profile=quiet)
    g = graphc.function([x], T.log(x), profile=quiet)
    f(np.ones(3))
    g(np.ones(3))
    assert f.profile is quiet and g.profile is quiet
    quiet.refresh()
    assert [fp.calls for fp in quiet.functions] == [1, 1]
    assert graphc.ProfileStats is graphc.compile.ProfileStats is graphc.profile.ProfileStats


@pytest.mark.parametrize("width", [80, 100])
def test_no_number_is_cut_in_a_two_function_profile_with_memory(width):
    """The "Sum of all profiles" case: two functions, memory on, every row shown. Every Apply
    row parses (its numbers whole) and agrees with the JSON; the memory total is the hand
    count: (x + y) * z unfused, two 1000-float64 outputs, and exp(x), one: 24000 bytes."""
    x, y, z = T.dvectors("xyz")
    mode = graphc.Mode().excluding("fusion", "inplace")
    with graphc.config.change_flags(profile_memory=True):
        stats = graphc.ProfileStats(False, message="Sum of all(2) printed profiles at exit")
        f = graphc.function([x, y, z], (x + y) * z, mode=mode, profile=stats, name="f" * 60)
        g = graphc.function([x], T.exp(x), mode=mode, profile=stats, name="g" * 60)
    v = np.ones(1000)
    for _ in range(3):
        f(v, v, v)
        g(v)
    out = io.StringIO()
    stats.summary(file=out, n_apply_to_print=100, n_ops_to_print=100, width=width,
                  min_memory_size=10**6, all_calls=True)  # fmt: skip
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width
    doc = json.loads(stats.to_json())
    ns = sorted(n["ns_total"] for fn in doc["functions"] for n in fn["nodes"])
    rows = parse_section(lines, "Apply", APPLY_HEADER, APPLY_ROW)
    assert len(rows) == 3 and sorted(int(r["calls"]) for r in rows) == [3, 3, 3]
    for r, want in zip(sorted(rows, key=lambda r: float(r["time"])), ns):
        _close(r["time"], want)
    text = " ".join(" ".join(lines).split())
    assert "remaining 3 Apply account for 24000B/24000B" in text
