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
from graphc.profile.stats import ProfileStats, load

__all__ = [
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
