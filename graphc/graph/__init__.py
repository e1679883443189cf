"""The graph core: IR, FunctionGraph and the reference evaluator."""

from graphc.graph.basic import (
    Apply,
    Constant,
    Op,
    Type,
    Variable,
    ancestors,
    applys_between,
    clone,
    clone_replace,
    graph_inputs,
    io_toposort,
    is_same_graph,
)
from graphc.graph.fg import Feature, FunctionGraph, InconsistencyError, MissingInputError

__all__ = [
    "Apply", "Constant", "Feature", "FunctionGraph", "InconsistencyError", "MissingInputError",
    "Op", "Type", "Variable", "ancestors", "applys_between", "clone", "clone_replace",
    "graph_inputs", "io_toposort", "is_same_graph",
]  # fmt: skip
