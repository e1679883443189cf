"""The "Loop" page of the Theano tutorial (scan), written against Theano's API: each example
checks its result against numpy, as the page prints it."""

import numpy as np

import graphc as theano
import graphc.tensor as T


def power():
    k = T.iscalar("k")
    A = T.vector("A")
    result, updates = theano.scan(
        fn=lambda prior_result, A: prior_result * A,
        outputs_info=T.ones_like(A),
        non_sequences=A,
        n_steps=k,
    )
    final_result = result[-1]
    power = theano.function(inputs=[A, k], outputs=final_result, updates=updates)
    assert np.allclose(power(range(10), 2), np.arange(10) ** 2)


def polynomial():
    coefficients = theano.tensor.vector("coefficients")
    x = T.scalar("x")
    max_coefficients_supported = 10000
    components, updates = theano.scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable**power),
        outputs_info=None,
        sequences=[coefficients, theano.tensor.arange(max_coefficients_supported)],
        non_sequences=x,
    )
    polynomial = components.sum()
    calculate_polynomial = theano.function(inputs=[coefficients, x], outputs=polynomial)
    test_coefficients = np.asarray([1, 0, 2], dtype=theano.config.floatX)
    test_value = 3
    assert calculate_polynomial(test_coefficients, test_value) == 19.0


def sum_with_reduce_and_accumulator():
    up_to = T.iscalar("up_to")

    def accumulate_by_adding(arange_val, sum_to_date):
        return sum_to_date + arange_val

    seq = T.arange(up_to)
    outputs_info = T.as_tensor_variable(np.asarray(0, seq.dtype))
    scan_result, scan_updates = theano.scan(
        fn=accumulate_by_adding, outputs_info=outputs_info, sequences=seq
    )
    triangular_sequence = theano.function(inputs=[up_to], outputs=scan_result)
    some_num = 15
    assert np.array_equal(
        triangular_sequence(some_num), [n * (n + 1) // 2 for n in range(some_num)]
    )


def tanh_rows_and_recurrence():
    X = T.matrix("X")
    W = T.matrix("W")
    b_sym = T.vector("b_sym")
    results, updates = theano.scan(lambda v: T.tanh(T.dot(v, W) + b_sym), sequences=X)
    compute_elementwise = theano.function(inputs=[X, W, b_sym], outputs=results)
    x = np.eye(2, dtype=theano.config.floatX)
    w = np.ones((2, 2), dtype=theano.config.floatX)
    b = np.ones((2), dtype=theano.config.floatX)
    b[1] = 2
    assert np.allclose(compute_elementwise(x, w, b), np.tanh(x.dot(w) + b))

    # x(t) = tanh(x(t - 1).dot(W) + y(t).dot(U) + p(T - t).dot(V))
    X = T.vector("X")
    Y = T.matrix("Y")
    U, V, P = T.matrix("U"), T.matrix("V"), T.matrix("P")
    results, updates = theano.scan(
        lambda y, p, x_tm1: T.tanh(T.dot(x_tm1, W) + T.dot(y, U) + T.dot(p, V)),
        sequences=[Y, P[::-1]],
        outputs_info=[X],
    )
    compute_seq = theano.function(inputs=[X, W, Y, U, P, V], outputs=results)
    x = np.zeros((2), dtype=theano.config.floatX)
    x[1] = 1
    w = np.ones((2, 2), dtype=theano.config.floatX)
    y = np.ones((5, 2), dtype=theano.config.floatX)
    y[0, :] = -3
    u = np.ones((2, 2), dtype=theano.config.floatX)
    p = np.ones((5, 2), dtype=theano.config.floatX)
    p[0, :] = 3
    v = np.ones((2, 2), dtype=theano.config.floatX)
    x_res = np.zeros((5, 2), dtype=theano.config.floatX)
    x_res[0] = np.tanh(x.dot(w) + y[0].dot(u) + p[4].dot(v))
    for i in range(1, 5):
        x_res[i] = np.tanh(x_res[i - 1].dot(w) + y[i].dot(u) + p[4 - i].dot(v))
    assert np.allclose(compute_seq(x, w, y, u, p, v), x_res)


def norms_and_trace():
    X = T.matrix("X")
    results, updates = theano.scan(lambda x_i: T.sqrt((x_i**2).sum()), sequences=[X])
    compute_norm_lines = theano.function(inputs=[X], outputs=results)
    x = np.diag(np.arange(1, 6, dtype=theano.config.floatX), 1)
    assert np.allclose(compute_norm_lines(x), np.sqrt((x**2).sum(1)))

    floatX = theano.config.floatX
    results, updates = theano.scan(
        lambda i, j, t_f: T.cast(X[i, j] + t_f, floatX),
        sequences=[T.arange(X.shape[0]), T.arange(X.shape[1])],
        outputs_info=np.asarray(0.0, dtype=floatX),
    )
    result = results[-1]
    compute_trace = theano.function(inputs=[X], outputs=result)
    x = np.eye(5, dtype=theano.config.floatX)
    x[0] = np.arange(5, dtype=theano.config.floatX)
    assert np.allclose(compute_trace(x), np.diagonal(x).sum())


def taps_and_shared_updates():
    # x(t) = x(t - 2).dot(U) + x(t - 1).dot(V) + tanh(x(t - 1).dot(W) + b)
    X = T.matrix("X")
    W, U, V = T.matrix("W"), T.matrix("U"), T.matrix("V")
    b_sym = T.vector("b_sym")
    n_sym = T.iscalar("n_sym")
    results, updates = theano.scan(
        lambda x_tm2, x_tm1: T.dot(x_tm2, U) + T.dot(x_tm1, V) + T.tanh(T.dot(x_tm1, W) + b_sym),
        n_steps=n_sym,
        outputs_info=[dict(initial=X, taps=[-2, -1])],
    )
    compute_seq2 = theano.function(inputs=[X, U, V, W, b_sym, n_sym], outputs=results)
    x = np.zeros((2, 2), dtype=theano.config.floatX)
    x[1, 1] = 1
    w = 0.5 * np.ones((2, 2), dtype=theano.config.floatX)
    u = 0.5 * (np.ones((2, 2), dtype=theano.config.floatX) - np.eye(2))
    v = 0.5 * np.ones((2, 2), dtype=theano.config.floatX)
    n = 10
    b = np.ones((2), dtype=theano.config.floatX)
    x_res = np.zeros((10, 2))
    x_res[0] = x[0].dot(u) + x[1].dot(v) + np.tanh(x[1].dot(w) + b)
    x_res[1] = x[1].dot(u) + x_res[0].dot(v) + np.tanh(x_res[0].dot(w) + b)
    x_res[2] = x_res[0].dot(u) + x_res[1].dot(v) + np.tanh(x_res[1].dot(w) + b)
    for i in range(2, 10):
        x_res[i] = x_res[i - 2].dot(u) + x_res[i - 1].dot(v) + np.tanh(x_res[i - 1].dot(w) + b)
    assert np.allclose(compute_seq2(x, u, v, w, b, n), x_res)

    # a shared variable updated by scan, and a random stream drawn inside it
    from graphc.tensor.shared_randomstreams import RandomStreams

    trng = RandomStreams(1234)
    d = 0.5
    W = theano.shared(np.full((2, 2), d), name="W")
    bvis = theano.shared(np.zeros(2), name="bvis")
    bhid = theano.shared(np.zeros(2), name="bhid")

    def OneStep(vsample):
        hmean = T.nnet.sigmoid(theano.dot(vsample, W) + bhid)
        hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
        vmean = T.nnet.sigmoid(theano.dot(hsample, W.T) + bvis)
        return trng.binomial(size=vsample.shape, n=1, p=vmean, dtype=theano.config.floatX)

    sample = T.vector()
    values, updates = theano.scan(OneStep, outputs_info=sample, n_steps=10)
    gibbs10 = theano.function([sample], values[-1], updates=updates)
    out = gibbs10(np.ones(2))
    assert out.shape == (2,) and set(out.tolist()) <= {0.0, 1.0}

    a = theano.shared(1)
    values, updates = theano.scan(lambda: {a: a + 1}, n_steps=10)
    b = a + 1
    c = updates[a] + 1
    f = theano.function([], [b, c], updates=updates)
    assert [int(v) for v in f()] == [2, 12]
    assert int(a.get_value()) == 11


def jacobian_and_hessian():
    x = T.dvector("x")
    y = x**2
    J, updates = theano.scan(
        lambda i, y, x: T.grad(y[i], x), sequences=T.arange(y.shape[0]), non_sequences=[y, x]
    )
    f = theano.function([x], J, updates=updates)
    assert np.allclose(f([4, 4]), [[8, 0], [0, 8]])
    assert np.allclose(
        theano.function([x], theano.gradient.jacobian(y, x))([4, 4]), [[8, 0], [0, 8]]
    )

    cost = y.sum()
    gy = T.grad(cost, x)
    H, updates = theano.scan(
        lambda i, gy, x: T.grad(gy[i], x), sequences=T.arange(gy.shape[0]), non_sequences=[gy, x]
    )
    f = theano.function([x], H, updates=updates)
    assert np.allclose(f([4, 4]), [[2, 0], [0, 2]])
    assert np.allclose(
        theano.function([x], theano.gradient.hessian(cost, x))([4, 4]), [[2, 0], [0, 2]]
    )


def main():
    for example in (
        power,
        polynomial,
        sum_with_reduce_and_accumulator,
        tanh_rows_and_recurrence,
        norms_and_trace,
        taps_and_shared_updates,
        jacobian_and_hessian,
    ):
        example()
        print(f"{example.__name__}: ok")


if __name__ == "__main__":
    main()
