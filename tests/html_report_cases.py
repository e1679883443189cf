"""Profiles of real programs for the HTML report tests: the logistic-regression example and
a scan nested in a scan, profiled together."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats
from graphc.scan_module import scan

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def nested_scan(profile: ProfileStats):
    """Row sums of exp(x), a scan over rows whose step scans over the row's values."""
    x = T.dmatrix("x")

    def outer_step(row):
        def inner_step(v, acc):
            return acc + T.exp(v)

        out, _ = scan(inner_step, sequences=[row], outputs_info=[T.constant(0.0)])
        return out[-1]

    res, _ = scan(outer_step, sequences=[x])
    return graphc.function([x], res, profile=profile, name="nested_rows")


def real_profile(steps: int = 20) -> ProfileStats:
    """The example's train and predict functions and the nested scan, one profile, with the
    memory profile and a trace."""
    lr = _example("logistic_regression")
    stats = ProfileStats(atexit_print=False, message="logistic regression and nested scan")
    rng = np.random.default_rng(0)
    data_x = rng.standard_normal((200, 50))
    data_y = (rng.random(200) > 0.5).astype("float64")
    with graphc.config.change_flags(profile_memory=True, profile_trace=True):
        train, predict, _, _ = lr.build(50, "FAST_RUN", profile=stats)
        rows = nested_scan(stats)
        for _ in range(steps):
            train(data_x, data_y)
        predict(data_x)
        for _ in range(3):
            rows(rng.random((4, 30)))
    stats.refresh()
    return stats
