"""A denoising autoencoder in the style of the classic Theano tutorial (dA.py), on
synthetic 8x8 "bar" images, written against Theano's API."""

# ruff: noqa: UP004, UP031  (kept in the tutorials' Python 2 era style)

import numpy

import graphc as theano
import graphc.tensor as T
from graphc.tensor.shared_randomstreams import RandomStreams


def synthetic_bars(rng, n_samples, side=8):
    """Binary images, each the union of one or two random horizontal or vertical bars."""
    data = numpy.zeros((n_samples, side, side), dtype=theano.config.floatX)
    for img in data:
        for _ in range(rng.randint(1, 3)):
            k = rng.randint(side)
            if rng.rand() < 0.5:
                img[k, :] = 1
            else:
                img[:, k] = 1
    return data.reshape(n_samples, side * side)


class dA(object):  # noqa: N801 - the tutorial's name
    """Denoising autoencoder with tied weights."""

    def __init__(self, numpy_rng, theano_rng=None, input=None, n_visible=64, n_hidden=32,
                 W=None, bhid=None, bvis=None):  # fmt: skip
        self.n_visible = n_visible
        self.n_hidden = n_hidden
        if not theano_rng:
            theano_rng = RandomStreams(numpy_rng.randint(2**30))
        if not W:
            bound = 4 * numpy.sqrt(6.0 / (n_hidden + n_visible))
            initial_W = numpy.asarray(
                numpy_rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)),
                dtype=theano.config.floatX,
            )
            W = theano.shared(value=initial_W, name="W", borrow=True)
        if not bvis:
            bvis = theano.shared(
                value=numpy.zeros(n_visible, dtype=theano.config.floatX), borrow=True
            )
        if not bhid:
            bhid = theano.shared(
                value=numpy.zeros(n_hidden, dtype=theano.config.floatX), name="b", borrow=True
            )
        self.W = W
        self.b = bhid
        self.b_prime = bvis
        self.W_prime = self.W.T
        self.theano_rng = theano_rng
        self.x = T.dmatrix(name="input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        return (
            self.theano_rng.binomial(
                size=input.shape, n=1, p=1 - corruption_level, dtype=theano.config.floatX
            )
            * input
        )

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)
        L = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(L)
        gparams = T.grad(cost, self.params)
        updates = [
            (param, param - learning_rate * gparam) for param, gparam in zip(self.params, gparams)
        ]
        return (cost, updates)


def main(training_epochs=15, learning_rate=0.1, batch_size=20, n_samples=600):
    """Train with 30% corruption; returns the mean cost of every epoch."""
    rng = numpy.random.RandomState(123)
    train_set_x = theano.shared(synthetic_bars(rng, n_samples), borrow=True)
    n_train_batches = n_samples // batch_size

    index = T.lscalar()
    x = T.matrix("x")
    theano_rng = RandomStreams(rng.randint(2**30))
    da = dA(numpy_rng=rng, theano_rng=theano_rng, input=x, n_visible=64, n_hidden=32)
    cost, updates = da.get_cost_updates(corruption_level=0.3, learning_rate=learning_rate)
    train_da = theano.function(
        [index],
        cost,
        updates=updates,
        givens={x: train_set_x[index * batch_size : (index + 1) * batch_size]},
    )
    epoch_costs = []
    for epoch in range(training_epochs):
        c = [train_da(batch_index) for batch_index in range(n_train_batches)]
        epoch_costs.append(float(numpy.mean(c)))
        print("Training epoch %d, cost %f" % (epoch, epoch_costs[-1]))
    return epoch_costs


if __name__ == "__main__":
    main()
