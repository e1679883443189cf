"""Indexing: basic Subtensor (views), advanced integer indexing, set/inc_subtensor."""

from __future__ import annotations


def getitem(x, idx):
    raise NotImplementedError("tensor indexing is not implemented yet")
