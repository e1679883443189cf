"""Signal-processing Ops (``graphc.tensor.signal.pool``), at Theano's import path."""

from graphc.tensor.signal import pool

__all__ = ["pool"]
