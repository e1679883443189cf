"""One compiled logistic-regression training step run by several worker processes, each
profiling its own calls; the parent merges the profiles into one summary.

    python examples/distributed_training.py [--workers 2] [--steps 50] [--json merged.json]
                                            [--trace merged.trace.json] [--dask] [--uneven]
                                            [--worker-json DIR]

The compiled function is pickled (its graph and mode; each worker re-links it on load), every
worker trains on its shard of the data and sends back ``profile.to_json()`` with its weights.
The parent averages the weights and merges the profiles: the merged call counts are the sum of
the workers' calls. ``--dask`` runs the workers on a ``dask.distributed.LocalCluster`` (one
process per worker; the same code runs on a real cluster given its scheduler address with
``--scheduler``). ``--uneven`` gives the workers shards of different sizes: the merged profile
then lists every input shape the workers saw.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pickle

import numpy as np

import graphc
import graphc.tensor as T
from graphc.profile import ProfileStats
from graphc.tensor import nnet


def build_step(n_features: int):
    """The training step: one SGD update of w and b, returning the mean cross-entropy."""
    x = T.dmatrix("x")
    y = T.dvector("y")
    w = graphc.shared(np.zeros(n_features), name="w")
    b = graphc.shared(0.0, name="b")
    decay = graphc.shared(0.01, name="decay")  # 0-d hyper-parameters
    lr = graphc.shared(0.1, name="lr")
    p_1 = nnet.sigmoid(T.dot(x, w) + b)
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + decay * (w**2).sum()
    gw, gb = graphc.grad(cost, [w, b])
    step = graphc.function(
        [x, y],
        xent.mean(),
        updates=[(w, w - lr * gw), (b, b - lr * gb)],
        name="train_step",
    )
    return step, w, b


def worker(payload: bytes, data_x, data_y, steps: int, trace: bool):
    """Load the pickled step with profiling on, run it ``steps`` times on this shard and
    return (profile JSON, final weights, final loss, pid)."""
    graphc.config.profiling__destination = os.devnull  # the parent prints the merged summary
    with graphc.config.change_flags(profile=True, profile_trace=trace):
        step = pickle.loads(payload)  # re-linked here, with this process's profile
    loss = None
    for _ in range(steps):
        loss = step(data_x, data_y)
    w = step.shared[0].get_value()
    return step.profile.to_json(), w, float(loss), os.getpid()


def run_multiprocessing(payload, shards, steps, trace):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(len(shards)) as pool:
        return pool.starmap(worker, [(payload, sx, sy, steps, trace) for sx, sy in shards])


def run_dask(payload, shards, steps, trace, scheduler=None):
    """The workers as Dask tasks: on a local cluster, or on the one at ``scheduler``."""
    from dask.distributed import Client, LocalCluster

    def submit(client):
        futures = [client.submit(worker, payload, sx, sy, steps, trace, pure=False)
                   for sx, sy in shards]  # fmt: skip
        return client.gather(futures)

    if scheduler:
        with Client(scheduler) as client:
            return submit(client)
    with LocalCluster(n_workers=len(shards), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:  # fmt: skip
        with Client(cluster) as client:
            return submit(client)


def main(argv=None) -> ProfileStats:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--samples", type=int, default=800)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--json", help="write the merged profile here")
    parser.add_argument("--trace", help="write the workers' Chrome traces here (one pid each)")
    parser.add_argument("--dask", action="store_true", help="use a local Dask cluster")
    parser.add_argument("--scheduler", help="with --dask: address of a running Dask scheduler")
    parser.add_argument("--uneven", action="store_true", help="shards of different sizes")
    parser.add_argument("--worker-json", help="also write each worker's profile in this dir")
    parser.add_argument("--quiet", action="store_true", help="no text summary")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(1)
    data_x = rng.standard_normal((args.samples, args.features))
    data_y = (data_x[:, 0] + 0.5 * rng.standard_normal(args.samples) > 0).astype("float64")
    cuts = np.arange(1, args.workers) * args.samples // args.workers
    if args.uneven:  # worker i gets a share proportional to i + 1
        weights = np.arange(1, args.workers + 1)
        cuts = (np.cumsum(weights)[:-1] * args.samples) // weights.sum()
    shards = list(zip(np.split(data_x, cuts), np.split(data_y, cuts)))

    step, w, _ = build_step(args.features)
    payload = pickle.dumps(step)
    if args.dask:
        try:
            import dask.distributed  # noqa: F401
        except ImportError as e:
            raise SystemExit(
                "--dask needs dask and distributed: pip install 'dask[distributed]'"
            ) from e
        results = run_dask(payload, shards, args.steps, bool(args.trace), args.scheduler)
    else:
        results = run_multiprocessing(payload, shards, args.steps, bool(args.trace))

    profiles = [ProfileStats.from_json(text) for text, *_ in results]
    merged = ProfileStats.merge(profiles, name=f"train_step on {len(results)} workers")
    w_avg = np.mean([r[1] for r in results], axis=0)
    w.set_value(w_avg)
    per_worker = [p.functions[0].calls for p in profiles]
    losses = [round(r[2], 4) for r in results]
    pids = sorted(r[3] for r in results)
    print(f"workers (pids {pids}) ran {per_worker} calls; merged profile: "
          f"{merged.functions[0].calls} calls; losses {losses}")  # fmt: skip
    if not args.quiet:
        merged.summary(n_apply_to_print=8, n_ops_to_print=8)
    varied = sorted({str(v.shapes_seen) for n in merged.functions[0].nodes
                     for v in n.inputs if v.shapes_seen})  # fmt: skip
    if varied:
        print(f"workers saw different input shapes: {', '.join(varied)}")
    if args.json:
        merged.save(args.json)
    if args.worker_json:
        os.makedirs(args.worker_json, exist_ok=True)
        for i, p in enumerate(profiles):
            p.save(os.path.join(args.worker_json, f"worker{i}.json"))
    if args.trace:
        from graphc.profile.render.trace import write_chrome_trace

        write_chrome_trace(profiles, args.trace)  # each worker keeps its pid
    return merged


if __name__ == "__main__":
    main()
