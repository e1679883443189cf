"""graphc.profile.benchmark and the noise-aware comparison behind ``graphc-prof diff``."""

from __future__ import annotations

import numpy as np

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats, benchmark, load
from graphc.profile.bench import Measure, compare, judge, render


def _f():
    x, y = T.vectors("xy")
    return graphc.function([x, y], T.exp(x) * y, profile=True, name="b")


def test_benchmark_collects_samples_beyond_the_vm_ring(tmp_path):
    f = _f()
    v = np.ones(1000)
    path = tmp_path / "b.json"
    stats = benchmark(f, [v, v], repeat=70, warmup=3, path=path)
    (fp,) = stats.functions
    assert fp.calls == 70
    for n in fp.nodes:
        assert n.calls == 70
        assert len(n.ns_samples) == 70  # more than the VM's 32-entry ring
    assert load(path).functions == stats.functions
    # the function's own profile starts afresh after the benchmark
    f.profile.refresh()
    assert f.profile.functions[0].calls == 0


def test_judge_needs_ratio_and_spread():
    base = Measure.of([100_000, 101_000, 99_000, 100_500])
    slow = Measure.of([500_000, 510_000, 495_000])
    noisy = Measure.of([90_000, 600_000, 650_000])  # median 6x but its min below base
    assert judge("apply", "n", base, slow, 3.0, 0).failed
    assert not judge("apply", "n", base, noisy, 3.0, 0).failed
    assert "within the spread" in judge("apply", "n", base, noisy, 3.0, 0).reason
    assert not judge("apply", "n", base, slow, 6.0, 0).failed
    assert not judge("apply", "n", base, slow, 3.0, 1e6).failed  # below the floor
    assert not judge("apply", "n", None, slow, 3.0, 0).failed


def test_compare_functions_ops_and_nodes():
    f = _f()
    v = np.ones(20_000)
    a = benchmark(f, [v, v], repeat=20)
    b = ProfileStats.from_json(a.to_json())
    for n in b.functions[0].nodes:
        n.ns_samples = [s * 10 for s in n.ns_samples]
    verdicts = compare(a, b, ratio=3.0, min_delta_ns=0)
    kinds = {v.kind for v in verdicts if v.failed}
    assert kinds == {"function", "op", "apply"}
    text = render(verdicts)
    assert "FAILED" in text and "function b:" in text
    assert not any(v.failed for v in compare(a, a, ratio=3.0))
