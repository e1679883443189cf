"""FunctionMaker: the graph built from ``function()``'s arguments, rewritten by the mode's
optimizer (graphc.opt), linked into a Program (graphc.linker) and given the VM kind that
will run it (graphc.vm); ``create()`` returns the callable ``Function``.

The optimizer, the linkers and the VMs are imported on the first compile, not by
``import graphc``.
"""

from __future__ import annotations

import copy as _copy
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from graphc.compile.callable import Function
from graphc.compile.fgraph import build_function_graph
from graphc.compile.io import pairs
from graphc.compile.mode import CompilePlan, LinkerSpec, Mode, ModeProvider, resolve
from graphc.compile.sharedvalue import SharedVariable
from graphc.graph.basic import new_node_origins
from graphc.graph.flat import collect_vars, flatten, replace_refs, unflatten
from graphc.import_clock import import_clock

if TYPE_CHECKING:
    from graphc.linker.base import CompiledStep, Linked
    from graphc.vm import VM


@dataclass(frozen=True)
class CompileOptions:
    """``graphc.function``'s arguments besides the graph and the mode, passed along as one
    record (to the maker, its copies, a pickled function's rebuild, an inner graph)."""

    updates: Any = None
    givens: Any = None
    name: str | None = None
    profile: Any = None  # None (config.profile), a bool or a ProfileStats
    on_unused_input: str = "raise"
    allow_input_downcast: bool | None = None
    no_default_updates: bool = False

    def graph_args(self) -> dict[str, Any]:
        """The arguments a function is rebuilt from (its pickled form, without profile)."""
        return dict(updates=self.updates, givens=self.givens, name=self.name,
                    on_unused_input=self.on_unused_input,
                    allow_input_downcast=self.allow_input_downcast,
                    no_default_updates=self.no_default_updates)  # fmt: skip


class FunctionMaker:
    """Builds the optimized FunctionGraph and the Program for a function, as ``plan``
    says (a Mode or mode name is resolved with ``options.profile``)."""

    def __init__(
        self,
        inputs,
        outputs: Any,
        plan: CompilePlan | Mode | ModeProvider | str | None,
        options: CompileOptions = CompileOptions(),
    ):
        self.t_start = time.perf_counter_ns()
        if not isinstance(plan, CompilePlan):
            plan = resolve(plan, options.profile)
        self.plan = plan
        self.options = options
        self.name = options.name
        self.allow_input_downcast = options.allow_input_downcast
        self.original = dict(inputs=inputs, outputs=outputs, **options.graph_args())
        spec = build_function_graph(
            inputs, outputs, updates=options.updates, givens=options.givens,
            on_unused_input=options.on_unused_input,
            no_default_updates=options.no_default_updates,
        )  # fmt: skip
        self.inputs, self.outputs, self.return_list = spec.inputs, spec.outputs, spec.return_list
        self.updates, self.shared = spec.updates, spec.shared
        self.n_outputs = len(self.outputs)
        self.phases: dict[str, int] = {}
        # a copy before any rewrite, for a mode that checks the rewrites (DEBUG_MODE)
        self.unoptimized = spec.fgraph.clone() if plan.keep_unoptimized else None
        self.fgraph = spec.fgraph
        self.rewrite_report = self._rewrite()

    @property
    def mode(self) -> Mode:
        return self.plan.mode

    @property
    def linker(self) -> LinkerSpec:
        return self.plan.linker

    @property
    def allow_gc(self) -> bool:
        return self.plan.allow_gc

    @property
    def vm_kind(self) -> str:
        return self.plan.vm_kind

    def _rewrite(self) -> Any:
        """Rewrite ``self.fgraph`` in place with the mode's optimizer and tags; the time
        spent importing modules on the way is counted apart."""
        from graphc.opt import rewrite_graph

        plan = self.plan
        t0 = time.perf_counter_ns()
        with import_clock() as imports, new_node_origins(()):
            report = rewrite_graph(self.fgraph, plan.optimizer, plan.including, plan.excluding,
                                   plan.requiring)  # fmt: skip
        self.phases["python_imports"] = imports.ns
        self.phases["rewrite"] = time.perf_counter_ns() - t0 - imports.ns
        self.phases["validate"] = getattr(report, "validate_ns", 0)
        return report

    def link(self):
        """Lower the optimized graph to a Program with the mode's linker."""
        from graphc.linker.base import link_py

        t0 = time.perf_counter_ns()
        with import_clock() as imports:
            if self.plan.linker.use_c:
                # without a working compiler link_cpy runs every node in Python, with one
                # warning that says why
                from graphc.linker.clinker import link_cpy

                linked = link_cpy(self.fgraph, self.fgraph.outputs, StepCompiler(self))
            else:
                linked = link_py(self.fgraph, self.fgraph.outputs, StepCompiler(self))
        self.phases["python_imports"] = self.phases.get("python_imports", 0) + imports.ns
        self.phases["linker"] = time.perf_counter_ns() - t0 - imports.ns
        return linked

    def make_vm(self, linked: Linked) -> VM:
        """The VM running ``linked``: the mode's own, or ``graphc.vm.make_vm``'s."""
        plan = self.plan
        if plan.vm_factory is not None:
            return plan.vm_factory(self, linked)
        from graphc.vm import make_vm

        return make_vm(linked.program, kind=plan.vm_kind, allow_gc=plan.allow_gc)

    def create(self) -> Function:
        linked = self.link()
        self.t_linked = time.perf_counter_ns()
        self.phases["total"] = self.t_linked - self.t_start
        return Function(self, linked, self.make_vm(linked))

    def relinked(self, profile: Any) -> FunctionMaker:
        """A maker sharing this one's optimized graph, to link a second, independent
        Function over it (``Function.copy``)."""
        maker = _copy.copy(self)
        maker.plan = self.plan.with_profile(profile)
        maker.options = replace(self.options, profile=profile)
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
        opts = self.options
        updates = [] if delete_updates else [(swap.get(v, v), e) for v, e in pairs(opts.updates)]
        options = replace(
            opts, updates=updates, givens=pairs(opts.givens) + list(swap.items()),
            on_unused_input="ignore" if delete_updates else opts.on_unused_input,
            no_default_updates=True if delete_updates else opts.no_default_updates,
            profile=profile,
        )  # fmt: skip
        return FunctionMaker(
            self.original["inputs"],
            self.original["outputs"],
            self.plan.with_profile(profile),
            options,
        )

    def reduce_function(self, trust_input: bool, profiled: bool) -> tuple:
        """How a Function made here pickles: the graph it was built from (flat, so deep
        graphs pickle) and the mode; ``rebuild_function`` compiles it again on load, which
        the compile cache makes cheap."""
        entries, refs = flatten(collect_vars(self.original))
        flat_original = replace_refs(self.original, lambda v: refs[v])
        return (rebuild_function, (entries, flat_original, self.mode, trust_input, profiled))


class StepCompiler:
    """The linker's InnerCompiler for one link of ``maker``'s function: a loop's step graph
    compiled with ``mode`` (a Mode or its name), by default the enclosing optimizer and
    linker; when the enclosing function is profiled, the step gets its profiler here, as a
    loop body (its parent's profiler adopts it when the enclosing Function is built).
    Without a maker (DEBUG_MODE's reference run), the step is compiled with ``mode`` or
    the default mode, unprofiled."""

    def __init__(self, maker: FunctionMaker | None = None):
        self.maker = maker

    def compile_step(self, inputs: list, outputs: list, mode: Any) -> CompiledStep:
        from graphc.linker.base import CompiledStep

        maker = self.maker
        t0 = time.perf_counter_ns()
        if maker is None:
            profiled, name = False, "function"
            plan = resolve(mode, profile=False)
        else:
            profiled = maker.plan.profile or maker.plan.profile_steps
            name = maker.name or "function"
            plan = maker.plan if mode is None else resolve(mode)
        options = CompileOptions(name=f"{name}/inner", profile=False, on_unused_input="ignore")
        fn = FunctionMaker(inputs, outputs, plan.as_loop_body(profiled), options).create()
        clock = None
        if profiled:
            from graphc.compile.profiling import loop_body_profiler

            clock = loop_body_profiler(fn)
        if maker is not None:
            maker.phases["loop_compile"] = (
                maker.phases.get("loop_compile", 0) + time.perf_counter_ns() - t0
            )
        return CompiledStep(fn, clock)


def replace_refs_back(flat, built):
    """The original arguments with the flat references replaced by the rebuilt Variables."""
    return replace_refs(flat, lambda r: built[r.index] if r.out < 0 else built[r.index][r.out])


def rebuild_function(
    entries, flat_original, mode: Mode | str | None, trust_input: bool, profiled: bool = False
) -> Function:
    """Unpickle a Function: rebuild its graph and compile it again."""
    original = replace_refs_back(flat_original, unflatten(entries))
    options = CompileOptions(
        updates=original["updates"],
        givens=original["givens"],
        name=original["name"],
        profile=True if profiled else None,
        on_unused_input=original["on_unused_input"],
        allow_input_downcast=original["allow_input_downcast"],
        no_default_updates=original.get("no_default_updates", False),
    )
    fn = FunctionMaker(original["inputs"], original["outputs"], mode, options).create()
    fn.trust_input = trust_input
    return fn
