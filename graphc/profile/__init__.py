"""Profiles of compiled functions, in three layers that import downwards only:

- ``graphc.profile.data``: the plain records (``model``), their container ``ProfileData``,
  adding, steady state, JSON, and ``SummaryOptions``; it imports no summary or renderer.
- ``graphc.profile.summaries``: pure numbers computed from the data (tables, memory, loops,
  diffs, tips, comparisons).
- ``graphc.profile.render``: text and file formats (text summary, legacy ProfileMode text,
  JSON, Chrome trace, speedscope, Graphviz, the HTML report, pprof, CSV, pstats), each a
  ``Renderer`` in one table by name (``render.formats.RENDERERS``) taking the data and
  SummaryOptions.

On top: ``ProfileStats`` (the data with Theano's printing methods), the at-exit registry,
``benchmark`` and the ``graphc-prof`` command line.
"""

from graphc.profile.bench import benchmark
from graphc.profile.data.model import (
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
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.exit import print_at_exit
from graphc.profile.registry import REGISTRY
from graphc.profile.render import legacy, trace  # graphc.profile.legacy.print_summary, ...
from graphc.profile.stats import ProfileStats, load

__all__ = [
    "allocated",
    "CompilePhases",
    "FunctionProfile",
    "NodeRecord",
    "OptimizerProfile",
    "PassRecord",
    "ProfileData",
    "ProfileStats",
    "RewriteRecord",
    "StorageRecord",
    "SummaryOptions",
    "TraceRecord",
    "ValueInfo",
    "benchmark",
    "legacy",
    "load",
    "print_at_exit",
    "trace",
]


def allocated() -> tuple[int, int]:
    """``(current, peak)`` bytes of array storage held by running profiled functions (the
    host analogue of Theano's GPU ``theano_allocated()``)."""
    return REGISTRY.allocated()
