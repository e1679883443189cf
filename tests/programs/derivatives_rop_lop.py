"""The Theano tutorial's "Derivatives" page, its R-operator, L-operator and Hessian-times-a-
vector sections, written against Theano's API; each function returns what its section's
compiled function gives for the values passed."""

import graphc as theano
import graphc.tensor as T


def r_operator(W_val, V_val, x_val):  # noqa: N803
    W = T.dmatrix("W")  # noqa: N806
    V = T.dmatrix("V")  # noqa: N806
    x = T.dvector("x")
    y = T.dot(x, W)
    JV = T.Rop(y, W, V)  # noqa: N806
    f = theano.function([W, V, x], JV)
    return f(W_val, V_val, x_val)


def l_operator(v_val, x_val):
    W = T.dmatrix("W")  # noqa: N806
    v = T.dvector("v")
    x = T.dvector("x")
    y = T.dot(x, W)
    VJ = T.Lop(y, W, v)  # noqa: N806
    f = theano.function([v, x], VJ)
    return f(v_val, x_val)


def hessian_times_vector(x_val, v_val):
    x = T.dvector("x")
    v = T.dvector("v")
    y = T.sum(x**2)
    gy = T.grad(y, x)
    vH = T.grad(T.sum(gy * v), x)  # noqa: N806
    f = theano.function([x, v], vH)
    by_grad = f(x_val, v_val)
    Hv = T.Rop(gy, x, v)  # noqa: N806
    f = theano.function([x, v], Hv)
    return by_grad, f(x_val, v_val)


if __name__ == "__main__":  # the page's values
    print(r_operator([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]))
    print(l_operator([2, 2], [0, 1]))
    print(hessian_times_vector([4, 4], [2, 2]))
