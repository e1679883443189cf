"""graphc: a small graph compiler for numeric Python, with a built-in profiler."""

from graphc import tensor  # noqa: E402,I001
from graphc.flags import config

__version__ = "0.1.0"
__all__ = ["config", "tensor"]
