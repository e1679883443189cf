"""The reference evaluator: run ``Op.perform`` over a graph in topological order.

It defines graphc's semantics; the linkers and VMs are tested against it. It is defined in
``graph/basic.py`` beside the IR it walks (so ``Variable.eval`` imports nothing back).
"""

from graphc.graph.basic import evaluate

__all__ = ["evaluate"]
