"""The pass pipeline as data: every optimizer runs these passes in this order, each with
the rewrites its tags enable. A rule module registers rewrites into the passes listed here
(``graphc.opt.engine.register``); registering into a pass not listed is an error.

``kind``: ``equilibrium`` repeats traversals until nothing changes (bounded), ``once``
traverses once. ``reverse`` visits nodes from the outputs up. ``modules`` are the rule
modules (under ``graphc``) that register into the pass (checked by the tests).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PassSpec:
    name: str
    kind: str
    modules: tuple[str, ...]
    reverse: bool = False


PIPELINE: tuple[PassSpec, ...] = (
    PassSpec("merge1", "once", ("opt.merge", "scan_module.rewrites")),
    PassSpec("constant_folding", "equilibrium", ("opt.merge",)),
    PassSpec("canonicalize", "equilibrium", ("opt.canonicalize", "opt.merge", "opt.shape_of")),
    PassSpec("stabilize", "equilibrium", ("opt.stabilize", "opt.merge")),
    PassSpec(
        "specialize",
        "equilibrium",
        ("opt.specialize", "opt.blas", "opt.merge", "scan_module.rewrites"),
    ),
    PassSpec("merge2", "once", ("opt.merge",)),
    PassSpec("fusion", "equilibrium", ("opt.fusion",), reverse=True),
    PassSpec("multi_fusion", "once", ("opt.fusion_multi",)),
    PassSpec("reduce_fusion", "once", ("opt.fusion", "opt.fusion_multi")),
    PassSpec("inplace", "once", ("opt.inplace",)),
    PassSpec("merge3", "once", ("opt.merge",)),
)
