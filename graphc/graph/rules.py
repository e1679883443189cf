"""Per-Op-class rule tables: behaviour of an Op that a later layer provides.

An Op's module cannot import the layers built on top of it (the gradient of ``DimShuffle``
is written with ``sum``, which builds on ``DimShuffle``; the C of an Op lives in the linker).
Such behaviour goes into a ``RuleTable`` owned by the layer that provides it, keyed by Op
class. A lookup walks the Op's MRO, so a subclass inherits its base's rule unless it
registers its own. Registering a class twice is an error: the table has one rule per class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

Entry = TypeVar("Entry")


class RuleTable(Generic[Entry]):
    """Rules keyed by Op class (``what`` names the kind of rule in error messages)."""

    def __init__(self, what: str, initial: dict[type, Entry] | None = None) -> None:
        self.what = what
        self._rules: dict[type, Entry] = dict(initial or {})

    def register(self, *op_classes: type) -> Callable[[Entry], Entry]:
        """Decorator: the decorated function is the rule for each of ``op_classes``."""

        def deco(rule: Entry) -> Entry:
            for cls in op_classes:
                self.add(cls, rule)
            return rule

        return deco

    def add(self, cls: type, rule: Entry) -> None:
        if cls in self._rules:
            raise ValueError(f"a {self.what} rule is already registered for {cls.__name__}")
        self._rules[cls] = rule

    def get(self, op: Any) -> Entry | None:
        """The rule of ``op``'s class (``op`` an instance or a class) or of its nearest
        registered base, or None."""
        cls = op if isinstance(op, type) else type(op)
        for base in cls.__mro__:
            rule = self._rules.get(base)
            if rule is not None:
                return rule
        return None

    def __getitem__(self, op: Any) -> Entry:
        rule = self.get(op)
        if rule is None:
            name = op.__name__ if isinstance(op, type) else type(op).__name__
            raise NotImplementedError(f"no {self.what} rule is registered for {name}")
        return rule

    def __contains__(self, cls: object) -> bool:
        """Whether ``cls`` has a rule of its own (not inherited)."""
        return cls in self._rules

    def __delitem__(self, cls: type) -> None:
        del self._rules[cls]

    def __iter__(self) -> Iterator[type]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)
