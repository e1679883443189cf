"""Theano 0.8.2's parameter orders for the names whose graphc order differs.

graphc's own functions keep their order (``graphc.tensor.sum(x, axis, keepdims)``, as
numpy); ``theano.tensor.sum`` is this module's ``sum(input, axis, dtype, keepdims)``, so a
Theano program's positional calls mean what they meant under Theano.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphc.compile.io import In as _In
from graphc.compile.profilemode import ProfileMode as _ProfileMode
from graphc.reverse_mode import grad as _grad
from graphc.tensor import basic as _basic
from graphc.tensor import math as _math
from graphc.tensor import variable as _variable
from graphc.testing import verify_grad as _verify_grad

__all__ = [
    "In",
    "ProfileMode",
    "constant",
    "flatten",
    "grad",
    "mean",
    "prod",
    "sum",
    "verify_grad",
]


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"{what} (Theano 0.8.2) is not implemented in graphc")


def sum(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Theano's ``sum``: ``dtype`` before ``keepdims``."""
    return _math.sum(input, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype)


def prod(input, axis=None, dtype=None, keepdims=False, acc_dtype=None, no_zeros_in_input=False):
    """Theano's ``prod``: ``dtype`` before ``keepdims``."""
    return _math.prod(
        input, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype,
        no_zeros_in_input=no_zeros_in_input,
    )  # fmt: skip


def mean(input, axis=None, dtype=None, op=False, keepdims=False, acc_dtype=None):
    """Theano's ``mean``: ``dtype`` and ``op`` before ``keepdims``."""
    return _math.mean(input, axis=axis, keepdims=keepdims, dtype=dtype, acc_dtype=acc_dtype, op=op)


def flatten(x, outdim=1):
    """Theano's ``flatten(x, outdim)``: keep ``outdim - 1`` axes, collapse the rest."""
    return _basic.flatten(x, outdim=outdim)


def constant(x, name=None, ndim=None, dtype=None):
    """Theano's ``constant``: ``ndim`` pads the value with leading size-1 axes."""
    c = _variable.constant(x, name=name, dtype=dtype)
    if ndim is None or c.ndim == ndim:
        return c
    if c.ndim > ndim:
        raise ValueError(f"constant: {c.ndim}-d value {x!r:.50} has more than ndim={ndim} axes")
    data = np.asarray(c.data).reshape((1,) * (ndim - c.ndim) + np.shape(c.data))
    return _variable.constant(data, name=name, dtype=c.dtype)


def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """Theano's ``grad``; ``add_names`` only names the results, ``null_gradients`` must be
    ``'raise'``."""
    if null_gradients != "raise":
        raise _unsupported(f"grad(null_gradients={null_gradients!r})")
    return _grad(
        cost, wrt, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs,
        known_grads=known_grads, return_disconnected=return_disconnected,
    )  # fmt: skip


def verify_grad(
    fun,
    pt,
    n_tests=2,
    rng=None,
    eps=None,
    out_type=None,
    abs_tol=None,
    rel_tol=None,
    mode=None,
    cast_to_output_type=False,
):
    """Theano's ``verify_grad``; ``mode`` is accepted (graphc checks in its default mode),
    ``out_type`` and ``cast_to_output_type`` are not."""
    if out_type is not None or cast_to_output_type:
        raise _unsupported("verify_grad(out_type=..., cast_to_output_type=True)")
    _verify_grad(fun, pt, n_tests=n_tests, rng=rng, eps=eps, abs_tol=abs_tol, rel_tol=rel_tol)


class In(_In):
    """Theano's ``In(variable, name, value, ...)``: ``name`` before ``value``."""

    def __init__(
        self,
        variable: Any,
        name: str | None = None,
        value: Any = None,
        update: Any = None,
        mutable: bool | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        autoname: bool = True,
        implicit: bool | None = None,
        borrow: bool | None = None,
        shared: bool = False,
    ) -> None:
        if update is not None or implicit or shared:
            raise _unsupported("In(update=..., implicit=True, shared=True)")
        super().__init__(
            variable, value=value, name=name, borrow=bool(borrow), mutable=bool(mutable)
        )


class ProfileMode(_ProfileMode):
    """Theano's ``ProfileMode(linker, optimizer)``: the linker first."""

    def __init__(self, linker: str | None = None, optimizer: str | None = "default") -> None:
        opt = "fast_run" if optimizer in ("default", None) else optimizer
        super().__init__(opt, "c|py" if linker is None else linker)
