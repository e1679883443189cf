"""Theano's ``sandbox.cuda.dnn``: importable so that ``dnn_available()`` can say no, as
on a Theano without a GPU; every other name raises ``GPUUnavailableError``."""

from graphc.gpuarray import unavailable

__all__ = ["dnn_available"]


def dnn_available() -> bool:
    """Whether cuDNN can be used: never, as in Theano when CUDA is not available."""
    return False


dnn_available.msg = "CUDA not available"  # type: ignore[attr-defined]
dnn_available.avail = False  # type: ignore[attr-defined]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unavailable(f"graphc.sandbox.cuda.dnn.{name}")
