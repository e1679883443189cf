"""Print: an Op that prints its input's attributes when it runs and passes the input on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from graphc.graph.basic import Apply, Op
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

    from graphc.graph.basic import Variable


def _print_fn(op: Print, value) -> None:
    for attr in op.attrs:
        item = getattr(value, attr)
        print(op.message, attr, "=", item() if callable(item) else item)


class Print(Op):
    """``Print(message="", attrs=("__str__",))(x)``: when computed, prints ``message`` and
    each attribute of ``x``'s value (called if callable), then returns ``x`` (a view).
    ``global_fn(op, value)`` replaces the printing."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(self, message: str = "", attrs: Sequence[str] = ("__str__",),
                 global_fn: Callable = _print_fn):  # fmt: skip
        self.message = str(message)
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def __str__(self) -> str:
        return f"Print{{{self.message}}}" if self.message else "Print"

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (x,) = inputs
        output_storage[0][0] = x
        self.global_fn(self, x)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [shapes[0]]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return list(gouts)
