"""LeNet (two convolution + max-pooling layers, a tanh layer, a softmax) on synthetic
MNIST-shaped data, trained with minibatch SGD; prints the cost per epoch and the profile.

    python examples/lenet.py                 # the classic sizes: 20 and 50 filters, batch 500
    python examples/lenet.py --small         # a few seconds: 4 and 8 filters, batch 50

The data: ten smooth 28x28 class prototypes, each example one of them plus noise.
"""

from __future__ import annotations

import argparse

import numpy as np

import graphc
import graphc.tensor as T
from graphc.tensor.nnet import conv2d
from graphc.tensor.signal import pool


def synthetic_mnist(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` 1x28x28 images (float64) and their labels in 0..9."""
    grid = np.linspace(-1, 1, 28)
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    centers = rng.uniform(-0.6, 0.6, (10, 3, 2))
    protos = np.zeros((10, 28, 28))
    for k in range(10):
        for cy, cx in centers[k]:
            protos[k] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 0.05)
    labels = rng.integers(0, 10, n)
    images = protos[labels] + 0.3 * rng.standard_normal((n, 28, 28))
    return images.reshape(n, 1, 28, 28), labels.astype("int64")


def conv_pool_layer(rng, x, filter_shape, image_shape, poolsize=(2, 2)):
    """tanh(max_pool(conv2d(x, W)) + b): returns the output and its parameters."""
    fan_in = np.prod(filter_shape[1:])
    fan_out = filter_shape[0] * np.prod(filter_shape[2:]) / np.prod(poolsize)
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    w = graphc.shared(rng.uniform(-bound, bound, filter_shape), name="W_conv")
    b = graphc.shared(np.zeros(filter_shape[0]), name="b_conv")
    conv_out = conv2d(x, w, filter_shape=filter_shape, input_shape=image_shape)
    pooled = pool.pool_2d(conv_out, ws=poolsize, ignore_border=True)
    return T.tanh(pooled + b.dimshuffle("x", 0, "x", "x")), [w, b]


def build(batch: int, nkerns=(20, 50), hidden: int = 500, lr: float = 0.1, profile=True):
    """Compile LeNet's SGD step: ``train(x, y) -> cost``."""
    rng = np.random.default_rng(23455)
    x = T.dtensor4("x")
    y = T.lvector("y")
    h0, p0 = conv_pool_layer(rng, x, (nkerns[0], 1, 5, 5), (batch, 1, 28, 28))
    h1, p1 = conv_pool_layer(rng, h0, (nkerns[1], nkerns[0], 5, 5), (batch, nkerns[0], 12, 12))
    n_in = nkerns[1] * 4 * 4
    bound = np.sqrt(6.0 / (n_in + hidden))
    w2 = graphc.shared(rng.uniform(-bound, bound, (n_in, hidden)), name="W_hidden")
    b2 = graphc.shared(np.zeros(hidden), name="b_hidden")
    h2 = T.tanh(T.dot(h1.flatten(2), w2) + b2)
    w3 = graphc.shared(np.zeros((hidden, 10)), name="W_softmax")
    b3 = graphc.shared(np.zeros(10), name="b_softmax")
    p_y = T.nnet.softmax(T.dot(h2, w3) + b3)
    cost = -T.mean(T.log(p_y)[T.arange(y.shape[0]), y])
    params = [*p0, *p1, w2, b2, w3, b3]
    grads = graphc.grad(cost, params)
    updates = [(q, q - lr * g) for q, g in zip(params, grads)]
    return graphc.function([x, y], cost, updates=updates, profile=profile, name="lenet_train")


def main(argv=None) -> list[float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--small", action="store_true", help="4 and 8 filters, batch 50")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=4, help="minibatches per epoch")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args(argv)
    batch, nkerns, hidden = (50, (4, 8), 50) if args.small else (500, (20, 50), 500)
    rng = np.random.default_rng(0)
    data_x, data_y = synthetic_mnist(batch * args.batches, rng)
    train = build(batch, nkerns, hidden, profile=not args.no_profile)
    costs = []
    for epoch in range(args.epochs):
        epoch_costs = [
            float(train(data_x[i * batch : (i + 1) * batch], data_y[i * batch : (i + 1) * batch]))
            for i in range(args.batches)
        ]
        costs.append(float(np.mean(epoch_costs)))
        print(f"epoch {epoch}: mean cost {costs[-1]:.4f}")
    if train.profile is not None:
        train.profile.summary()
    return costs


if __name__ == "__main__":
    main()
