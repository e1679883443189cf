"""Shared variables: values that live between calls and that functions may update."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.flags import config
from graphc.graph.basic import Variable
from graphc.tensor.type import TensorType
from graphc.tensor.variable import _TensorOps

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class SharedVariable(_TensorOps, Variable):
    """A tensor Variable with a value stored outside any function (``get_value`` /
    ``set_value``); functions read it implicitly and may update it.

    As in Theano, it has every operator and method of a TensorVariable but is not one:
    libraries test ``isinstance(x, TensorVariable)`` to tell an expression from a
    learned parameter.
    """

    __slots__ = ("_value", "allow_downcast", "default_update")

    def __init__(
        self,
        type: TensorType,
        value: Any,
        name: str | None = None,
        allow_downcast: bool | None = None,
    ):
        super().__init__(type, None, None, name)
        self.allow_downcast = allow_downcast
        self._value = type.filter(value, allow_downcast=allow_downcast)
        self.tag["shared"] = self
        # an expression ``function()`` uses as this variable's update when none is given
        self.default_update = None

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        """The current value (a copy unless ``borrow``). The value is always stored as an
        ndarray, so ``return_internal_type`` (Theano's) changes nothing."""
        return self._value if borrow else self._value.copy()

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value (copied unless ``borrow``); checked against the type."""
        new = self.type.filter(value, allow_downcast=self.allow_downcast)
        if new is value and not borrow:
            new = new.copy()
        self._value = new

    def clone(self):
        return self  # shared variables are never copied by graph cloning

    def __getstate__(self):
        st = super().__getstate__()
        st["_value"] = self._value
        st["allow_downcast"] = self.allow_downcast
        st["default_update"] = getattr(self, "default_update", None)
        return st


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: Sequence[int | None] | None = None,
    broadcastable=None,
) -> SharedVariable:
    """A shared variable holding ``value`` (copied unless ``borrow``); Theano's parameter
    order (``strict`` third).

    The static shape is unknown on every axis unless ``shape`` or ``broadcastable`` says
    otherwise, so later values may change size (as in Theano).
    """
    if isinstance(value, bool | int | float) and not strict:
        arr = np.asarray(value)
        if arr.dtype == np.float64:
            arr = arr.astype(config.floatX)
    else:
        arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"graphc.shared: cannot share a value of dtype {arr.dtype}")
    if not borrow or arr is not value:
        arr = np.array(arr, copy=True)
    if broadcastable is not None:
        shape = [1 if b else None for b in broadcastable]
    if shape is None:
        shape = (None,) * arr.ndim
    return SharedVariable(TensorType(str(arr.dtype), shape), arr, name=name,
                          allow_downcast=allow_downcast)  # fmt: skip
