"""Scalar types and element functions."""

from graphc.scalar.basic import *  # noqa: F403
from graphc.scalar.basic import (
    Composite,
    ScalarOp,
    ScalarType,
    all_scalar_ops,
    get_scalar_op,
)

__all__ = ["Composite", "ScalarOp", "ScalarType", "all_scalar_ops", "get_scalar_op"]
