"""A stacked denoising autoencoder in the style of the classic Theano tutorial (SdA.py):
greedy layer-wise pre-training of dA layers, then supervised fine-tuning, on synthetic
labelled 8x8 "bar" images, written against Theano's API."""

# ruff: noqa: UP004, UP031  (kept in the tutorials' Python 2 era style)

import numpy
from rand_denoising_autoencoder import dA  # the tutorial's dA, next to this file

import graphc as theano
import graphc.tensor as T
from graphc.tensor.shared_randomstreams import RandomStreams


def synthetic_labelled_bars(rng, n_samples, side=8):
    """One bar per image plus 10% salt noise; the label is the bar's orientation and the
    half of the image it lies in (4 classes)."""
    x = (rng.rand(n_samples, side, side) < 0.1).astype(theano.config.floatX)
    y = numpy.zeros(n_samples, dtype="int64")
    for i in range(n_samples):
        k = rng.randint(side)
        vertical = rng.rand() < 0.5
        if vertical:
            x[i, :, k] = 1
        else:
            x[i, k, :] = 1
        y[i] = 2 * vertical + (k >= side // 2)
    return x.reshape(n_samples, side * side), y


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
        if y.ndim != self.y_pred.ndim:
            raise TypeError("y should have the same shape as self.y_pred")
        return T.mean(T.neq(self.y_pred, y))


class HiddenLayer(object):
    def __init__(self, rng, input, n_in, n_out, W=None, b=None, activation=T.tanh):
        self.input = input
        if W is None:
            bound = numpy.sqrt(6.0 / (n_in + n_out))
            W_values = numpy.asarray(
                rng.uniform(low=-bound, high=bound, size=(n_in, n_out)),
                dtype=theano.config.floatX,
            )
            if activation == T.nnet.sigmoid:
                W_values *= 4
            W = theano.shared(value=W_values, name="W", borrow=True)
        if b is None:
            b = theano.shared(
                value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True
            )
        self.W = W
        self.b = b
        lin_output = T.dot(input, self.W) + self.b
        self.output = lin_output if activation is None else activation(lin_output)
        self.params = [self.W, self.b]


class SdA(object):
    def __init__(self, numpy_rng, theano_rng=None, n_ins=64, hidden_layers_sizes=(48, 32),
                 n_outs=4, corruption_levels=(0.1, 0.1)):  # fmt: skip
        self.sigmoid_layers = []
        self.dA_layers = []
        self.params = []
        self.n_layers = len(hidden_layers_sizes)
        assert self.n_layers > 0
        if not theano_rng:
            theano_rng = RandomStreams(numpy_rng.randint(2**30))
        self.x = T.matrix("x")
        self.y = T.lvector("y")
        for i in range(self.n_layers):
            input_size = n_ins if i == 0 else hidden_layers_sizes[i - 1]
            layer_input = self.x if i == 0 else self.sigmoid_layers[-1].output
            sigmoid_layer = HiddenLayer(
                rng=numpy_rng,
                input=layer_input,
                n_in=input_size,
                n_out=hidden_layers_sizes[i],
                activation=T.nnet.sigmoid,
            )
            self.sigmoid_layers.append(sigmoid_layer)
            self.params.extend(sigmoid_layer.params)
            dA_layer = dA(
                numpy_rng=numpy_rng,
                theano_rng=theano_rng,
                input=layer_input,
                n_visible=input_size,
                n_hidden=hidden_layers_sizes[i],
                W=sigmoid_layer.W,
                bhid=sigmoid_layer.b,
            )
            self.dA_layers.append(dA_layer)
        self.logLayer = LogisticRegression(
            input=self.sigmoid_layers[-1].output, n_in=hidden_layers_sizes[-1], n_out=n_outs
        )
        self.params.extend(self.logLayer.params)
        self.finetune_cost = self.logLayer.negative_log_likelihood(self.y)
        self.errors = self.logLayer.errors(self.y)

    def pretraining_functions(self, train_set_x, batch_size):
        index = T.lscalar("index")
        corruption_level = T.scalar("corruption")
        learning_rate = T.scalar("lr")
        batch_begin = index * batch_size
        batch_end = batch_begin + batch_size
        pretrain_fns = []
        for dA_layer in self.dA_layers:
            cost, updates = dA_layer.get_cost_updates(corruption_level, learning_rate)
            fn = theano.function(
                inputs=[
                    index,
                    theano.In(corruption_level, value=0.2),
                    theano.In(learning_rate, value=0.1),
                ],
                outputs=cost,
                updates=updates,
                givens={self.x: train_set_x[batch_begin:batch_end]},
            )
            pretrain_fns.append(fn)
        return pretrain_fns

    def build_finetune_functions(self, train_set_x, train_set_y, batch_size, learning_rate):
        index = T.lscalar("index")
        gparams = T.grad(self.finetune_cost, self.params)
        updates = [
            (param, param - gparam * learning_rate) for param, gparam in zip(self.params, gparams)
        ]
        train_fn = theano.function(
            inputs=[index],
            outputs=self.finetune_cost,
            updates=updates,
            givens={
                self.x: train_set_x[index * batch_size : (index + 1) * batch_size],
                self.y: train_set_y[index * batch_size : (index + 1) * batch_size],
            },
            name="train",
        )
        test_score = theano.function(
            [], self.errors, givens={self.x: train_set_x, self.y: train_set_y}
        )
        return train_fn, test_score


def main(pretraining_epochs=5, finetune_epochs=15, batch_size=10, n_samples=400):
    """Returns (pre-training costs per layer and epoch, fine-tuning costs per epoch,
    training error before and after fine-tuning)."""
    numpy_rng = numpy.random.RandomState(89677)
    x, y = synthetic_labelled_bars(numpy_rng, n_samples)
    train_set_x = theano.shared(x, borrow=True)
    train_set_y = theano.shared(y, borrow=True)
    n_train_batches = n_samples // batch_size
    sda = SdA(numpy_rng=numpy_rng, n_ins=64, hidden_layers_sizes=[48, 32], n_outs=4)

    pretraining_fns = sda.pretraining_functions(train_set_x, batch_size)
    corruption_levels = [0.1, 0.2]
    pretrain_costs = []
    for i in range(sda.n_layers):
        layer_costs = []
        for epoch in range(pretraining_epochs):
            c = [
                pretraining_fns[i](index=b, corruption=corruption_levels[i], lr=0.1)
                for b in range(n_train_batches)
            ]
            layer_costs.append(float(numpy.mean(c)))
            print("Pre-training layer %i, epoch %d, cost %f" % (i, epoch, layer_costs[-1]))
        pretrain_costs.append(layer_costs)

    train_fn, test_score = sda.build_finetune_functions(
        train_set_x, train_set_y, batch_size, learning_rate=0.1
    )
    error_before = float(test_score())
    finetune_costs = []
    for epoch in range(finetune_epochs):
        c = [train_fn(b) for b in range(n_train_batches)]
        finetune_costs.append(float(numpy.mean(c)))
        print("Fine-tuning epoch %i, cost %f" % (epoch, finetune_costs[-1]))
    error_after = float(test_score())
    print("training error %.1f%% -> %.1f%%" % (100 * error_before, 100 * error_after))
    return pretrain_costs, finetune_costs, (error_before, error_after)


if __name__ == "__main__":
    main()
