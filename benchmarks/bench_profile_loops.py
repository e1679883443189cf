"""What profiling costs on loops: a 100-step RNN (scan over a sequence, a 32x32 matrix-vector
product and tanh per step) and a 171-step scalar ``until`` loop, each profiled and not.

The ratio is taken within each round (the two candidates run one after the other), then
the median and IQR over rounds: on a shared machine that cancels most of the load drift.
Goal: <= 1.3x for both, as for the 200-node flat chain.

    python benchmarks/bench_profile_loops.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import numpy as np

import graphc
import graphc.tensor as T
from graphc.scan_module import until

try:
    from benchmarks.common import interleaved_samples
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from common import interleaved_samples  # type: ignore[no-redef]

RNN_STEPS, RNN_UNITS = 100, 32
GROWTH_LIMIT = 4150.0  # 1.05 ** 170 < 4150 < 1.05 ** 171: 171 steps from 1.0


def rnn(profile: bool) -> Callable[[], object]:
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = graphc.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=X,
                        outputs_info=h0, non_sequences=W, name="rnn")  # fmt: skip
    f = graphc.function([X, W, h0], hs.sum(), profile=profile)
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(RNN_STEPS, RNN_UNITS)),
            rng.normal(size=(RNN_UNITS, RNN_UNITS)) * 0.1, rng.normal(size=RNN_UNITS))  # fmt: skip
    return lambda: f(*args)


def growth(profile: bool) -> Callable[[], object]:
    x0 = T.scalar("x0")
    out, _ = graphc.scan(lambda x: (x * 1.05, until(x * 1.05 > GROWTH_LIMIT)),
                         outputs_info=x0, n_steps=1000)  # fmt: skip
    f = graphc.function([x0], out[-1], profile=profile)
    one = np.float64(1.0)
    return lambda: f(one)


def run(repeat: int, number: int = 20) -> dict[str, tuple[dict[str, float], tuple]]:
    """Per loop: (median seconds per call of each candidate, (median, q25, q75) of the
    per-round ratio profiled / unprofiled)."""
    out = {}
    for label, make in (
        (f"{RNN_STEPS}-step RNN scan", rnn),
        ("171-step scalar until loop", growth),
    ):
        cands = {"unprofiled": make(False), "profiled": make(True)}
        for _ in range(40):  # past the profiled calls that sample shapes (1, 2, 4, ...)
            cands["profiled"]()
        s = interleaved_samples(cands, repeat, number=number, gc_off=True)
        ratios = [p / u for p, u in zip(s["profiled"], s["unprofiled"])]
        q = np.percentile(ratios, [25, 75])
        med = {k: statistics.median(v) for k, v in s.items()}
        out[label] = (med, (statistics.median(ratios), float(q[0]), float(q[1])))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=60)
    a = ap.parse_args(argv)
    for label, (med, (r, lo, hi)) in run(a.repeat).items():
        print(f"{label}: unprofiled {med['unprofiled'] * 1e6:.1f} us, profiled "
              f"{med['profiled'] * 1e6:.1f} us, ratio {r:.3f} (IQR {lo:.3f}-{hi:.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
