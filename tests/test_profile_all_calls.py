"""Theano's counts by default: a function called k times shows ``<#call>`` k per Apply node
(k times its applies per Class and Op row) and its tables' times add up to the JSON export's
totals, the first call included; the first call is still reported on its own line."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

import graphc
import graphc.tensor as T

NUM = r"[0-9.]+(?:e[-+][0-9]+)?"
GROUP_ROW = re.compile(
    rf"^\s+{NUM}%\s+{NUM}%\s+(?P<time>{NUM})s\s+{NUM}s\s+(?:C|Py|C\+Py)\s+(?P<calls>\d+)\s+"
    r"(?P<n_apply>\d+)\s+\S"
)
APPLY_ROW = re.compile(
    rf"^\s+{NUM}%\s+{NUM}%\s+(?P<time>{NUM})s\s+{NUM}s\s+(?P<calls>\d+)\s+\d+\s+\S"
)


def _rows(lines: list[str], title: str, row: re.Pattern) -> list[dict]:
    """The rows of a section, as Theano printed it: title, rule, header, rows, remaining."""
    start = lines.index(title)
    rows = []
    for line in lines[start + 3 :]:
        if line.startswith("   ... (remaining"):
            return rows
        m = row.match(line)
        if m:
            rows.append(m.groupdict())
    raise AssertionError(f"no end to section {title}")


def _profiled(k: int):
    x, w = T.dmatrix("x"), T.dvector("w")
    y = T.tanh(T.dot(x, w)) * 2 + T.exp(w).sum()
    f = graphc.function([x, w], [y, (y**2).mean(), T.exp(w)], profile=True, name="k_calls")
    rng = np.random.default_rng(0)
    xv, wv = rng.random((50, 40)), rng.random(40)
    for _ in range(k):
        f(xv, wv)
    return f.profile


@pytest.mark.parametrize("k", [1, 2, 5])
def test_tables_count_every_call_by_default(k):
    stats = _profiled(k)
    (fn,) = json.loads(stats.to_json())["functions"]
    assert fn["calls"] == k
    out = io.StringIO()
    stats.summary(file=out, n_apply_to_print=100, n_ops_to_print=100, width=200)
    lines = out.getvalue().splitlines()
    assert f"  Time in {k} calls to Function.__call__: " in out.getvalue()
    firsts = [ln for ln in lines if ln.startswith("  First call: ")]
    if k == 1:
        assert firsts == []  # the one call is the first: nothing to report apart
    else:
        (first,) = firsts
        assert first.endswith("; the tables include it")
    apply = _rows(lines, "Apply", APPLY_ROW)
    assert len(apply) == len(fn["nodes"]) > 3
    assert [int(r["calls"]) for r in apply] == [k] * len(apply)
    for title in ("Class", "Ops"):
        rows = _rows(lines, title, GROUP_ROW)
        assert rows and all(int(r["calls"]) == k * int(r["n_apply"]) for r in rows)
        assert sum(int(r["n_apply"]) for r in rows) == len(fn["nodes"])
    # each printed time has 3 digits: the sums agree with the JSON's to half a unit each
    total_ns = sum(n["ns_total"] for n in fn["nodes"])
    assert sum(n["first_ns"] for n in fn["nodes"]) > 0  # the first call is in the total
    for title, row in (("Apply", APPLY_ROW), ("Class", GROUP_ROW), ("Ops", GROUP_ROW)):
        printed = sum(float(r["time"]) for r in _rows(lines, title, row))
        assert printed == pytest.approx(total_ns / 1e9, rel=0.005), title


def test_all_calls_false_still_gives_the_steady_state():
    k = 5
    stats = _profiled(k)
    (fn,) = json.loads(stats.to_json())["functions"]
    out = io.StringIO()
    stats.summary(file=out, n_apply_to_print=100, n_ops_to_print=100, width=200,
                  all_calls=False)  # fmt: skip
    lines = out.getvalue().splitlines()
    assert f"  Time in {k} calls to Function.__call__: " in out.getvalue()
    assert any(ln.endswith(f"; tables: the other {k - 1} calls") for ln in lines)
    apply = _rows(lines, "Apply", APPLY_ROW)
    assert [int(r["calls"]) for r in apply] == [k - 1] * len(fn["nodes"])
    steady_ns = sum(n["ns_total"] - n["first_ns"] for n in fn["nodes"])
    printed = sum(float(r["time"]) for r in apply)
    assert printed == pytest.approx(steady_ns / 1e9, rel=0.005)


def test_flag_default_is_every_call():
    assert graphc.config.profiling__all_calls is True
    out = io.StringIO()
    with graphc.config.change_flags(profiling__all_calls=False):
        _profiled(3).summary(file=out, n_apply_to_print=100, width=200)
    assert "; tables: the other 2 calls" in out.getvalue()
