"""Stabilization: rewrite expressions that lose precision or overflow into stable forms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphc.opt.engine import register
from graphc.opt.utils import fit, is_const, owner_is
from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor import nnet
from graphc.tensor.elemwise import DimShuffle

if TYPE_CHECKING:
    from graphc.graph.basic import Apply
    from graphc.graph.fg import FunctionGraph


TAGS = ("stabilize", "fast_run")


@register("stabilize", *TAGS, tracks=(type(ps.log),))
def log1p_rewrite(fgraph: FunctionGraph, node: Apply):
    # log(1 + x) -> log1p(x)
    inner = owner_is(node.inputs[0], ps.Add)
    if inner is None or len(inner.inputs) != 2:
        return None
    a, b = inner.inputs
    x = b if is_const(a, 1) else a if is_const(b, 1) else None
    if x is None:
        return None
    return [fit(node.outputs[0], tm.log1p(x))]


@register("stabilize", *TAGS, tracks=(ps.Sub,))
def expm1_rewrite(fgraph: FunctionGraph, node: Apply):
    # exp(x) - 1 -> expm1(x)
    a, b = node.inputs
    inner = owner_is(a, ps.Exp)
    if inner is None or not is_const(b, 1):
        return None
    return [fit(node.outputs[0], tm.expm1(inner.inputs[0]))]


@register("stabilize", *TAGS, tracks=(type(ps.log),))
def log_sigmoid(fgraph: FunctionGraph, node: Apply):
    # log(sigmoid(x)) -> -softplus(-x);  log(1 - sigmoid(x)) -> -softplus(x)
    v = node.inputs[0]
    sig = owner_is(v, ps.Sigmoid)
    if sig is not None:
        x = sig.inputs[0]
        return [fit(node.outputs[0], tm.neg(tm.softplus(tm.neg(x))))]
    sub = owner_is(v, ps.Sub)
    if sub is not None and is_const(sub.inputs[0], 1):
        sig = owner_is(sub.inputs[1], ps.Sigmoid)
        if sig is not None:
            return [fit(node.outputs[0], tm.neg(tm.softplus(sig.inputs[0])))]
    return None


def _is_softmax(v):
    node = v.owner
    if node is None or not isinstance(node.op, nnet.Softmax):
        return None
    return node


@register("stabilize", *TAGS, tracks=(type(ps.log),))
def log_softmax_rewrite(fgraph: FunctionGraph, node: Apply):
    # log(softmax(x)) -> log_softmax(x)
    sm = _is_softmax(node.inputs[0])
    if sm is None:
        return None
    return [fit(node.outputs[0], nnet.LogSoftmax(sm.op.axis)(sm.inputs[0]))]


def _row_softmax(v):
    sm = _is_softmax(v)
    if sm is None or sm.inputs[0].type.ndim != 2 or sm.op.axis % 2 != 1:
        return None
    return sm


@register("stabilize", *TAGS, tracks=(nnet.CrossentropyCategorical1Hot, nnet.Softmax))
def crossentropy_softmax(fgraph: FunctionGraph, node: Apply):
    # crossentropy_1hot(softmax(x), y) -> CrossentropySoftmax1Hot(x, y)[0]
    # softmax(x) with a CrossentropySoftmax1Hot(x, y) in the graph -> its softmax output
    if isinstance(node.op, nnet.Softmax):
        x = node.inputs[0]
        for client, _ in fgraph.clients.get(x, ()):
            if client != "output" and isinstance(client.op, nnet.CrossentropySoftmax1Hot):
                if client.outputs[1].type == node.outputs[0].type:
                    return [client.outputs[1]]
        return None
    sm = _row_softmax(node.inputs[0])
    if sm is None:
        return None
    nll, _ = nnet.CrossentropySoftmax1Hot()(sm.inputs[0], node.inputs[1])
    return [fit(node.outputs[0], nll)]


@register("stabilize", *TAGS, tracks=(ps.Mul,))
def crossentropy_softmax_grad(fgraph: FunctionGraph, node: Apply):
    # (G - sum(G * sm, axis=1, keepdims)) * sm, G = crossentropy_1hot_grad(g, sm, y)
    #   -> CrossentropySoftmax1HotDx(g, sm, y)
    if len(node.inputs) != 2:
        return None
    for a, sm in (node.inputs, node.inputs[::-1]):
        if _row_softmax(sm) is None:
            continue
        sub = owner_is(a, ps.Sub)
        if sub is None:
            continue
        gnode, b = sub.inputs[0].owner, sub.inputs[1]
        if gnode is None or not isinstance(gnode.op, nnet.CrossentropyCategorical1HotGrad):
            continue
        g, sm2, y = gnode.inputs
        if sm2 is not sm or b.owner is None or not isinstance(b.owner.op, DimShuffle):
            continue
        red = b.owner.inputs[0].owner
        if red is None or getattr(red.op, "axis", None) != (1,):
            continue
        if not isinstance(red.op, tm.CAReduce) or not isinstance(red.op.scalar_op, ps.Add):
            continue
        prod = owner_is(red.inputs[0], ps.Mul)
        if prod is None or {id(i) for i in prod.inputs} != {id(sub.inputs[0]), id(sm)}:
            continue
        return [fit(node.outputs[0], nnet.CrossentropySoftmax1HotDx()(g, sm, y))]
    return None
