"""The OpenMP benchmark's idle rows: rounds in which the second core was not free (the
triad on all threads no faster than on one) are left out and taken again."""

import itertools
import types

import pytest

import benchmarks.common as common
from benchmarks.bench_openmp import idle_samples


def _fake_clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(common, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def takes(seconds):
        def call():
            now[0] += seconds

        return call

    return takes


def test_rounds_without_a_free_core_are_taken_again(monkeypatch):
    takes = _fake_clock(monkeypatch)
    calls = itertools.count()
    free = (True, False, True)  # round by round, again and again

    def triad_all():  # 2x the one-thread triad where the core is free, 1x where not
        takes(0.5 if free[next(calls) // 5 % 3] else 1.0)()  # 5 calls a round

    cands = {"serial": takes(1.0), "openmp": takes(0.6), "triad": takes(1.0),
             "triad openmp": triad_all}  # fmt: skip
    kept, left = idle_samples(cands, 6, warm_up=False)
    assert len(kept["triad"]) == 6 and len(left["triad"]) == 3
    assert kept["triad openmp"] == pytest.approx([0.5] * 6)  # the rounds with a free core
    assert left["triad openmp"] == pytest.approx([1.0] * 3)
    assert len(kept["openmp"]) == 6 and len(left["openmp"]) == 3


def test_a_machine_never_free_still_gives_its_samples(monkeypatch):
    takes = _fake_clock(monkeypatch)
    cands = {"serial": takes(1.0), "openmp": takes(1.0), "triad": takes(1.0),
             "triad openmp": takes(1.0)}  # fmt: skip
    kept, left = idle_samples(cands, 5, warm_up=False)
    assert len(kept["triad"]) == 5 and len(left["triad"]) == 10  # at most 2 x repeats retaken
