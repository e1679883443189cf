"""Theano's ``theano.tensor.xlogx``: ``xlogx(x) = x * log(x)`` and ``xlogy0(x, y) =
x * log(y)``, both 0 where ``x`` is 0 (the limit), as graphs of existing Ops."""

from __future__ import annotations

from graphc.tensor.math import eq, log, switch
from graphc.tensor.variable import TensorLike, as_tensor_variable

__all__ = ["xlogx", "xlogy0"]


def xlogx(x: TensorLike):
    """``x * log(x)``, with 0 where ``x == 0``."""
    x = as_tensor_variable(x)
    return switch(eq(x, 0), 0, x * log(switch(eq(x, 0), 1, x)))


def xlogy0(x: TensorLike, y: TensorLike):
    """``x * log(y)``, with 0 where ``x == 0`` (whatever ``y`` is)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    return switch(eq(x, 0), 0, x * log(switch(eq(x, 0), 1, y)))
