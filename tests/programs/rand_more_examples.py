"""The "More Examples" page of the Theano tutorial (logistic function, several outputs,
default values, shared variables, givens, copying functions) written against Theano's
API; each step checks what the page says happens. ``main()`` returns the cost curve of a
small logistic regression trained at the end."""

# ruff: noqa: UP031  (kept in the tutorials' style)

import numpy

import graphc as theano
import graphc.tensor as T
from graphc import In, function, shared


def logistic_function():
    x = T.dmatrix("x")
    s = 1 / (1 + T.exp(-x))
    logistic = theano.function([x], s)
    s2 = (1 + T.tanh(x / 2)) / 2
    logistic2 = theano.function([x], s2)
    m = [[0, 1], [-1, -2]]
    assert numpy.allclose(logistic(m), [[0.5, 0.73105858], [0.26894142, 0.11920292]])
    assert numpy.allclose(logistic(m), logistic2(m))


def several_outputs():
    a, b = T.dmatrices("a", "b")
    diff = a - b
    abs_diff = abs(diff)
    diff_squared = diff**2
    f = theano.function([a, b], [diff, abs_diff, diff_squared])
    d, ad, d2 = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    assert numpy.array_equal(d, [[1, 0], [-1, -2]])
    assert numpy.array_equal(ad, [[1, 0], [1, 2]])
    assert numpy.array_equal(d2, [[1, 0], [1, 4]])


def default_values():
    x, y = T.dscalars("x", "y")
    z = x + y
    f = function([x, In(y, value=1)], z)
    assert f(33) == 34 and f(33, 2) == 35
    x, y, w = T.dscalars("x", "y", "w")
    z = (x + y) * w
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], z)
    assert f(33) == 68 and f(33, 2) == 70
    assert f(33, 0, 1) == 33 and f(33, w_by_name=1) == 34
    assert f(33, w_by_name=1, y=0) == 33


def shared_variables():
    state = shared(0)
    inc = T.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert state.get_value() == 0
    accumulator(1)
    assert state.get_value() == 1
    accumulator(300)
    assert state.get_value() == 301
    state.set_value(-1)
    accumulator(3)
    assert state.get_value() == 2
    decrementor = function([inc], state, updates=[(state, state - inc)])
    decrementor(2)
    assert state.get_value() == 0

    fn_of_state = state * 2 + inc
    foo = T.scalar(dtype=state.dtype)  # the type of the value we replace state with
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7
    assert state.get_value() == 0  # old state still there, but we did not use it
    return state, inc, accumulator


def copying_functions(state, inc, accumulator):
    accumulator(10)
    assert state.get_value() == 10
    new_state = theano.shared(0)
    new_accumulator = accumulator.copy(swap={state: new_state})
    new_accumulator(100)
    assert new_state.get_value() == 100 and state.get_value() == 10
    null_accumulator = accumulator.copy(delete_updates=True)
    null_accumulator(9000)
    assert state.get_value() == 10


def logistic_regression(training_steps=60):
    rng = numpy.random.RandomState(0)
    N, feats = 200, 50
    D = (rng.randn(N, feats), rng.randint(size=N, low=0, high=2))
    x = T.dmatrix("x")
    y = T.dvector("y")
    w = theano.shared(rng.randn(feats), name="w")
    b = theano.shared(0.0, name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w**2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = theano.function(
        inputs=[x, y], outputs=cost, updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb))
    )
    return [float(train(D[0], D[1])) for _ in range(training_steps)]


def main():
    logistic_function()
    several_outputs()
    default_values()
    copying_functions(*shared_variables())
    costs = logistic_regression()
    print("cost %.4f -> %.4f" % (costs[0], costs[-1]))
    return costs


if __name__ == "__main__":
    main()
