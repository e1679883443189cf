"""Profiles of compiled functions: plain data, pure summaries and renderers."""

from graphc.profile.exit import print_at_exit
from graphc.profile.model import (
    CompilePhases,
    FunctionProfile,
    NodeRecord,
    OptimizerProfile,
    PassRecord,
    RewriteRecord,
    StorageRecord,
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
    "ValueInfo",
    "load",
    "print_at_exit",
]
