"""Theano's ``gpuarray`` back end: graphc runs on the CPU only.

As on a Theano without a GPU, ``pygpu_activated`` is false; every other name raises
``GPUUnavailableError``, an ImportError (what libraries catch to skip their GPU code)
that is also a NotImplementedError.
"""

pygpu_activated = False


class GPUUnavailableError(ImportError, NotImplementedError):
    """A GPU back-end name was used: graphc has no GPU back end."""


def unavailable(name: str) -> GPUUnavailableError:
    """The error for GPU name ``name`` (a dotted graphc path)."""
    return GPUUnavailableError(f"{name}: graphc has no GPU back end", name=name)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unavailable(f"graphc.gpuarray.{name}")
