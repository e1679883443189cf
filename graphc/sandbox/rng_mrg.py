"""Theano's import path for ``MRG_RandomStreams`` (re-exported; nothing in graphc imports it)."""

from graphc.compile.mrg_randomstreams import MRG_RandomStreams

__all__ = ["MRG_RandomStreams"]
