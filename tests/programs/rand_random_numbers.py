"""The "Using Random Numbers" page of the Theano tutorial, written against Theano's API.

Each step checks what the page says happens; ``main()`` returns the cost curve of the
page's closing example (logistic regression trained on random data)."""

# ruff: noqa: UP004, UP031  (kept in the tutorials' Python 2 era style)

import numpy

import graphc as theano
import graphc.tensor as T
from graphc import function
from graphc.sandbox.rng_mrg import MRG_RandomStreams
from graphc.tensor.shared_randomstreams import RandomStreams


def brief_example():
    srng = RandomStreams(seed=234)
    rv_u = srng.uniform((2, 2))
    rv_n = srng.normal((2, 2))
    f = function([], rv_u)
    g = function([], rv_n, no_default_updates=True)  # not updating rv_n.rng
    nearly_zeros = function([], rv_u + rv_u - 2 * rv_u)

    f_val0, f_val1 = f(), f()
    assert not numpy.array_equal(f_val0, f_val1)  # different numbers from f each time
    g_val0, g_val1 = g(), g()
    assert numpy.array_equal(g_val0, g_val1)  # same numbers from g every time
    assert numpy.allclose(nearly_zeros(), 0)  # a random variable is drawn once per call

    # seeding streams
    srng.seed(902340)  # seeds rv_u and rv_n with different seeds each
    after_seed = f()
    srng.seed(902340)
    assert numpy.array_equal(f(), after_seed)

    # sharing streams between functions
    state_after_v0 = rv_u.rng.get_value()
    nearly_zeros()  # this affects rv_u's generator
    v1 = f()
    rv_u.rng.set_value(state_after_v0, borrow=True)
    v2 = f()  # v2 != v1
    v3 = f()  # v3 == v1
    assert not numpy.array_equal(v1, v2) and numpy.array_equal(v1, v3)


class Graph:
    def __init__(self, seed=123):
        self.rng = RandomStreams(seed)
        self.y = self.rng.uniform(size=(1,))


def copy_random_state(g1, g2):
    if isinstance(g1.rng, MRG_RandomStreams):
        g2.rng.rstate = g1.rng.rstate
    for su1, su2 in zip(g1.rng.state_updates, g2.rng.state_updates):
        su2[0].set_value(su1[0].get_value())


def copying_random_state():
    g1 = Graph(seed=123)
    f1 = theano.function([], g1.y)
    g2 = Graph(seed=987)
    f2 = theano.function([], g2.y)
    assert f1() != f2()
    copy_random_state(g1, g2)
    assert f1() == f2()  # now both draw the same number


def other_implementations():
    srng = MRG_RandomStreams(seed=234)
    u = function([], srng.uniform((100,)))()
    assert u.shape == (100,) and 0 <= u.min() and u.max() < 1


def logistic_regression(training_steps=100):
    rng = numpy.random
    rng.seed(0)
    N, feats = 400, 784
    D = (rng.randn(N, feats), rng.randint(size=N, low=0, high=2))
    x = T.dmatrix("x")
    y = T.dvector("y")
    w = theano.shared(rng.randn(feats) * 0.01, name="w")
    b = theano.shared(0.0, name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = theano.function(
        inputs=[x, y], outputs=[prediction, xent.mean()],
        updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)),
    )  # fmt: skip
    predict = theano.function(inputs=[x], outputs=prediction)
    costs = [float(train(D[0], D[1])[1]) for _ in range(training_steps)]
    accuracy = float((predict(D[0]) == D[1]).mean())
    print("cost %.4f -> %.4f, training accuracy %.2f" % (costs[0], costs[-1], accuracy))
    return costs


def main():
    brief_example()
    copying_random_state()
    other_implementations()
    return logistic_regression()


if __name__ == "__main__":
    main()
