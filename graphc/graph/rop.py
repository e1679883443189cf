"""Forward-mode rules (the R operator) per Op class.

An R_op rule gives, for one Apply node, the directional derivatives of its outputs from
those of its inputs: ``rule(node, eval_points) -> list`` with one entry per output, where
``eval_points[i]`` is the tangent of ``node.inputs[i]`` (a Variable of its type) or None
when that input does not depend on the variables being differentiated (a zero tangent).
An output entry is None when the output's tangent is zero or undefined. A rule returns
``NotImplemented`` to leave the node to ``Rop``'s general method (its gradient transposed).

The table is filled by the layer that defines each Op (``graphc/tensor/rop_rules.py`` for
the tensor Ops), as printing's pprint rules are; ``graphc.gradient.Rop`` reads it. An Op
may instead carry Theano's ``R_op(inputs, eval_points)`` method, which takes precedence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graphc.graph.basic import Apply, Op, Variable
from graphc.graph.rules import RuleTable

RopRule = Callable[[Apply, Sequence["Variable | None"]], Sequence["Variable | None"]]

_RULES: RuleTable[RopRule] = RuleTable("R_op")


def register_rop(*op_classes: type) -> Callable[[RopRule], RopRule]:
    """Decorator: ``@register_rop(Dot, MatMul) def rule(node, eval_points) -> list``."""

    return _RULES.register(*op_classes)


def rop_rule(op: Op) -> RopRule | None:
    """The rule registered for ``op``'s class or its nearest registered base, or None."""
    return _RULES.get(op)


def registered_rop_classes() -> tuple[type, ...]:
    """The Op classes with a rule of their own (for coverage checks)."""
    return tuple(_RULES)
