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

from collections.abc import Callable
from dataclasses import dataclass, replace

from graphc.flags import config


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

OPTIMIZERS = ("None", "merge", "fast_compile", "fast_run")


def resolve_linker(name: str) -> LinkerSpec:
    """The LinkerSpec for ``name``: ``auto`` means ``config.linker``, whose default ``auto``
    picks ``c|py`` when C code can be built, else ``py``."""
    source = ""
    if name == "auto":
        name, source = config.linker, " (graphc.config.linker)"
    if name == "auto":
        from graphc.linker import c_available

        name = "c|py" if c_available() else "py"
    try:
        return LINKERS[name]
    except KeyError:
        raise ValueError(
            f"unknown linker {name!r}{source}; expected one of auto, {', '.join(LINKERS)}"
        ) from None


@dataclass(frozen=True)
class Mode:
    """``Mode(linker="c|py", optimizer="fast_run")``; ``including``/``excluding``/
    ``requiring`` return new Modes with rewrite tags added or removed."""

    linker: str = "auto"
    optimizer: str | None = "fast_run"
    included: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    profile: bool = False  # profile every function compiled with this mode
    name: str = ""
    vm: str | None = None  # override the VM kind ("cvm" or "py")

    def __post_init__(self):
        opt = "None" if self.optimizer is None else str(self.optimizer)
        if opt not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {opt!r}; expected one of {', '.join(OPTIMIZERS)}")
        object.__setattr__(self, "optimizer", opt)
        if self.linker != "auto" and self.linker not in LINKERS:
            raise ValueError(
                f"unknown linker {self.linker!r}; expected one of auto, {', '.join(LINKERS)}"
            )

    def optimizer_name(self) -> str:
        """The optimizer as the rewrite passes name it (``"None"``: no rewriting);
        ``__post_init__`` already stored it so."""
        return "None" if self.optimizer is None else self.optimizer

    def including(self, *tags: str) -> Mode:
        return replace(self, included=self.included + tags, name="")

    def excluding(self, *tags: str) -> Mode:
        return replace(self, excluded=self.excluded + tags, name="")

    def requiring(self, *tags: str) -> Mode:
        return replace(self, required=self.required + tags, name="")

    def effective_tags(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """Included, excluded and required tags: the mode's plus the config flags'."""

        def split(flag: str) -> tuple[str, ...]:
            return tuple(t for t in getattr(config, flag).split(":") if t)

        return (
            self.included + split("optimizer_including"),
            self.excluded + split("optimizer_excluding"),
            self.required + split("optimizer_requiring"),
        )

    def keeps_unoptimized_graph(self) -> bool:
        """Whether the maker keeps a copy of the graph before rewriting (``unoptimized``)
        for this mode's VM; DEBUG_MODE checks each rewrite against it."""
        return False

    def __str__(self) -> str:
        if self.name:
            return self.name
        return f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r})"


FAST_COMPILE = Mode(linker="py", optimizer="fast_compile", name="FAST_COMPILE")
FAST_RUN = Mode(linker="auto", optimizer="fast_run", name="FAST_RUN")
PROFILE_MODE = Mode(linker="auto", optimizer="fast_run", profile=True, name="PROFILE_MODE")

_NAMED = {"FAST_COMPILE": FAST_COMPILE, "FAST_RUN": FAST_RUN, "PROFILE_MODE": PROFILE_MODE}

# Modes defined in their own modules, by name: a factory making a new Mode each time.
# ``compile/debugmode.py`` registers DEBUG_MODE (graphc.compile imports it).
MODE_FACTORIES: dict[str, Callable[[], Mode]] = {}


def register_mode(name: str, factory: Callable[[], Mode]) -> None:
    """Make ``get_mode(name)`` return ``factory()``."""
    MODE_FACTORIES[name] = factory


def get_mode(mode: Mode | str | None) -> Mode:
    """The Mode for ``mode``: a Mode, a mode name, or None for ``config.mode``. The name
    ``"Mode"`` means ``Mode(linker=config.linker, optimizer=config.optimizer)``."""
    if mode is None:
        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if hasattr(mode, "as_mode"):  # ProfileMode, DebugMode objects
        return mode.as_mode()
    if mode in MODE_FACTORIES:
        return MODE_FACTORIES[mode]()
    if mode == "ProfileMode":
        return PROFILE_MODE
    if mode in _NAMED:
        return _NAMED[mode]
    if mode == "Mode":  # the flags' own choice: config.linker and config.optimizer
        return Mode(linker="auto", optimizer=_config_optimizer(), name="Mode")
    raise ValueError(f"unknown mode {mode!r}; expected a Mode or one of {', '.join(_NAMED)}, "
                     "Mode, DEBUG_MODE")  # fmt: skip


def _config_optimizer() -> str:
    opt = config.optimizer
    if opt not in OPTIMIZERS:
        raise ValueError(
            f"unknown optimizer {opt!r} (graphc.config.optimizer); expected one of "
            f"{', '.join(OPTIMIZERS)}"
        )
    return opt
