"""Theano's import path for ``RandomStreams`` (re-exported; nothing in graphc imports it)."""

from graphc.compile.randomstreams import RandomStreams

__all__ = ["RandomStreams"]
