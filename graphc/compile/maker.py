"""FunctionMaker: the graph built from ``function()``'s arguments, rewritten by the mode's
optimizer (graphc.opt), linked into a Program (graphc.linker) and given the VM kind that
will run it (graphc.vm); ``create()`` returns the callable ``Function``.

The optimizer, the linkers and the VMs are imported on the first compile, not by
``import graphc``.
"""

from __future__ import annotations

import copy as _copy
import time
from typing import Any

from graphc.compile.callable import Function
from graphc.compile.fgraph import build_function_graph
from graphc.compile.io import pairs
from graphc.compile.mode import Mode, get_mode, resolve_linker
from graphc.compile.sharedvalue import SharedVariable
from graphc.flags import config
from graphc.graph.basic import new_node_origins
from graphc.graph.flat import collect_vars, flatten, replace_refs, unflatten
from graphc.import_clock import import_clock


class FunctionMaker:
    """Builds the optimized FunctionGraph and the Program for a function."""

    def __init__(
        self,
        inputs,
        outputs: Any,
        mode: Mode,
        *,
        updates: Any = None,
        givens: Any = None,
        name: str | None = None,
        profile=None,
        on_unused_input: str = "raise",
        allow_input_downcast: bool | None = None,
        no_default_updates: bool = False,
    ):
        self.t_start = time.perf_counter_ns()
        self.mode = mode
        self.name = name
        self.profile = profile
        self.allow_input_downcast = allow_input_downcast
        self.original = dict(inputs=inputs, outputs=outputs, updates=updates, givens=givens,
                             name=name, on_unused_input=on_unused_input,
                             allow_input_downcast=allow_input_downcast,
                             no_default_updates=no_default_updates)  # fmt: skip
        spec = build_function_graph(
            inputs, outputs, updates=updates, givens=givens,
            on_unused_input=on_unused_input, no_default_updates=no_default_updates,
        )  # fmt: skip
        self.inputs, self.outputs, self.return_list = spec.inputs, spec.outputs, spec.return_list
        self.updates, self.shared = spec.updates, spec.shared
        self.n_outputs = len(self.outputs)
        self.phases: dict[str, int] = {}
        # a copy before any rewrite, for a mode that checks the rewrites (DEBUG_MODE)
        self.unoptimized = spec.fgraph.clone() if mode.keeps_unoptimized_graph() else None
        self.fgraph = spec.fgraph
        self.rewrite_report = self._rewrite()
        self.linker = resolve_linker(mode.linker)
        self.allow_gc = config.allow_gc if self.linker.allow_gc is None else self.linker.allow_gc
        self.vm_kind = mode.vm or (self.linker.vm if self.linker.vm == "py" else config.vm)

    def _rewrite(self) -> Any:
        """Rewrite ``self.fgraph`` in place with the mode's optimizer and tags; the time
        spent importing modules on the way is counted apart."""
        from graphc.opt import rewrite_graph

        including, excluding, requiring = self.mode.effective_tags()
        t0 = time.perf_counter_ns()
        with import_clock() as imports, new_node_origins(()):
            report = rewrite_graph(self.fgraph, self.mode.optimizer_name(), including, excluding,
                                   requiring)  # fmt: skip
        self.phases["python_imports"] = imports.ns
        self.phases["rewrite"] = time.perf_counter_ns() - t0 - imports.ns
        self.phases["validate"] = getattr(report, "validate_ns", 0)
        return report

    def link(self):
        """Lower the optimized graph to a Program with the mode's linker."""
        from graphc.linker.base import link_py

        t0 = time.perf_counter_ns()
        with import_clock() as imports:
            if self.linker.use_c:
                # without a working compiler link_cpy runs every node in Python, with one
                # warning that says why
                from graphc.linker.clinker import link_cpy

                linked = link_cpy(self.fgraph, self.fgraph.outputs, self.compile_inner)
            else:
                linked = link_py(self.fgraph, self.fgraph.outputs, self.compile_inner)
        self.phases["python_imports"] = self.phases.get("python_imports", 0) + imports.ns
        self.phases["linker"] = time.perf_counter_ns() - t0 - imports.ns
        return linked

    def compile_inner(self, inputs: list, outputs: list, mode: Any = None) -> Function:
        """An inner graph (a scan's step) compiled with ``mode`` (a Mode or its name), by
        default this function's optimizer and linker; its profile, if any, is collected by
        the enclosing function's."""
        t0 = time.perf_counter_ns()
        mode = self.mode if mode is None else get_mode(mode)
        if getattr(mode, "profile_stats", None) is not None or mode.profile:
            mode = Mode(mode.linker, mode.optimizer, mode.included, mode.excluded,
                        mode.required, vm=mode.vm)  # fmt: skip
        maker = FunctionMaker(inputs, outputs, mode, name=f"{self.name or 'function'}/inner",
                              profile=False, on_unused_input="ignore")  # fmt: skip
        fn = maker.create()
        self.phases["loop_compile"] = (
            self.phases.get("loop_compile", 0) + time.perf_counter_ns() - t0
        )
        return fn

    def create(self) -> Function:
        linked = self.link()
        self.t_linked = time.perf_counter_ns()
        self.phases["total"] = self.t_linked - self.t_start
        return Function(self, linked)

    def relinked(self, profile: Any) -> FunctionMaker:
        """A maker sharing this one's optimized graph, to link a second, independent
        Function over it (``Function.copy``)."""
        maker = _copy.copy(self)
        maker.profile = profile
        return maker

    def recompiled(self, swap: dict, delete_updates: bool, profile: Any) -> FunctionMaker:
        """This function compiled again from its original arguments, with shared variables
        swapped (``swap``: old -> new of the same type) or every update dropped."""
        for old, new in swap.items():
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError(f"Function.copy: swap must map shared variables, got {old}")
            if old.type != new.type:
                raise TypeError(
                    f"Function.copy: cannot swap {old} ({old.type}) for {new} ({new.type})"
                )
        orig = self.original
        updates = [] if delete_updates else [(swap.get(v, v), e) for v, e in pairs(orig["updates"])]
        givens = pairs(orig["givens"]) + list(swap.items())
        return FunctionMaker(
            orig["inputs"], orig["outputs"], self.mode, updates=updates,
            givens=givens, name=orig["name"],
            on_unused_input="ignore" if delete_updates else orig["on_unused_input"],
            allow_input_downcast=orig["allow_input_downcast"],
            no_default_updates=True if delete_updates else orig["no_default_updates"],
            profile=profile,
        )  # fmt: skip

    def reduce_function(self, trust_input: bool, profiled: bool) -> tuple:
        """How a Function made here pickles: the graph it was built from (flat, so deep
        graphs pickle) and the mode; ``rebuild_function`` compiles it again on load, which
        the compile cache makes cheap."""
        entries, refs = flatten(collect_vars(self.original))
        flat_original = replace_refs(self.original, lambda v: refs[v])
        return (rebuild_function, (entries, flat_original, self.mode, trust_input, profiled))


def replace_refs_back(flat, built):
    """The original arguments with the flat references replaced by the rebuilt Variables."""
    return replace_refs(flat, lambda r: built[r.index] if r.out < 0 else built[r.index][r.out])


def rebuild_function(
    entries, flat_original, mode: Mode | str | None, trust_input: bool, profiled: bool = False
) -> Function:
    """Unpickle a Function: rebuild its graph and compile it again."""
    original = replace_refs_back(flat_original, unflatten(entries))
    fn = FunctionMaker(
        original["inputs"],
        original["outputs"],
        get_mode(mode),
        updates=original["updates"],
        givens=original["givens"],
        name=original["name"],
        on_unused_input=original["on_unused_input"],
        allow_input_downcast=original["allow_input_downcast"],
        no_default_updates=original.get("no_default_updates", False),
        profile=True if profiled else None,
    ).create()
    fn.trust_input = trust_input
    return fn
