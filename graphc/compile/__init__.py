"""Compiling graphs into callables: function, shared variables, modes."""

from graphc.compile import debugmode  # noqa: F401  (registers the DEBUG_MODE name)
from graphc.compile.function import Function, FunctionMaker, In, Out, UnusedInputError, function
from graphc.compile.mode import FAST_COMPILE, FAST_RUN, PROFILE_MODE, Mode, get_mode
from graphc.compile.monitormode import MonitorMode  # noqa: F401  (Theano's name)
from graphc.compile.sharedvalue import SharedVariable, shared

__all__ = [
    "FAST_COMPILE", "FAST_RUN", "PROFILE_MODE", "Function", "FunctionMaker", "In", "Mode",
    "Out", "SharedVariable", "UnusedInputError", "function", "get_mode", "shared",
]  # fmt: skip


def __getattr__(name: str):  # graphc.compile.ProfileStats, as theano.compile.ProfileStats
    if name == "ProfileStats":  # imported on use: the profiler stays out of `import graphc`
        from graphc.profile.stats import ProfileStats

        return ProfileStats
    raise AttributeError(f"module 'graphc.compile' has no attribute {name!r}")
