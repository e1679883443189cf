"""Modes: which optimizer and which linker/VM a function is compiled with.

Linker names:

========== ===================================================================
``py``       every node runs its Op's numpy ``perform``; Cython VM, gc on
``c|py``     generated C where an Op has it, ``perform`` elsewhere; Cython VM, gc on
``c|py_nogc`` as ``c|py`` with intermediates kept between calls (buffer reuse)
``cvm``      same as ``c|py`` (Theano's name for the C-implemented VM)
``cvm_nogc`` same as ``c|py_nogc``
``vm``       C thunks where available, run by the pure-Python reference VM
``vm_nogc``  as ``vm`` without gc
``auto``     ``config.linker``; when that is ``auto`` too (the default), ``c|py`` when a C
           compiler works, else ``py``
========== ===================================================================
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from graphc.flags import config
from graphc.opt.optimizers import check_optimizer

if TYPE_CHECKING:
    from graphc.linker.base import Linked
    from graphc.profile.stats import ProfileStats
    from graphc.vm import VM

    VMFactory = Callable[[Any, Linked], VM]  # (the FunctionMaker, its linked program) -> VM


@dataclass(frozen=True)
class LinkerSpec:
    """What a linker name means: use C thunks, which VM, garbage collection."""

    name: str
    use_c: bool
    vm: str  # "cvm" or "py"
    allow_gc: bool | None  # None: from config.allow_gc


LINKERS = {
    "py": LinkerSpec("py", False, "cvm", None),
    "c|py": LinkerSpec("c|py", True, "cvm", None),
    "c|py_nogc": LinkerSpec("c|py_nogc", True, "cvm", False),
    "cvm": LinkerSpec("cvm", True, "cvm", None),
    "cvm_nogc": LinkerSpec("cvm_nogc", True, "cvm", False),
    "vm": LinkerSpec("vm", True, "py", None),
    "vm_nogc": LinkerSpec("vm_nogc", True, "py", False),
}


def resolve_linker(name: str) -> LinkerSpec:
    """The LinkerSpec for ``name``: ``auto`` means ``config.linker``, whose default ``auto``
    picks ``c|py`` when C code can be built, else ``py``."""
    source = ""
    if name == "auto":
        name, source = config.linker, " (graphc.config.linker)"
    if name == "auto":
        from graphc.linker import c_available

        name = "c|py" if c_available() else "py"
        if name == "py" and config.is_set("cxx") and not str(config.cxx).strip():
            _warn_once("graphc.config.cxx is empty: C code is not compiled, functions use "
                       "the 'py' linker (every node runs its numpy perform)")  # fmt: skip
    try:
        return LINKERS[name]
    except KeyError:
        raise ValueError(
            f"unknown linker {name!r}{source}; expected one of auto, {', '.join(LINKERS)}"
        ) from None


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """One RuntimeWarning per process for ``message``."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


@dataclass(frozen=True)
class Mode:
    """``Mode(linker="c|py", optimizer="fast_run")``; ``including``/``excluding``/
    ``requiring`` return new Modes with rewrite tags added or removed. ``optimizer=None``
    and ``"None"`` both mean no rewriting."""

    linker: str = "auto"
    optimizer: str | None = "fast_run"
    included: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    profile: bool = False  # profile every function compiled with this mode
    name: str = ""
    vm: str | None = None  # override the VM kind ("cvm" or "py")

    def __post_init__(self):
        check_optimizer(self.optimizer)
        if self.linker != "auto" and self.linker not in LINKERS:
            raise ValueError(
                f"unknown linker {self.linker!r}; expected one of auto, {', '.join(LINKERS)}"
            )

    def including(self, *tags: str) -> Mode:
        return replace(self, included=self.included + tags, name="")

    def excluding(self, *tags: str) -> Mode:
        return replace(self, excluded=self.excluded + tags, name="")

    def requiring(self, *tags: str) -> Mode:
        return replace(self, required=self.required + tags, name="")

    def vm_factory(self) -> VMFactory | None:
        """The VM this mode runs its functions with instead of ``graphc.vm.make_vm``'s
        (DEBUG_MODE's checking VM, MonitorMode's), or None."""
        return None

    def keeps_unoptimized_graph(self) -> bool:
        """Whether the maker keeps a copy of the graph before rewriting (``unoptimized``)
        for this mode's VM; DEBUG_MODE checks each rewrite against it."""
        return False

    def __str__(self) -> str:
        if self.name:
            return self.name
        return f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r})"


class ModeProvider(ABC):
    """An object passed as ``mode=`` that stands for a Mode (``ProfileMode``): functions
    are compiled with ``as_mode()`` and profiled into ``profile_target()`` when not None."""

    @abstractmethod
    def as_mode(self) -> Mode: ...

    def profile_target(self) -> ProfileStats | None:
        return None


FAST_COMPILE = Mode(linker="py", optimizer="fast_compile", name="FAST_COMPILE")
FAST_RUN = Mode(linker="auto", optimizer="fast_run", name="FAST_RUN")
PROFILE_MODE = Mode(linker="auto", optimizer="fast_run", profile=True, name="PROFILE_MODE")


def _flags_mode() -> Mode:
    """``"Mode"``: the flags' own choice, config.linker and config.optimizer."""
    opt = check_optimizer(config.optimizer, " (graphc.config.optimizer)")
    return Mode(linker="auto", optimizer=opt, name="Mode")


# Every mode name -> a factory of its Mode. ``compile/debugmode.py`` adds DEBUG_MODE and
# DebugMode (graphc.compile imports it).
MODES: dict[str, Callable[[], Mode]] = {
    "FAST_COMPILE": lambda: FAST_COMPILE,
    "FAST_RUN": lambda: FAST_RUN,
    "PROFILE_MODE": lambda: PROFILE_MODE,
    "ProfileMode": lambda: PROFILE_MODE,
    "Mode": _flags_mode,
}


def register_mode(name: str, factory: Callable[[], Mode]) -> None:
    """Make ``get_mode(name)`` return ``factory()``."""
    MODES[name] = factory


def get_mode(mode: Mode | ModeProvider | str | None) -> Mode:
    """The Mode for ``mode``: a Mode, a ModeProvider, a name in ``MODES``, or None for
    ``config.mode``."""
    if mode is None:
        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, ModeProvider):
        return mode.as_mode()
    factory = MODES.get(mode) if isinstance(mode, str) else None
    if factory is None:
        raise ValueError(f"unknown mode {mode!r}; expected a Mode or one of {', '.join(MODES)}")
    return factory()


@dataclass(frozen=True)
class CompilePlan:
    """Everything the ``mode`` and ``profile`` arguments and the flags decide for one
    compile, read once by :func:`resolve`."""

    mode: Mode  # named in profiles, kept when a function is pickled
    optimizer: str  # as the passes name it; "None": no rewriting
    including: tuple[str, ...]
    excluding: tuple[str, ...]
    requiring: tuple[str, ...]
    linker: LinkerSpec
    vm_kind: str  # "cvm" or "py": what make_vm builds
    vm_factory: VMFactory | None  # the mode's own VM (DEBUG_MODE, MonitorMode), or None
    allow_gc: bool
    keep_unoptimized: bool  # keep the graph before rewriting (DEBUG_MODE)
    profile: bool  # whether functions are profiled
    profile_target: ProfileStats | None  # where to (None: a new ProfileStats)
    print_at_exit: bool  # profiled because of a flag or mode: printed at exit
    mode_stats: ProfileStats | None = None  # a ProfileMode's, which always profiles
    profile_steps: bool = False  # a profiled function's loop body: its loops are profiled

    def with_profile(self, profile: object) -> CompilePlan:
        """This plan with the ``profile`` argument (None, bool, ProfileStats) resolved
        again (``Function.copy``)."""
        return replace(self, **_profile_fields(self.mode, self.mode_stats, profile))

    def as_loop_body(self, profiled: bool) -> CompilePlan:
        """This plan for an inner graph (a scan's step): never profiled on its own (the
        enclosing function's profile times its steps); ``profiled``: the enclosing function
        is, so the step's own loops get profilers too (``profile_steps``)."""
        mode = self.mode
        if self.mode_stats is not None or mode.profile:
            mode = Mode(mode.linker, mode.optimizer, mode.included, mode.excluded,
                        mode.required, vm=mode.vm)  # fmt: skip
        return replace(self, mode=mode, mode_stats=None, profile=False, profile_target=None,
                       print_at_exit=False, profile_steps=profiled)  # fmt: skip


def _split(flag: str) -> tuple[str, ...]:
    return tuple(t for t in str(flag).split(":") if t)


def _profile_fields(mode: Mode, mode_stats: ProfileStats | None, profile: object) -> dict:
    """Whether to profile, into which ProfileStats, and whether to print at exit."""
    at_exit = bool(config.profile or mode.profile)
    if mode_stats is not None:
        wanted = True
    elif profile is None:
        wanted = at_exit
    else:
        wanted = profile is not False
    target = mode_stats
    if profile is not None and not isinstance(profile, bool):
        from graphc.profile.stats import ProfileStats

        if isinstance(profile, ProfileStats):
            target = profile
    return {"profile": wanted, "profile_target": target, "print_at_exit": at_exit}


def resolve(mode: Mode | ModeProvider | str | None, profile: object = None) -> CompilePlan:
    """The CompilePlan for ``mode`` (as ``graphc.function`` takes it) and ``profile``
    (None: ``config.profile``, a bool, or a ProfileStats to add to)."""
    resolved = get_mode(mode)
    mode_stats = mode.profile_target() if isinstance(mode, ModeProvider) else None
    linker = resolve_linker(resolved.linker)
    vm_kind = resolved.vm or (linker.vm if linker.vm == "py" else config.vm)
    return CompilePlan(
        mode=resolved,
        optimizer=check_optimizer(resolved.optimizer),
        including=resolved.included + _split(config.optimizer_including),
        excluding=resolved.excluded + _split(config.optimizer_excluding),
        requiring=resolved.required + _split(config.optimizer_requiring),
        linker=linker,
        vm_kind=vm_kind,
        vm_factory=resolved.vm_factory(),
        allow_gc=bool(config.allow_gc) if linker.allow_gc is None else linker.allow_gc,
        keep_unoptimized=resolved.keeps_unoptimized_graph(),
        mode_stats=mode_stats,
        **_profile_fields(resolved, mode_stats, profile),
    )
