"""A function's inputs and outputs as the user gives them: ``In``, ``Out`` and their checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphc.graph.basic import Constant, Variable


@dataclass
class In:
    """A function input with options: a default ``value``, a keyword ``name``, ``borrow``
    (the function may keep a reference) and ``mutable`` (the function may overwrite it)."""

    variable: Variable
    value: Any = None
    name: str | None = None
    borrow: bool = False
    mutable: bool = False

    def __post_init__(self) -> None:
        if self.name is None:
            self.name = self.variable.name


@dataclass
class Out:
    """A function output; ``borrow=True`` may return internal storage without a copy."""

    variable: Variable
    borrow: bool = False


class UnusedInputError(ValueError):
    """An input the outputs do not depend on (see ``on_unused_input``)."""


def pairs(x: Any) -> list[tuple[Any, Any]]:
    """``updates`` / ``givens`` as a list of pairs (from None, a dict or pairs)."""
    if x is None:
        return []
    if isinstance(x, dict):
        return list(x.items())
    return [tuple(p) for p in x]


def as_input_var(v: Any) -> Variable:
    """``v`` checked to be a free, non-constant Variable (a valid function input)."""
    if not isinstance(v, Variable):
        raise TypeError(f"function inputs must be Variables or In(...), got {type(v).__name__}")
    if v.owner is not None:
        raise TypeError(
            f"input {v} is computed by {v.owner.op}; a function input must be a free "
            "variable (use givens to substitute an expression)"
        )
    if isinstance(v, Constant):
        raise TypeError(f"input {v} is a constant; constants cannot be function inputs")
    return v
