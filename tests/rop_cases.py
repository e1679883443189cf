"""Graphs exercising every R_op rule (and the transposed-gradient fallback), with points.

Each case is ``name -> (build, points)``: ``points(rng, n, m)`` gives numpy values (sizes
n, m >= 2 drawn by the tests) and ``build(*inputs)`` the output Variable (or list).
"""

from __future__ import annotations

import numpy as np

import graphc
import graphc.tensor as T
from graphc.gradient import Retype
from graphc.ifelse import ifelse
from graphc.tensor import math as tm
from graphc.tensor import nnet
from graphc.tensor.blas import dot22, gemm, gemv
from graphc.tensor.extra_ops import ArgSortOp, PermuteAlongAxis
from graphc.tensor.print_op import Print
from graphc.tensor.signal.pool import MaxPoolGradGrad, pool_2d
from graphc.tensor.type import TensorType


def _n(rng, *shape):
    return rng.standard_normal(shape)


def _mat(rng, n, m):
    return [_n(rng, n, m)]


def _two(rng, n, m):
    return [_n(rng, n, m), _n(rng, n, m)]


def _row(rng, n, m):
    return [_n(rng, n, m), _n(rng, 1, m)]


def _labels(rng, n, m):
    return rng.integers(0, m, size=n).astype("int64")


def _img(rng, n, m):
    return [_n(rng, 2, 2, n + 3, m + 3), _n(rng, 3, 2, 2, 2)]


_ELEMWISE = {
    "exp": (lambda x: T.exp(x * 0.5), _mat),
    "log_sqrt": (lambda x: T.log(x * x + 1) + T.sqrt(x * x + 2), _mat),
    "tanh_sigmoid_softplus": (lambda x: T.tanh(x) * T.sigmoid(x) + nnet.softplus(x), _mat),
    "trig": (lambda x: T.sin(x) * T.cos(x) + T.tan(x * 0.3) + T.arctan(x), _mat),
    "arcsin_arccos": (lambda x: T.arcsin(T.tanh(x) * 0.9) + T.arccos(T.tanh(x) * 0.8), _mat),
    "hyperbolic": (lambda x: T.sinh(x) - T.cosh(x * 0.5), _mat),
    "exp_log_bases": (lambda x: T.exp2(x) + T.log2(x * x + 1) + T.log10(x * x + 3), _mat),
    "log1p_expm1_erf": (lambda x: T.log1p(x * x) + T.expm1(x * 0.3) + T.erf(x), _mat),
    "pow_div_broadcast": (lambda x, r: (x * x + 1) ** r / (r * r + 1), _row),
    "mul_add_sub_neg": (lambda x, y: x * y * x + y - x - (-T.sqr(y)), _two),
    "maximum_minimum_abs": (lambda x, y: T.maximum(x, y) * T.minimum(x, y * 2) + abs(x), _two),
    "switch_clip": (lambda x, y: T.switch(x > 0, x * y, y) + T.clip(x, -0.5, 0.5), _two),
    "arctan2_mod": (lambda x, y: T.arctan2(x, y) + tm.mod(x, 3.0), _two),
    "fill": (lambda x, r: tm.second(x, r * r) + x, _row),
    # float32 rounding: differences over a longer step (the function is linear)
    "cast": (
        lambda x: T.cast(T.cast(x, "float32") * 2, "float64") + x * 3,
        _mat,
        {"eps": 1e-2, "atol": 1e-4},
    ),
}

_SHAPES = {
    "dimshuffle": (lambda x: x.dimshuffle(1, "x", 0) * 2, _mat),
    "reshape": (lambda x: x.reshape((x.shape[0] * x.shape[1],)), _mat),
    "specify_shape": (lambda x: T.specify_shape(x, x.shape) ** 2, _mat),
    "alloc": (lambda x: T.alloc(x[0], 3, x.shape[1]), _mat),
    "subtensor": (lambda x: x[1:, ::2] * x[0, 0] + x[:-1, ::2], _mat),
    "advanced_subtensor1": (lambda x: x[[0, 1, 0]], _mat),
    "advanced_subtensor": (lambda x: x[[0, 1, 0], [1, 0, 1]], _mat),
    "inc_subtensor": (lambda x, y: T.inc_subtensor(x[1:], y[1:] * y[1:]), _two),
    "set_subtensor": (lambda x, y: T.set_subtensor(x[:, :1], y[:, 1:2]), _two),
    "advanced_inc_subtensor1": (
        lambda x, y: T.inc_subtensor(x[[0, 0, 1]], y[[1, 1, 0]]) + T.set_subtensor(x[[1]], y[:1]),
        _two,
    ),
    "advanced_set_subtensor": (lambda x, y: T.set_subtensor(x[[0, 1], [1, 0]], y[0, :2]), _two),
    "advanced_inc_subtensor": (lambda x, y: T.inc_subtensor(x[[0, 1], [1, 1]], y[1, :2]), _two),
    "join": (lambda x, y: T.concatenate([x, y * y], axis=1), _two),
    "stack": (lambda x, y: T.stack([x, y], axis=1), _two),
    "make_vector": (lambda x, y: T.stack([x.sum(), (y * y).sum()]), _two),
    "print": (lambda x: Print("", global_fn=lambda op, v: None)(x) * x, _mat),
    "retype": (lambda x: Retype(TensorType("float64", (None, None)))(x * x), _mat),
}

_PRODUCTS = {
    "dot_mm": (lambda x, y: T.dot(x, y.T), _two),
    "dot_mv_vm_vv": (lambda x, y: T.dot(x, y[0]) + T.dot(y[1], x.T) + T.dot(x[0], y[0]), _two),
    "dot22": (lambda x, y: dot22(x.T, y), _two),
    "gemv": (
        lambda A, y, x, a, b: gemv(y, a, A, x, b),
        lambda rng, n, m: [_n(rng, n, m), _n(rng, n), _n(rng, m), _n(rng), _n(rng)],
    ),
    "gemm": (
        lambda z, a, x, y, b: gemm(z, a, x, y, b),
        lambda rng, n, m: [_n(rng, n, n), _n(rng), _n(rng, n, m), _n(rng, m, n), _n(rng)],
    ),
    "matmul": (lambda x, y: T.matmul(x, y), lambda rng, n, m: [_n(rng, 2, n, m), _n(rng, m, 3)]),
    "batched_dot": (
        lambda x, y: T.batched_dot(x, y),
        lambda rng, n, m: [_n(rng, 2, n, m), _n(rng, 2, m, 3)],
    ),
    "dot_nd": (lambda x, w: T.dot(x, w), lambda rng, n, m: [_n(rng, 2, n, m), _n(rng, m, 3)]),
}

_REDUCTIONS = {
    "sum_mean_var": (lambda x: x.sum(axis=0) + x.mean(axis=0) + x.var(axis=0), _mat),
    "prod": (lambda x: T.prod(x, axis=1), _mat),
    "max_min": (lambda x: T.max(x) + T.min(x, axis=1).sum(), _mat),
}

_NNET = {
    "softmax": (lambda x: nnet.softmax(x) + nnet.softmax(x, axis=0), _mat),
    "softmax_vector_row": (lambda x: nnet.softmax(x[0] * 2), _mat),
    "log_softmax": (lambda x: nnet.log_softmax(x) + nnet.log_softmax(x, axis=0), _mat),
    "crossentropy_softmax_1hot": (
        lambda x, y: list(nnet.crossentropy_softmax_1hot(x, y)),
        lambda rng, n, m: [_n(rng, n, m), _labels(rng, n, m)],
    ),
    "crossentropy_categorical_1hot": (
        lambda x, y: nnet.crossentropy_categorical_1hot(nnet.softmax(x), y),
        lambda rng, n, m: [_n(rng, n, m), _labels(rng, n, m)],
    ),
    "crossentropy_softmax_1hot_dx": (
        lambda g, x, y: nnet.CrossentropySoftmax1HotDx()(g, nnet.softmax(x), y),
        lambda rng, n, m: [_n(rng, n), _n(rng, n, m), _labels(rng, n, m)],
    ),
    "crossentropy_categorical_1hot_grad": (
        lambda g, x, y: nnet.CrossentropyCategorical1HotGrad()(g, nnet.softmax(x), y),
        lambda rng, n, m: [_n(rng, n), _n(rng, n, m), _labels(rng, n, m)],
    ),
    "conv2d": (lambda x, w: nnet.conv2d(x, w), _img),
    "conv2d_grad_inputs": (lambda x, w: graphc.grad((nnet.conv2d(x, w) ** 2).sum(), x), _img),
    "conv2d_grad_weights": (
        lambda x, w: graphc.grad((nnet.conv2d(x, w, border_mode="half") ** 2).sum(), w),
        _img,
    ),
    "pool_max": (lambda x: pool_2d(x, (2, 2), ignore_border=True), _mat),
    "pool_sum_average": (
        lambda x: (
            pool_2d(x, (2, 1), ignore_border=False, mode="sum")
            + pool_2d(x, (2, 1), ignore_border=False, mode="average_exc_pad")
        ),
        _mat,
    ),
    "max_pool_grad": (
        lambda x, t: graphc.grad((pool_2d(x * x, (2, 2), ignore_border=True) * t[0, 0]).sum(), x),
        _two,
    ),  # fmt: skip
    "max_pool_grad_grad": (
        lambda x, t: MaxPoolGradGrad((2, 2), True, (2, 2), (0, 0), "max")(
            x, pool_2d(x, (2, 2), ignore_border=True), t * x
        ),
        _two,
    ),
    "average_pool_grad": (
        lambda x, t: graphc.grad(
            (pool_2d(x, (2, 2), ignore_border=True, mode="average_inc_pad") ** 2 * t[0, 0]).sum(),
            x,
        ),
        _two,
    ),
}

_EXTRA = {
    "cumsum": (lambda x: T.cumsum(x * x, axis=1), _mat),
    "cumprod": (lambda x: T.cumprod(x, axis=0), _mat),  # transposed gradient
    "repeat_tile": (lambda x: T.repeat(x, 2, axis=0).sum() + T.tile(x, (2, 1)), _mat),
    "repeat_tile_grads": (
        lambda x: graphc.grad(
            (T.repeat(x, 2, axis=0) ** 3).sum() + (T.tile(x, (1, 2)) ** 3).sum(), x
        ),
        _mat,
    ),  # fmt: skip
    "sort": (lambda x: T.sort(x * 2, axis=1), _mat),  # transposed gradient
    "permute_along_axis": (
        lambda x, y: PermuteAlongAxis(1, True)(x, ArgSortOp("quicksort", 1)(y)),
        _two,
    ),
    "ifelse": (
        lambda x, y, c: ifelse(c, x * y, x + y),
        lambda rng, n, m: [_n(rng, n, m), _n(rng, n, m), np.int64(rng.integers(0, 2))],
    ),
    "mlp": (
        lambda x, w, b: nnet.softmax(T.tanh(T.dot(x, w) + b)).max(axis=1),
        lambda rng, n, m: [_n(rng, n, m), _n(rng, m, 3), _n(rng, 1, 3)],
    ),
}


def _rnn(x, h0, w):
    hs, _ = graphc.scan(
        lambda xt, h, w: T.tanh(T.dot(w, h) + xt) * h, sequences=x, outputs_info=h0,
        non_sequences=w,
    )  # fmt: skip
    return hs


_LOOPS = {  # no rule: the gradient loop differentiated again (a length of 0 included)
    "scan": (_rnn, lambda rng, n, m: [_n(rng, m - 2, n), _n(rng, n), _n(rng, n, n) / n]),
}

CASES: dict = {**_ELEMWISE, **_SHAPES, **_PRODUCTS, **_REDUCTIONS, **_NNET, **_EXTRA, **_LOOPS}
