# ruff: noqa: UP004, UP031  (kept in the Theano tutorial's own style)
"""LeNet in the style of the classic Theano tutorial (convolutional_mlp.py), written against
Theano's API, on synthetic MNIST-shaped data. Prints ``epoch <k> cost <value>`` lines."""

import sys

import numpy

import graphc as theano
import graphc.tensor as T
from graphc.tensor.nnet import conv2d
from graphc.tensor.signal import pool


class LogisticRegression(object):
    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(
            value=numpy.zeros((n_in, n_out), dtype=theano.config.floatX), name="W", borrow=True
        )
        self.b = theano.shared(
            value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True
        )
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        return T.mean(T.neq(self.y_pred, y))


class HiddenLayer(object):
    def __init__(self, rng, input, n_in, n_out, W=None, b=None, activation=T.tanh):
        self.input = input
        if W is None:
            W_values = numpy.asarray(
                rng.uniform(
                    low=-numpy.sqrt(6.0 / (n_in + n_out)),
                    high=numpy.sqrt(6.0 / (n_in + n_out)),
                    size=(n_in, n_out),
                ),
                dtype=theano.config.floatX,
            )
            W = theano.shared(value=W_values, name="W", borrow=True)
        if b is None:
            b_values = numpy.zeros((n_out,), dtype=theano.config.floatX)
            b = theano.shared(value=b_values, name="b", borrow=True)
        self.W = W
        self.b = b
        lin_output = T.dot(input, self.W) + self.b
        self.output = lin_output if activation is None else activation(lin_output)
        self.params = [self.W, self.b]


class LeNetConvPoolLayer(object):
    def __init__(self, rng, input, filter_shape, image_shape, poolsize=(2, 2)):
        assert image_shape[1] == filter_shape[1]
        self.input = input
        fan_in = numpy.prod(filter_shape[1:])
        fan_out = filter_shape[0] * numpy.prod(filter_shape[2:]) // numpy.prod(poolsize)
        W_bound = numpy.sqrt(6.0 / (fan_in + fan_out))
        self.W = theano.shared(
            numpy.asarray(
                rng.uniform(low=-W_bound, high=W_bound, size=filter_shape),
                dtype=theano.config.floatX,
            ),
            borrow=True,
        )
        b_values = numpy.zeros((filter_shape[0],), dtype=theano.config.floatX)
        self.b = theano.shared(value=b_values, borrow=True)
        conv_out = conv2d(
            input=input, filters=self.W, filter_shape=filter_shape, input_shape=image_shape
        )
        pooled_out = pool.pool_2d(input=conv_out, ws=poolsize, ignore_border=True)
        self.output = T.tanh(pooled_out + self.b.dimshuffle("x", 0, "x", "x"))
        self.params = [self.W, self.b]
        self.input = input


def synthetic_mnist(rng, n):
    """Ten noisy class prototypes, flattened to 784 pixels like the MNIST pickle."""
    protos = rng.uniform(0, 1, (10, 784)) > 0.7
    y = rng.randint(0, 10, n)
    x = protos[y] * 1.0 + 0.3 * rng.normal(size=(n, 784))
    return x.astype(theano.config.floatX), y.astype("int64")


def evaluate_lenet5(learning_rate=0.1, n_epochs=4, nkerns=(4, 8), batch_size=50, n_batches=4):
    rng = numpy.random.RandomState(23455)
    data_x, data_y = synthetic_mnist(rng, batch_size * n_batches)
    train_set_x = theano.shared(data_x, borrow=True)
    train_set_y = T.cast(theano.shared(data_y, borrow=True), "int32")

    index = T.lscalar()
    x = T.matrix("x")
    y = T.ivector("y")

    layer0_input = x.reshape((batch_size, 1, 28, 28))
    layer0 = LeNetConvPoolLayer(
        rng, input=layer0_input, image_shape=(batch_size, 1, 28, 28),
        filter_shape=(nkerns[0], 1, 5, 5), poolsize=(2, 2),
    )  # fmt: skip
    layer1 = LeNetConvPoolLayer(
        rng, input=layer0.output, image_shape=(batch_size, nkerns[0], 12, 12),
        filter_shape=(nkerns[1], nkerns[0], 5, 5), poolsize=(2, 2),
    )  # fmt: skip
    layer2_input = layer1.output.flatten(2)
    layer2 = HiddenLayer(rng, input=layer2_input, n_in=nkerns[1] * 4 * 4, n_out=50,
                         activation=T.tanh)  # fmt: skip
    layer3 = LogisticRegression(input=layer2.output, n_in=50, n_out=10)
    cost = layer3.negative_log_likelihood(y)

    params = layer3.params + layer2.params + layer1.params + layer0.params
    grads = theano.grad(cost, params)
    updates = [
        (param_i, param_i - learning_rate * grad_i) for param_i, grad_i in zip(params, grads)
    ]
    train_model = theano.function(
        [index],
        cost,
        updates=updates,
        givens={
            x: train_set_x[index * batch_size : (index + 1) * batch_size],
            y: train_set_y[index * batch_size : (index + 1) * batch_size],
        },
    )
    test_model = theano.function(
        [index],
        layer3.errors(y),
        givens={
            x: train_set_x[index * batch_size : (index + 1) * batch_size],
            y: train_set_y[index * batch_size : (index + 1) * batch_size],
        },
    )
    for epoch in range(n_epochs):
        costs = [train_model(i) for i in range(n_batches)]
        print("epoch %i cost %f" % (epoch, numpy.mean(costs)))
    errors = numpy.mean([test_model(i) for i in range(n_batches)])
    print("training error %f %%" % (errors * 100.0))


if __name__ == "__main__":
    evaluate_lenet5(n_epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 4)
