"""Rewrites of Scan nodes, registered into the rewrite engine by this package.

``scan_save_mem``: a state whose stacked output is only read at its last row (``out[-1]``,
as in ``reduce``, ``result[-1]`` or a Gibbs chain's end) keeps only its final window, so the
loop neither allocates nor fills a buffer of every step (Theano's ``scan_save_mem``). As in
Theano, a loop of zero steps then gives the initial state where ``out[-1]`` of the empty
stacked output would have raised IndexError.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from graphc.graph.fg import OUTPUT
from graphc.opt.engine import register
from graphc.scan_module.op import Scan
from graphc.tensor.subtensor import Subtensor

if TYPE_CHECKING:
    from graphc.graph.basic import Variable
    from graphc.graph.fg import FunctionGraph

__all__ = ["scan_save_mem"]


def _only_last_row_read(fgraph: FunctionGraph, var: Variable, lag: int) -> list | None:
    """The nodes computing ``var[-1]`` (directly or as ``var[lag:][-1]``, the user's view of
    a state's buffer), if nothing else reads ``var``; else None."""
    readers = []
    for client, _ in fgraph.clients.get(var, []):
        if client is OUTPUT or not isinstance(client.op, Subtensor):
            return None
        idx = tuple(client.op.idx_list)
        if idx == (-1,):
            readers.append(client)
            continue
        view = idx[0] if len(idx) == 1 else None
        bounds = (getattr(view, "start", None), getattr(view, "stop", 0), getattr(view, "step", 0))
        if bounds != (lag, None, None):
            return None
        inner = _only_last_row_read(fgraph, client.outputs[0], -1)
        if inner is None:
            return None
        readers += inner
    return readers or None


@register("specialize", "fast_run", "scan", tracks=(Scan,))
def scan_save_mem(fgraph: FunctionGraph, node):
    info = node.op.info
    if info.as_while:
        return None
    keep = list(info.state_last)
    last_reads: dict[int, list] = {}
    for k in range(info.n_states):
        if keep[k]:
            continue
        readers = _only_last_row_read(fgraph, node.outputs[k], info.lags[k])
        if readers is not None:
            keep[k] = True
            last_reads[k] = readers
    if not last_reads:
        return None
    op = Scan(dataclasses.replace(info, state_last=tuple(keep)), node.op.inner)
    new = op(*node.inputs)
    new = new if isinstance(new, list) else [new]
    pairs = {}
    for k, old in enumerate(node.outputs):
        if k in last_reads:
            for reader in last_reads[k]:
                pairs[reader.outputs[0]] = new[k][-1]
        else:
            pairs[old] = new[k]
    return pairs
