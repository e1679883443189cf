"""Logistic regression trained with SGD: shared weights, graphc.grad and updates.

Run ``python examples/logistic_regression.py`` (profiled, PROFILE_MODE) or pick a mode:
``--mode FAST_RUN``, ``--mode FAST_COMPILE``, ``--mode DEBUG_MODE``.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphc
import graphc.tensor as T
from graphc.tensor import nnet


def build(n_features: int, mode, profile=None):
    """Compile a training step and a predictor for a logistic-regression model."""
    rng = np.random.default_rng(0)
    x = T.dmatrix("x")
    y = T.dvector("y")
    w = graphc.shared(rng.standard_normal(n_features) * 0.01, name="w")
    b = graphc.shared(0.0, name="b")

    p_1 = nnet.sigmoid(T.dot(x, w) + b)  # probability that the target is 1
    prediction = p_1 > 0.5
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)  # cross-entropy loss
    cost = xent.mean() + 0.01 * (w**2).sum()  # with weight decay
    gw, gb = graphc.grad(cost, [w, b])

    train = graphc.function(
        [x, y],
        [prediction, xent.mean()],
        updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
        mode=mode,
        profile=profile,
        name="train",
    )
    predict = graphc.function([x], prediction, mode=mode, profile=profile, name="predict")
    return train, predict, w, b


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", default="PROFILE_MODE")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--features", type=int, default=784)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(1)
    data_x = rng.standard_normal((args.samples, args.features))
    data_y = (rng.random(args.samples) > 0.5).astype("float64")

    train, predict, w, b = build(args.features, args.mode)
    for _ in range(args.steps):
        _, loss = train(data_x, data_y)
    accuracy = (predict(data_x) == data_y).mean()
    print(f"final loss {float(loss):.4f}, training accuracy {accuracy:.3f} (mode {args.mode})")


if __name__ == "__main__":
    main()
