"""An LSTM language model on synthetic text, trained with SGD, profiled.

Sequences follow a hidden rule (each token mostly determines the next), so the model can
learn it and the cost falls. The recurrence is a ``graphc.scan`` over time; the profile
shows the loop node with its step function nested under it.

    python examples/lstm_language_model.py [epochs]
"""

from __future__ import annotations

import sys

import numpy as np

import graphc
import graphc.tensor as T

VOCAB, DIM, BATCH, STEPS = 24, 64, 32, 20


def synthetic_batches(n_batches: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Token matrices (STEPS + 1, BATCH): next = (3 * token + 1) % VOCAB, 10% noise."""
    out = []
    for _ in range(n_batches):
        seq = np.empty((STEPS + 1, BATCH), dtype="int32")
        seq[0] = rng.integers(0, VOCAB, BATCH)
        for t in range(1, STEPS + 1):
            noise = rng.random(BATCH) < 0.1
            seq[t] = np.where(noise, rng.integers(0, VOCAB, BATCH), (3 * seq[t - 1] + 1) % VOCAB)
        out.append(seq)
    return out


def param(rng, shape, name, scale=0.1):
    return graphc.shared(rng.normal(0, scale, shape).astype(graphc.config.floatX), name=name)


def lstm_layer(x, n_in: int, dim: int, rng, name: str):
    """One LSTM layer over ``x`` (steps, batch, n_in): the input projection is one matrix
    product for all steps, the recurrence a scan. Returns the hidden states and params."""
    W = param(rng, (n_in, 4 * dim), f"{name}_W")
    U = param(rng, (dim, 4 * dim), f"{name}_U")
    b = graphc.shared(np.zeros(4 * dim, dtype=graphc.config.floatX), name=f"{name}_b")
    steps, batch = x.shape[0], x.shape[1]
    projected = (T.dot(x.reshape((steps * batch, n_in)), W) + b).reshape((steps, batch, 4 * dim))

    def step(x_t, h_prev, c_prev):
        pre = x_t + T.dot(h_prev, U)
        i = T.nnet.sigmoid(pre[:, :dim])
        f = T.nnet.sigmoid(pre[:, dim : 2 * dim])
        o = T.nnet.sigmoid(pre[:, 2 * dim : 3 * dim])
        c = f * c_prev + i * T.tanh(pre[:, 3 * dim :])
        return o * T.tanh(c), c

    zeros = T.alloc(np.asarray(0.0, dtype=graphc.config.floatX), batch, dim)
    (h, _), _ = graphc.scan(step, sequences=projected, outputs_info=[zeros, zeros],
                            name=f"{name}_scan")  # fmt: skip
    return h, [W, U, b]


def build(n_layers: int = 1, dim: int = DIM, lr: float = 0.5, seed: int = 0, profile=None):
    """The training step: ``train(tokens)`` returns the mean next-token cross-entropy."""
    rng = np.random.default_rng(seed)
    tokens = T.imatrix("tokens")
    emb = param(rng, (VOCAB, dim), "emb", 0.3)
    x, y = tokens[:-1], tokens[1:]
    h = emb[x.flatten()].reshape((x.shape[0], x.shape[1], dim))
    params = [emb]
    for k in range(n_layers):
        h, p = lstm_layer(h, dim, dim, rng, f"lstm{k}")
        params += p
    V = param(rng, (dim, VOCAB), "V")
    c = graphc.shared(np.zeros(VOCAB, dtype=graphc.config.floatX), name="c")
    params += [V, c]
    logits = T.dot(h.reshape((h.shape[0] * h.shape[1], dim)), V) + c
    probs = T.nnet.softmax(logits)
    targets = y.flatten()
    cost = -T.mean(T.log(probs[T.arange(targets.shape[0]), targets]))
    grads = T.grad(cost, params)
    updates = [(p, p - lr * g) for p, g in zip(params, grads)]
    return graphc.function([tokens], cost, updates=updates, name="train", profile=profile)


def main(epochs: int = 6, n_batches: int = 8, profile=True) -> list[float]:
    rng = np.random.default_rng(1)
    batches = synthetic_batches(n_batches, rng)
    train = build(profile=profile)
    costs = []
    for epoch in range(epochs):
        costs.append(float(np.mean([train(b) for b in batches])))
        print(f"epoch {epoch}: cost {costs[-1]:.3f}")
    if profile:
        train.profile.summary()
    return costs


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
