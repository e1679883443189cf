"""Differentiation: ``grad``, ``Lop``, ``Rop`` (``graphc/reverse_mode.py``), ``jacobian``,
``hessian`` (``graphc/jacobian.py``) and ``verify_grad`` (``graphc/testing.py``), under the
names Theano users import them by."""

from graphc.grad_ops import (
    GradClip,
    NullType,
    NullTypeGradError,
    grad_clip,
    grad_not_implemented,
    grad_undefined,
)
from graphc.jacobian import hessian, jacobian
from graphc.reverse_mode import (
    DisconnectedInputError,
    Lop,
    Retype,
    Rop,
    constant,
    grad,
    zeros_like,
)
from graphc.testing import GradientError, verify_grad

__all__ = [
    "DisconnectedInputError", "GradClip", "GradientError", "Lop", "NullType", "NullTypeGradError",
    "Retype", "Rop", "constant", "grad", "grad_clip", "grad_not_implemented", "grad_undefined",
    "hessian", "jacobian", "verify_grad", "zeros_like",
]  # fmt: skip
