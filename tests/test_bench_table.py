"""The README's benchmark table is rendered from a run's JSON: each number in it is the
run's, and the verdict column is graphc over the fastest peer present."""

from __future__ import annotations

import statistics
import threading
import time

import numpy as np
import pytest

from benchmarks.bench_vecmath import largest_errors
from benchmarks.common import cores_busy, interleaved_samples, round_ratios
from benchmarks.machine import describe, header
from benchmarks.table import END, START, render, replace_block, row


def _result(times, spread=None, note="", unit="ms"):
    return {"workload": "w", "unit": unit, "times": times, "spread": spread or {}, "note": note}


def test_the_verdict_is_graphc_over_the_fastest_peer_present():
    r = _result({"graphc": 3e-3, "graphc openmp": 1e-3, "numpy": 6e-3, "jax": 2e-3,
                 "triad": 1e-3}, {"graphc": 0.05})  # fmt: skip
    cells = [c.strip() for c in row(r).split("|")[1:-1]]
    assert cells[1] == "graphc: 3 ms (IQR 5%); graphc openmp: 1 ms"
    assert cells[2:6] == ["6 ms", "-", "2 ms", "-"]
    assert cells[6] == "triad: 1 ms"
    assert cells[7] == "**1.50x**"  # 3 ms over JAX's 2 ms, not over the triad's 1 ms


def test_a_row_with_accuracy_names_each_candidates_largest_errors():
    accuracy = {"graphc": (0.5, 1.25), "jax": [4497252396510330.5, 6.5]}  # JSON: lists
    r = {**_result({"graphc": 2e-3, "jax": 1e-3}), "accuracy": accuracy}
    assert row(r).split("|")[-2].strip() == (
        "**2.00x** (largest error in ulps, exp / tanh: graphc 0.5 / 1.25, jax 4.5e+15 / 6.5)"
    )


def test_a_row_with_cores_names_each_candidates_cpu_over_wall_time():
    cores = {"graphc": 1.0, "jax": 1.874, "triad openmp": 2.0}
    r = {**_result({"graphc": 2e-3, "jax": 1e-3, "triad openmp": 5e-4}), "cores": cores}
    assert row(r).split("|")[-2].strip() == (
        "**2.00x** (cores busy (CPU time / wall time): graphc 1.00, jax 1.87)"
    )


def test_a_row_with_per_round_ratios_names_each_peers_median_and_quartiles():
    ratios = {"jax": [1.05, 0.98, 1.12]}  # JSON: lists
    r = {**_result({"graphc": 2e-3, "jax": 2.2e-3}), "ratios": ratios}
    assert row(r).split("|")[-2].strip() == (
        "**0.91x** (per-round time / graphc's: jax 1.050x (IQR 0.980-1.120))"
    )


def test_per_round_ratios_pair_each_round_and_leave_the_references_out():
    # the machine slows 3x after five rounds, for every candidate alike: within a round
    # jax takes 1.1x graphc's time throughout
    slow = [1.0] * 5 + [3.0] * 6
    samples = {"graphc": [2.0 * s for s in slow], "jax": [2.2 * s for s in slow],
               "triad": [1.0] * 11}  # fmt: skip
    ratios = round_ratios(samples, only=("jax", "numpy"))
    assert list(ratios) == ["jax"]
    assert ratios["jax"] == pytest.approx((1.1, 1.1, 1.1))


def test_cpu_time_tells_a_two_thread_candidate_from_a_one_thread_one():
    def spin(seconds):
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    def two_threads():
        helper = threading.Thread(target=spin, args=(0.03,))
        helper.start()
        spin(0.03)
        helper.join()

    cands = {"one": lambda: spin(0.03), "two": two_threads, "sleep": lambda: time.sleep(0.03)}
    cpu: dict[str, list[float]] = {}
    wall = interleaved_samples(cands, 5, cpu=cpu, warm_up=False)
    busy = cores_busy(wall, cpu)  # medians: a pool left spinning by an earlier test counts too
    assert 0.8 < busy["one"] < 1.2 and busy["sleep"] < 0.2
    # every thread's CPU time counts (whether the two ran at once or took turns)
    assert statistics.median(cpu["two"]) > 1.5 * statistics.median(cpu["one"])


def test_largest_errors_are_in_ulps_of_the_exact_value():
    x = np.linspace(-5, 5, 1001)
    rounded = lambda a: np.exp(a.astype(np.longdouble)).astype(np.float64)  # noqa: E731
    cands = {
        "rounded": rounded,
        "one ulp up": lambda a: np.nextafter(rounded(a), np.inf),
        "float32": lambda a: np.exp(a.astype(np.float32)).astype(np.float64),
    }
    errs = largest_errors(cands, "exp", x)
    assert 0.4 < errs["rounded"] <= 0.5 + 1e-9
    assert 1.0 < errs["one ulp up"] <= 1.5 + 1e-9
    assert errs["float32"] > 2.0**20  # float32's rounding, in float64 ulps


def test_a_row_without_peers_shows_its_note_or_its_ratios():
    timed = _result({"unprofiled": 2e-6, "profiled": 2.5e-6}, unit="us")
    assert row(timed).split("|")[-2].strip() == "profiled / unprofiled: 1.250x"
    noted = _result({"serial": 2e-3, "openmp": 1e-3}, note="openmp speed-up 2.00x")
    assert row(noted).split("|")[-2].strip() == "openmp speed-up 2.00x"


def test_the_table_names_the_machine_it_ran_on():
    info = describe({})
    line = header(info, (0.5, 0.75))
    assert (
        f"{info['cores']} logical cores" in line and "load average 0.50 before, 0.75 after" in line
    )
    text = render({"machine_line": line, "results": [_result({"graphc": 1e-3, "numpy": 2e-3})]})
    assert text.splitlines()[0] == f"Machine: {line}."
    assert text.splitlines()[-1].endswith("| **0.50x** |")


def test_the_readme_block_is_replaced_whole_and_only_it():
    text = f"before\n{START}\nold table\n{END}\nafter\n"
    assert replace_block(text, "new") == f"before\n{START}\nnew\n{END}\nafter\n"
    with pytest.raises(ValueError, match="no <!-- benchmark table: start -->"):
        replace_block("no markers", "new")
