"""A Restricted Boltzmann Machine trained with persistent contrastive divergence, in the
style of the classic Theano tutorial: the Gibbs chain is a scan whose steps draw binomial
samples from a random stream, the gradient stops at the chain's end (consider_constant).
Synthetic binary data from a few prototypes; ``main()`` returns the reconstruction
cross-entropy per epoch."""

import numpy

import graphc as theano
import graphc.tensor as T
from graphc.sandbox.rng_mrg import MRG_RandomStreams as RandomStreams


class RBM:
    def __init__(self, input, n_visible, n_hidden, numpy_rng, theano_rng):
        initial_W = numpy.asarray(
            numpy_rng.uniform(
                low=-4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                high=4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                size=(n_visible, n_hidden),
            ),
            dtype=theano.config.floatX,
        )
        self.W = theano.shared(value=initial_W, name="W", borrow=True)
        self.hbias = theano.shared(
            numpy.zeros(n_hidden, dtype=theano.config.floatX), name="hbias", borrow=True
        )
        self.vbias = theano.shared(
            numpy.zeros(n_visible, dtype=theano.config.floatX), name="vbias", borrow=True
        )
        self.input = input
        self.theano_rng = theano_rng
        self.params = [self.W, self.hbias, self.vbias]

    def free_energy(self, v_sample):
        wx_b = T.dot(v_sample, self.W) + self.hbias
        vbias_term = T.dot(v_sample, self.vbias)
        hidden_term = T.sum(T.log(1 + T.exp(wx_b)), axis=1)
        return -hidden_term - vbias_term

    def propup(self, vis):
        pre_sigmoid_activation = T.dot(vis, self.W) + self.hbias
        return [pre_sigmoid_activation, T.nnet.sigmoid(pre_sigmoid_activation)]

    def sample_h_given_v(self, v0_sample):
        pre_sigmoid_h1, h1_mean = self.propup(v0_sample)
        h1_sample = self.theano_rng.binomial(
            size=h1_mean.shape, n=1, p=h1_mean, dtype=theano.config.floatX
        )
        return [pre_sigmoid_h1, h1_mean, h1_sample]

    def propdown(self, hid):
        pre_sigmoid_activation = T.dot(hid, self.W.T) + self.vbias
        return [pre_sigmoid_activation, T.nnet.sigmoid(pre_sigmoid_activation)]

    def sample_v_given_h(self, h0_sample):
        pre_sigmoid_v1, v1_mean = self.propdown(h0_sample)
        v1_sample = self.theano_rng.binomial(
            size=v1_mean.shape, n=1, p=v1_mean, dtype=theano.config.floatX
        )
        return [pre_sigmoid_v1, v1_mean, v1_sample]

    def gibbs_hvh(self, h0_sample):
        pre_sigmoid_v1, v1_mean, v1_sample = self.sample_v_given_h(h0_sample)
        pre_sigmoid_h1, h1_mean, h1_sample = self.sample_h_given_v(v1_sample)
        return [pre_sigmoid_v1, v1_mean, v1_sample, pre_sigmoid_h1, h1_mean, h1_sample]

    def get_cost_updates(self, lr=0.1, persistent=None, k=1):
        pre_sigmoid_ph, ph_mean, ph_sample = self.sample_h_given_v(self.input)
        chain_start = ph_sample if persistent is None else persistent
        (
            [pre_sigmoid_nvs, nv_means, nv_samples, pre_sigmoid_nhs, nh_means, nh_samples],
            updates,
        ) = theano.scan(
            self.gibbs_hvh,
            outputs_info=[None, None, None, None, None, chain_start],
            n_steps=k,
            name="gibbs_hvh",
        )
        chain_end = nv_samples[-1]
        cost = T.mean(self.free_energy(self.input)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        for gparam, param in zip(gparams, self.params):
            updates[param] = param - gparam * T.cast(lr, dtype=theano.config.floatX)
        if persistent:
            updates[persistent] = nh_samples[-1]
        monitoring_cost = self.get_reconstruction_cost(updates, pre_sigmoid_nvs[-1])
        return monitoring_cost, updates

    def get_reconstruction_cost(self, updates, pre_sigmoid_nv):
        return T.mean(
            T.sum(
                self.input * T.log(T.nnet.sigmoid(pre_sigmoid_nv))
                + (1 - self.input) * T.log(1 - T.nnet.sigmoid(pre_sigmoid_nv)),
                axis=1,
            )
        )


def data(rng, n=200, n_visible=36):
    protos = rng.binomial(1, 0.5, size=(4, n_visible))
    rows = protos[rng.randint(0, 4, n)]
    flips = rng.binomial(1, 0.05, size=rows.shape)
    return numpy.abs(rows - flips).astype(theano.config.floatX)


def main(epochs=8, batch_size=20, k=1, persistent=False):
    rng = numpy.random.RandomState(123)
    train_set = theano.shared(data(rng))
    index = T.lscalar()
    x = T.matrix("x")
    theano_rng = RandomStreams(rng.randint(2**30))
    persistent_chain = theano.shared(
        numpy.zeros((batch_size, 24), dtype=theano.config.floatX), borrow=True
    )
    rbm = RBM(input=x, n_visible=36, n_hidden=24, numpy_rng=rng, theano_rng=theano_rng)
    cost, updates = rbm.get_cost_updates(
        lr=0.1, persistent=persistent_chain if persistent else None, k=k
    )
    train_rbm = theano.function(
        [index],
        cost,
        updates=updates,
        givens={x: train_set[index * batch_size : (index + 1) * batch_size]},
        name="train_rbm",
    )
    n_batches = 200 // batch_size
    costs = []
    for _ in range(epochs):
        costs.append(-float(numpy.mean([train_rbm(i) for i in range(n_batches)])))
    return costs


if __name__ == "__main__":
    print(main())
