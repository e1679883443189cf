"""The Theano tutorial's "Derivatives", "Conditions" and "Debugging" pages (all but the
parts built with scan), written against Theano's API; each step checks what the page says
happens. ``main()`` returns the cost
curve of a gradient descent on a quadratic built from the derivatives page."""

# ruff: noqa: UP031  (kept in the tutorials' style)

import numpy

import graphc as theano
import graphc.tensor as T
from graphc.ifelse import ifelse


def derivatives():
    x = T.dscalar("x")
    y = x**2
    gy = T.grad(y, x)
    f = theano.function([x], gy)
    assert f(4) == 8 and f(94.2) == 188.4
    x = T.dmatrix("x")
    s = T.sum(1 / (1 + T.exp(-x)))
    gs = T.grad(s, x)
    dlogistic = theano.function([x], gs)
    expect = [[0.25, 0.19661193], [0.19661193, 0.10499359]]
    assert numpy.allclose(dlogistic([[0, 1], [-1, -2]]), expect)
    # (the page's jacobian and hessian are built with scan: see the scan programs)


def conditions():
    a, b = T.scalars("a", "b")
    x, y = T.matrices("x", "y")
    z_switch = T.switch(T.lt(a, b), T.mean(x), T.mean(y))
    z_lazy = ifelse(T.lt(a, b), T.mean(x), T.mean(y))
    f_switch = theano.function([a, b, x, y], z_switch, mode=theano.Mode(linker="vm"))
    f_lazyifelse = theano.function([a, b, x, y], z_lazy, mode=theano.Mode(linker="vm"))
    val1, val2 = 0.0, 1.0
    big_mat1 = numpy.ones((100, 100))
    big_mat2 = numpy.zeros((100, 100))
    assert f_switch(val1, val2, big_mat1, big_mat2) == 1.0
    assert f_lazyifelse(val2, val1, big_mat1, big_mat2) == 0.0


def debugging():
    x = T.dvector("x")
    x_printed = theano.printing.Print("this is a very important value")(x)
    f_with_print = theano.function([x], x_printed * 5)
    assert numpy.array_equal(f_with_print([1, 2, 3]), [5, 10, 15])

    nan_nodes = []

    def detect_nan(i, node, fn):
        for output in fn.outputs:
            if not isinstance(output[0], numpy.random.RandomState) and numpy.isnan(output[0]).any():
                print("*** NaN detected ***")
                nan_nodes.append(str(node))
                break

    x = T.dscalar("x")
    f = theano.function(
        [x],
        [T.log(x) * x],
        mode=theano.compile.MonitorMode(post_func=detect_nan).excluding("fusion", "inplace"),
    )
    with numpy.errstate(invalid="ignore"):
        f(0)  # log(0) * 0 = -inf * 0 = nan
    assert nan_nodes and "mul" in nan_nodes[0]


def gradient_descent(steps=50):
    w = theano.shared(numpy.array([3.0, -2.0]), name="w")
    target = numpy.array([1.0, 0.5])
    cost = T.sum((w - target) ** 2) + 0.1 * T.sum(w**2)
    train = theano.function([], cost, updates=[(w, w - 0.1 * T.grad(cost, w))])
    return [float(train()) for _ in range(steps)]


def main():
    derivatives()
    conditions()
    debugging()
    costs = gradient_descent()
    print("cost %.4f -> %.4f" % (costs[0], costs[-1]))
    return costs


if __name__ == "__main__":
    main()
