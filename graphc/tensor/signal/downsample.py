"""Theano's older import path ``theano.tensor.signal.downsample`` (``max_pool_2d``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.tensor.signal.pool import pool_2d

if TYPE_CHECKING:
    from collections.abc import Sequence

    from graphc.tensor.variable import TensorLike

__all__ = ["max_pool_2d"]


def max_pool_2d(
    input: TensorLike,
    ds: Sequence[int],
    ignore_border: bool | None = None,
    st: Sequence[int] | None = None,
    padding: Sequence[int] = (0, 0),
    mode: str = "max",
):
    """``pool_2d`` under its old name and argument names (``ds``, ``st``, ``padding``)."""
    return pool_2d(input, ws=ds, ignore_border=ignore_border, stride=st, pad=padding, mode=mode)
