"""Merge (common subexpression elimination) and constant folding."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Constant
from graphc.opt.engine import register
from graphc.tensor.basic import Alloc

if TYPE_CHECKING:
    from graphc.graph.fg import FunctionGraph


MAX_FOLD_ELEMENTS = 10**6


@register(("merge1", "merge2", "merge3"), "merge", "fast_run", "fast_compile", is_global=True)
def merge(fgraph: FunctionGraph, ctx):
    """Equal constants (by signature) become one; then nodes with an equal Op over the same
    inputs become one. Destroyers are never merged."""
    # c1, c2 with equal signatures -> c1
    rw = ctx.current
    order = fgraph.toposort()
    seen_consts: dict = {}
    consts: dict = {}
    for node in order:
        for v in node.inputs:
            if isinstance(v, Constant):
                consts.setdefault(v, None)
    for c in consts:
        try:
            sig = c.signature()
            hash(sig)
        except TypeError:
            continue
        first = seen_consts.setdefault(sig, c)
        if first is not c:
            ctx.replace(fgraph, [(c, first)], rw)
    # op(a, b); op(a, b) -> one node
    seen: dict = {}
    for node in order:
        if node not in fgraph.apply_nodes or node.op.destroy_map:
            continue
        key = (node.op, tuple(id(i) for i in node.inputs))
        try:
            other = seen.setdefault(key, node)
        except TypeError:
            continue
        if other is not node and other in fgraph.apply_nodes:
            # the kept node now stands for both: it keeps both nodes' lines
            other.origins = tuple(dict.fromkeys((*other.origins, *node.origins)))
            ctx.replace(fgraph, list(zip(node.outputs, other.outputs)), rw)


@register(("constant_folding", "canonicalize", "stabilize", "specialize"), "constant_folding",
          "fast_run", "fast_compile")  # fmt: skip
def constant_fold(fgraph: FunctionGraph, node):
    # op(c1, c2) -> c3 computed now (bounded size; never destroyers, lazy or view Ops)
    op = node.op
    if op.destroy_map or op.lazy or isinstance(op, Alloc):
        return None
    if not all(isinstance(i, Constant) for i in node.inputs):
        return None
    cells = [[None] for _ in node.outputs]
    with np.errstate(all="ignore"):
        op.perform(node, [i.data for i in node.inputs], cells)
    out = []
    for var, (val,) in zip(node.outputs, cells):
        arr = np.array(val, copy=True)
        if arr.size > MAX_FOLD_ELEMENTS or not var.type.is_valid_value(arr):
            return None
        arr.setflags(write=False)
        out.append(var.type.constant_type(var.type, arr))
    return out
