"""Gradient helpers from Theano's ``theano.gradient``: ``grad_clip`` and the null gradients
(``grad_not_implemented``, ``grad_undefined``)."""

from __future__ import annotations

from typing import Any

from graphc.compile.ops import ViewOp
from graphc.graph.basic import Constant, Op, PropsValue, Type, Variable
from graphc.tensor.math import clip
from graphc.tensor.variable import as_tensor_variable

__all__ = [
    "GradClip", "NullType", "NullTypeGradError", "grad_clip", "grad_not_implemented",
    "grad_undefined",
]  # fmt: skip


class GradClip(ViewOp):
    """The identity whose gradient is clipped to ``[clip_lower_bound, clip_upper_bound]``."""

    __props__ = ("clip_lower_bound", "clip_upper_bound")

    def __init__(self, clip_lower_bound: float, clip_upper_bound: float) -> None:
        if not clip_upper_bound >= clip_lower_bound:
            raise ValueError(
                f"grad_clip: upper bound {clip_upper_bound} is below lower bound {clip_lower_bound}"
            )
        self.clip_lower_bound = float(clip_lower_bound)
        self.clip_upper_bound = float(clip_upper_bound)

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        return [clip(g, self.clip_lower_bound, self.clip_upper_bound) for g in gouts]


def grad_clip(x: Any, lower_bound: float, upper_bound: float) -> Variable:
    """``x`` unchanged in the forward pass; its gradient is clipped elementwise to
    ``[lower_bound, upper_bound]`` on the way back (Theano's ``theano.gradient.grad_clip``)."""
    return GradClip(lower_bound, upper_bound)(as_tensor_variable(x))


class NullTypeGradError(TypeError):
    """A gradient that is not implemented or undefined was asked for."""


class NullType(Type):
    """The type of a gradient that does not exist; ``why_null`` says why."""

    __props__ = ("why_null",)

    def __init__(self, why_null: str = "(no explanation given)") -> None:
        self.why_null = why_null

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None):
        raise ValueError(f"no value is of a NullType: {self.why_null}")


NullType.variable_type = Variable
NullType.constant_type = Constant


def _null(kind: str, op: Op | PropsValue, x_pos: int, x: Variable, comment: str) -> Variable:
    why = (
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{op} op is {kind}. {comment}"
    ).strip()
    return NullType(why)()


def grad_not_implemented(op: Op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of input ``x_pos`` of ``op``, which nobody wrote: asking ``grad`` for a
    gradient that depends on it raises NullTypeGradError."""
    return _null("not implemented", op, x_pos, x, comment)


def grad_undefined(op: Op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of input ``x_pos`` of ``op``, which is mathematically undefined."""
    return _null("mathematically undefined", op, x_pos, x, comment)


def check_not_null(g: Variable) -> None:
    """Raise NullTypeGradError if ``g`` is a null gradient."""
    if isinstance(g.type, NullType):
        raise NullTypeGradError(g.type.why_null)
