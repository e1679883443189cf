"""``jacobian`` and ``hessian``: one gradient (``reverse_mode.grad``) per element of a
vector, unrolled when its length is static, looped by ``scan`` when it is known only at
run time; so this module sits above ``graphc/scan_module``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphc.graph.basic import Variable
from graphc.reverse_mode import Retype, constant, grad
from graphc.scan_module.build import scan
from graphc.tensor import basic as tb
from graphc.tensor.elemwise import DimShuffle
from graphc.tensor.math import add, mul, second
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable


def _stack_rows(rows: list, n: int, wrt: Variable | Sequence[Variable]) -> Variable:
    """``rows[i]`` (each shaped like ``wrt``) stacked along a new leading axis of length n."""
    pattern = ["x", *range(wrt.ndim)]
    if n == 0:
        lead = DimShuffle(wrt.ndim, pattern)(wrt)
        return second(lead, constant(np.zeros((0,) + (1,) * wrt.ndim, dtype=wrt.dtype)))
    parts = []
    for i, r in enumerate(rows):
        onehot = np.zeros((n,) + (1,) * wrt.ndim, dtype=wrt.dtype)
        onehot[i] = 1
        parts.append(mul(constant(onehot), DimShuffle(wrt.ndim, pattern)(r)))
    out = parts[0] if n == 1 else add(*parts)
    return Retype(TensorType(wrt.dtype, (n, *wrt.type.shape)))(out)


def jacobian(
    expression: Variable,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
):
    """The Jacobian of a vector ``expression``: ``J[i, ...] = d expression[i] / d wrt[...]``.

    The rows are built one gradient per element: unrolled for a vector of static length,
    looped by ``scan`` for one whose length is known only at run time.
    """
    expression = as_tensor_variable(expression)
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    if expression.ndim == 0:
        return grad(expression, wrt, consider_constant, disconnected_inputs)
    if expression.ndim != 1:
        raise TypeError(f"jacobian: expression must be a vector, got {expression.type}")
    n = expression.type.shape[0]
    if n is None:
        out = _jacobian_by_scan(expression, wrt_list, consider_constant, disconnected_inputs)
        return out[0] if single else out
    rows: list[list] = [[] for _ in wrt_list]
    for i in range(n):
        seed = np.zeros(n, dtype=expression.dtype)
        seed[i] = 1
        gs = grad(None, wrt_list, consider_constant, disconnected_inputs,
                  known_grads={expression: constant(seed)})  # fmt: skip
        for k, g in enumerate(gs):
            rows[k].append(g)
    if n == 0:  # still report disconnected inputs
        grad(None, wrt_list, consider_constant, disconnected_inputs,
             known_grads={expression: constant(np.zeros(0, dtype=expression.dtype))})  # fmt: skip
    out = [_stack_rows(r, n, as_tensor_variable(w)) for r, w in zip(rows, wrt_list)]
    return out[0] if single else out


def _jacobian_by_scan(
    expression: Variable,
    wrt_list: Sequence[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: str,
) -> list:
    """One gradient per element, looped by ``scan`` over a length known only at run time
    (as Theano does)."""

    def row(i, expr, *ws):
        return [grad(expr[i], w, consider_constant, disconnected_inputs) for w in ws]

    rows, _ = scan(row, sequences=tb.arange(tb.shape(expression)[0]),
                   non_sequences=[expression, *wrt_list], return_list=True)  # fmt: skip
    return rows


def hessian(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
):
    """The Hessian of a scalar ``cost`` with respect to vector(s)."""
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    out = []
    for w in wrt_list:
        if w.type.ndim != 1:
            raise TypeError(f"hessian: wrt must be vectors, got {w} of type {w.type}")
        g = grad(cost, w, consider_constant, disconnected_inputs)
        out.append(jacobian(g, w, consider_constant, disconnected_inputs))
    return out[0] if single else out
