"""PyTensor's import path for ``RandomStream`` (re-exported; nothing in graphc imports it)."""

from graphc.compile.randomstreams import RandomStream

__all__ = ["RandomStream"]
