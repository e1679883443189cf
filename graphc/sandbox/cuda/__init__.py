"""Theano's old ``sandbox.cuda`` back end, as a Theano without a GPU shows it.

``cuda_available`` and ``cuda_enabled`` are false and ``dnn_available()`` is false (its
``msg`` says why); ``use()`` and every other name raise ``GPUUnavailableError``, an
ImportError that is also a NotImplementedError.
"""

from graphc.gpuarray import unavailable
from graphc.sandbox.cuda import dnn
from graphc.sandbox.cuda.dnn import dnn_available

__all__ = ["cuda_available", "cuda_enabled", "dnn", "dnn_available", "use"]

cuda_available = False
cuda_enabled = False


def use(device: str, *args, **kwargs) -> None:
    """Theano's ``sandbox.cuda.use``: no GPU device can be selected."""
    raise unavailable(f"graphc.sandbox.cuda.use({device!r})")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unavailable(f"graphc.sandbox.cuda.{name}")
