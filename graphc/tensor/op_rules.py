"""Per-Op-class rule tables: behaviour of an Op that a later module provides.

An Op's module cannot import the modules built on top of it (the gradient of ``DimShuffle``
is written with ``sum``, which builds on ``DimShuffle``). Such behaviour goes into a table
owned by the Op's module and filled by the module that defines the rule; ``graphc.tensor``
imports every filling module when the package is imported, so the tables are complete
before any graph exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphc.graph.basic import lookup_by_class, register_for_classes


class RuleTable:
    """Rules keyed by Op class; a lookup walks the Op's MRO (a subclass inherits)."""

    def __init__(self, what: str):
        self.what = what
        self._rules: dict[type, Callable[..., Any]] = {}

    def register(self, *op_classes: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the decorated function is the rule for ``op_classes``."""
        return register_for_classes(self._rules, op_classes)

    def get(self, op: Any) -> Callable[..., Any] | None:
        """The rule for ``op``'s class (or a base class), or None."""
        return lookup_by_class(self._rules, op)

    def __getitem__(self, op: Any) -> Callable[..., Any]:
        rule = self.get(op)
        if rule is None:
            raise NotImplementedError(f"no {self.what} rule is registered for {type(op).__name__}")
        return rule
