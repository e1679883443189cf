"""Profiles of compiled functions: plain data, pure summaries and renderers."""

from graphc.profile.bench import benchmark
from graphc.profile.exit import print_at_exit
from graphc.profile.model import (
    CompilePhases,
    FunctionProfile,
    NodeRecord,
    OptimizerProfile,
    PassRecord,
    RewriteRecord,
    StorageRecord,
    TraceRecord,
    ValueInfo,
)
from graphc.profile.registry import REGISTRY
from graphc.profile.stats import ProfileStats, load

__all__ = [
    "allocated",
    "CompilePhases",
    "FunctionProfile",
    "NodeRecord",
    "OptimizerProfile",
    "PassRecord",
    "ProfileStats",
    "RewriteRecord",
    "StorageRecord",
    "TraceRecord",
    "ValueInfo",
    "benchmark",
    "load",
    "print_at_exit",
]


def allocated() -> tuple[int, int]:
    """``(current, peak)`` bytes of array storage held by running profiled functions (the
    host analogue of Theano's GPU ``theano_allocated()``)."""
    return REGISTRY.allocated()
