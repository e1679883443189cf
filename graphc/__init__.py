"""graphc: a small graph compiler for numeric Python, with a built-in profiler.

Build a graph with ``graphc.tensor``, compile it with ``graphc.function`` and see where
time and memory go with ``profile=True`` or ``mode="PROFILE_MODE"``.
"""

from graphc import tensor  # noqa: E402,I001
from graphc.compile import (
    FAST_COMPILE,
    FAST_RUN,
    PROFILE_MODE,
    Function,
    In,
    Mode,
    Out,
    function,
    shared,
)
from graphc.compile.sharedvalue import SharedVariable
from graphc.flags import config

__version__ = "0.1.0"


def __getattr__(name: str):  # lazily imported parts (keeps `import graphc` fast)
    import importlib

    lazy = {
        "grad": ("graphc.gradient", "grad"),
        "Rop": ("graphc.gradient", "Rop"),
        "Lop": ("graphc.gradient", "Lop"),
        "gradient": ("graphc.gradient", None),
        "printing": ("graphc.printing", None),
        "dprint": ("graphc.printing", "debugprint"),
        "pp": ("graphc.printing", "pprint"),
        "ifelse": ("graphc.ifelse", None),  # a module, as in Theano
        "dot": ("graphc.tensor", "dot"),  # theano.dot
        "scan": ("graphc.scan_module", "scan"),
        "scan_module": ("graphc.scan_module", None),
        "map": ("graphc.scan_module", "map"),
        "reduce": ("graphc.scan_module", "reduce"),
        "foldl": ("graphc.scan_module", "foldl"),
        "foldr": ("graphc.scan_module", "foldr"),
        "ProfileMode": ("graphc.compile.profilemode", "ProfileMode"),
        "ProfileStats": ("graphc.profile.stats", "ProfileStats"),  # theano.ProfileStats
        "profile": ("graphc.profile", None),
        "scalar": ("graphc.scalar", None),
        "sparse": ("graphc.sparse", None),  # each name raises NotImplementedError
        "gpuarray": ("graphc.gpuarray", None),
        "sandbox": ("graphc.sandbox", None),
    }
    if name not in lazy:
        raise AttributeError(f"module 'graphc' has no attribute {name!r}")
    mod_name, attr = lazy[name]
    mod = importlib.import_module(mod_name)
    return mod if attr is None else getattr(mod, attr)


__all__ = [
    "FAST_COMPILE", "FAST_RUN", "PROFILE_MODE", "Function", "In", "Mode", "Out",
    "SharedVariable", "config", "function", "shared", "tensor",
]  # fmt: skip
