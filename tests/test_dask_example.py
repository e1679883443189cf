"""examples/distributed_training.py --dask: workers on a dask.distributed LocalCluster send
their profiles; the client's merged profile adds them up exactly and keeps every shape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from graphc.profile import load

ROOT = Path(__file__).resolve().parent.parent


def test_dask_workers_profiles_merge_exactly(tmp_path):
    import dask.distributed  # noqa: F401 - installed by the test extra; CI must run this

    merged_path, workers_dir = tmp_path / "merged.json", tmp_path / "workers"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "distributed_training.py"), "--dask",
         "--uneven", "--workers", "2", "--steps", "7", "--samples", "300", "--features", "10",
         "--quiet", "--json", str(merged_path), "--worker-json", str(workers_dir)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    (merged,) = load(merged_path).functions
    workers = [load(workers_dir / f"worker{i}.json").functions[0] for i in range(2)]
    assert merged.calls == sum(w.calls for w in workers) == 14
    assert merged.call_ns == sum(w.call_ns for w in workers)
    for i, node in enumerate(merged.nodes):
        assert node.calls == sum(w.nodes[i].calls for w in workers)
        assert node.ns_total == sum(w.nodes[i].ns_total for w in workers)
    # shards of 100 and 200 rows: the merged profile lists both shapes, not one of them
    x_shapes = {tuple(v.shape) for w in workers for n in w.nodes for v in n.inputs
                if v.shape and len(v.shape) == 2}  # fmt: skip
    assert {(100, 10), (200, 10)} <= x_shapes
    seen = [v.shapes_seen for n in merged.nodes for v in n.inputs if v.shapes_seen]
    assert [(100, 10), (200, 10)] in seen
    assert "workers saw different input shapes" in res.stdout


def test_dask_even_shards_show_one_shape(tmp_path):
    merged_path = tmp_path / "merged.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "distributed_training.py"), "--workers", "2",
         "--steps", "3", "--samples", "200", "--features", "10", "--quiet",
         "--json", str(merged_path)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    (merged,) = load(merged_path).functions
    assert all(not v.shapes_seen for n in merged.nodes for v in n.inputs)
    assert "different input shapes" not in res.stdout
