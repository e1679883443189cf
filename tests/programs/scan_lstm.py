"""The LSTM sentiment classifier of the classic Theano tutorial (lstm.py), condensed:
masked variable-length sequences, the input projection as a 3-d ``dot``, the recurrence as
a scan, mean pooling, a softmax classifier, SGD on synthetic "reviews" whose label is
whether a positive or a negative word appears more often. ``main()`` returns the cost per
epoch."""

from collections import OrderedDict

import numpy

import graphc as theano
from graphc import config, tensor

VOCAB = 40


def numpy_floatX(data):
    return numpy.asarray(data, dtype=config.floatX)


def ortho_weight(ndim, rng):
    W = rng.randn(ndim, ndim)
    u, s, v = numpy.linalg.svd(W)
    return u.astype(config.floatX)


def init_params(options, rng):
    params = OrderedDict()
    # centred embeddings in [-1, 1): the tutorial's 0.01 * rand relies on adadelta and many
    # epochs; with plain SGD for 10 epochs its tiny, same-signed embeddings leave the
    # classifier at the label prior
    randn = rng.rand(options["n_words"], options["dim_proj"]) - 0.5
    params["Wemb"] = (2.0 * randn).astype(config.floatX)
    dim = options["dim_proj"]
    params["lstm_W"] = numpy.concatenate([ortho_weight(dim, rng) for _ in range(4)], axis=1)
    params["lstm_U"] = numpy.concatenate([ortho_weight(dim, rng) for _ in range(4)], axis=1)
    params["lstm_b"] = numpy.zeros((4 * dim,)).astype(config.floatX)
    params["U"] = 0.01 * rng.randn(dim, options["ydim"]).astype(config.floatX)
    params["b"] = numpy.zeros((options["ydim"],)).astype(config.floatX)
    return OrderedDict((k, theano.shared(v, name=k)) for k, v in params.items())


def _slice(_x, n, dim):
    if _x.ndim == 3:
        return _x[:, :, n * dim : (n + 1) * dim]
    return _x[:, n * dim : (n + 1) * dim]


def lstm_layer(tparams, state_below, options, mask):
    nsteps = state_below.shape[0]
    n_samples = state_below.shape[1]
    dim_proj = options["dim_proj"]

    def _step(m_, x_, h_, c_):
        preact = tensor.dot(h_, tparams["lstm_U"])
        preact += x_
        i = tensor.nnet.sigmoid(_slice(preact, 0, dim_proj))
        f = tensor.nnet.sigmoid(_slice(preact, 1, dim_proj))
        o = tensor.nnet.sigmoid(_slice(preact, 2, dim_proj))
        c = tensor.tanh(_slice(preact, 3, dim_proj))
        c = f * c_ + i * c
        c = m_[:, None] * c + (1.0 - m_)[:, None] * c_
        h = o * tensor.tanh(c)
        h = m_[:, None] * h + (1.0 - m_)[:, None] * h_
        return h, c

    state_below = tensor.dot(state_below, tparams["lstm_W"]) + tparams["lstm_b"]
    rval, updates = theano.scan(
        _step,
        sequences=[mask, state_below],
        outputs_info=[
            tensor.alloc(numpy_floatX(0.0), n_samples, dim_proj),
            tensor.alloc(numpy_floatX(0.0), n_samples, dim_proj),
        ],
        name="lstm_layers",
        n_steps=nsteps,
    )
    return rval[0]


def build_model(tparams, options):
    x = tensor.matrix("x", dtype="int64")
    mask = tensor.matrix("mask", dtype=config.floatX)
    y = tensor.vector("y", dtype="int64")
    n_timesteps = x.shape[0]
    n_samples = x.shape[1]
    emb = tparams["Wemb"][x.flatten()].reshape([n_timesteps, n_samples, options["dim_proj"]])
    proj = lstm_layer(tparams, emb, options, mask=mask)
    proj = (proj * mask[:, :, None]).sum(axis=0)
    proj = proj / mask.sum(axis=0)[:, None]
    pred = tensor.nnet.softmax(tensor.dot(proj, tparams["U"]) + tparams["b"])
    off = 1e-8
    cost = -tensor.log(pred[tensor.arange(n_samples), y] + off).mean()
    return x, mask, y, pred, cost


def prepare_data(seqs, labels):
    lengths = [len(s) for s in seqs]
    maxlen = numpy.max(lengths)
    x = numpy.zeros((maxlen, len(seqs))).astype("int64")
    x_mask = numpy.zeros((maxlen, len(seqs))).astype(config.floatX)
    for idx, s in enumerate(seqs):
        x[: lengths[idx], idx] = s
        x_mask[: lengths[idx], idx] = 1.0
    return x, x_mask, numpy.asarray(labels, dtype="int64")


def reviews(n, rng):
    seqs, labels = [], []
    for _ in range(n):
        s = rng.randint(2, VOCAB, rng.randint(4, 12))
        pos, neg = (s < 8).sum(), ((s >= 8) & (s < 14)).sum()
        seqs.append(s)
        labels.append(int(pos >= neg))
    return seqs, labels


def main(epochs=10, batch_size=16, lrate=1.0):
    rng = numpy.random.RandomState(123)
    options = dict(n_words=VOCAB, dim_proj=16, ydim=2)
    tparams = init_params(options, rng)
    x, mask, y, pred, cost = build_model(tparams, options)
    grads = tensor.grad(cost, wrt=list(tparams.values()))
    updates = [(p, p - lrate * g) for p, g in zip(tparams.values(), grads)]
    f_train = theano.function([x, mask, y], cost, updates=updates, name="lstm_sgd")
    seqs, labels = reviews(128, rng)
    costs = []
    for _ in range(epochs):
        batch_costs = []
        for start in range(0, len(seqs), batch_size):
            bx, bm, by = prepare_data(
                seqs[start : start + batch_size], labels[start : start + batch_size]
            )
            batch_costs.append(float(f_train(bx, bm, by)))
        costs.append(float(numpy.mean(batch_costs)))
    return costs


if __name__ == "__main__":
    print(main())
