"""graphc.config (defined here): typed, documented flags.

Set from ``GRAPHC_FLAGS`` (``name=value,section__name=value``), from ``~/.graphcrc``
(or the file named by ``GRAPHCRC``; ``name = value`` lines, ``[section]`` headers), and at
run time (``graphc.config.floatX = "float32"`` or ``with graphc.config.change_flags(...)``).
Sections read and write with dots (``config.profiling.n_apply``). Theano's names graphc
does not use are accepted with a one-time warning (``graphc.flags_theano``); other unknown
names are an error.
"""

from __future__ import annotations

import configparser
import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from graphc import flags_theano


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {v!r}")


def _choice(*options: str) -> Callable[[Any], str]:
    def parse(v: Any) -> str:
        s = str(v)
        if s not in options:
            raise ValueError(f"{s!r} is not one of {', '.join(options)}")
        return s

    return parse


def _blas_threads(v: Any) -> str:
    s = str(v).strip().lower()
    if s in ("auto", "off") or (s.isdigit() and int(s) >= 1):
        return s
    raise ValueError(f"{v!r} is not auto, off or a thread count >= 1")


def _colon_list(v: Any) -> str:
    if isinstance(v, list | tuple):
        return ":".join(v)
    return str(v)


@dataclass(frozen=True)
class Flag:
    name: str
    default: Any
    parse: Callable[[Any], Any]
    doc: str


FLAGS: tuple[Flag, ...] = (
    Flag(
        "floatX",
        "float64",
        _choice("float64", "float32", "float16"),
        "dtype of float constructors and Python float constants",
    ),
    Flag("mode", "FAST_RUN", str, "default compile mode name"),
    Flag(
        "linker",
        "auto",
        str,
        "default linker: auto ('c|py' when a compiler works), py, c|py, ...",
    ),
    Flag(
        "optimizer",
        "fast_run",
        str,
        "default optimizer: None, merge, fast_compile, fast_run",
    ),
    Flag("optimizer_including", "", _colon_list, "colon-separated rewrite tags to add"),
    Flag("optimizer_excluding", "", _colon_list, "colon-separated rewrite tags to remove"),
    Flag("optimizer_requiring", "", _colon_list, "colon-separated rewrite tags required"),
    Flag("optimizer_verbose", False, _bool, "print each replacement as it happens"),
    Flag("allow_gc", True, _bool, "free intermediates after their last use"),
    Flag("vm", "cvm", _choice("cvm", "py"), "VM implementation: Cython (cvm) or Python (py)"),
    Flag("compiledir", "", str, "compile cache directory ('' = per-user cache dir)"),
    Flag(
        "cxx",
        "",
        str,
        "C compiler command (unset: $CC or cc); set to '' for no C: functions use the "
        "'py' linker, with one warning",
    ),
    Flag(
        "openmp",
        False,
        _bool,
        "split long element-wise loops across threads (a pool of workers in the generated C, "
        "built with -fopenmp) when that is faster; off by default, as in Theano",
    ),
    Flag("openmp_elemwise_minsize", 200_000, int, "elements before an elemwise loop is split"),
    Flag(
        "openmp_policy",
        "auto",
        _choice("auto", "split", "serial"),
        "with openmp: split a long loop when its timings say it is faster (auto), always "
        "(split) or never (serial)",
    ),
    Flag(
        "c_vecmath",
        True,
        _bool,
        "generated C computes exp, expm1, log, log1p, tanh, sigmoid and softplus with "
        "graphc's own vector math (graphc/linker/c/vecmath.py); off: the C library's",
    ),
    Flag(
        "blas_threads",
        "auto",
        _blas_threads,
        "BLAS pools (numpy's, scipy's) set via threadpoolctl when graphc first links a BLAS "
        "node: auto (split the cores when they oversubscribe), off, or a thread count",
    ),
    Flag(
        "blas_library",
        "auto",
        _choice("auto", "numpy", "scipy"),
        "BLAS the generated C calls: numpy's own OpenBLAS (one thread pool with the "
        "user's numpy products), scipy's cython_blas, or auto (numpy's when found)",
    ),
    Flag("profile", False, _bool, "profile every function; print summaries at exit"),
    Flag("profile_memory", False, _bool, "add the memory section to profiles"),
    Flag("profile_optimizer", False, _bool, "add the optimizer section to profiles"),
    Flag("profile_trace", False, _bool, "record a per-node event trace (Chrome trace export)"),
    Flag(
        "profile_roofline",
        True,
        _bool,
        "profiles carry this machine's bandwidth and peak FLOP rate for the roofline "
        "(measured once per machine, about a second, and cached with the compile cache)",
    ),
    Flag(
        "profile_sample",
        1,
        int,
        "time only every N-th call of a profiled function (the first included); summaries "
        "scale the times up and print their uncertainty",
    ),
    Flag(
        "profile_budget",
        0.0,
        float,
        "sample a profiled function's calls so that timing them costs at most this share "
        "of its run time (0.01: 1%): 1 call in N timed, N adapted from the measured calls "
        "and the profiler's cost per timed call; 0: off (profile_sample applies)",
    ),
    Flag("profile_html", "", str, "at exit, also write the profiles' HTML report to this path"),
    Flag(
        "profiling__destination",
        "stdout",
        str,
        "where at-exit profiles go: stdout, stderr, path",
    ),
    Flag("profiling__n_apply", 5, int, "Apply rows printed (graphc-prof --full: all)"),
    Flag("profiling__n_ops", 3, int, "Class, Op and source-line rows printed (--full: all)"),
    Flag(
        "profiling__min_memory_size",
        1024,
        int,
        "smaller Apply outputs are summed in one line",
    ),
    Flag(
        "profiling__ignore_first_call",
        False,
        _bool,
        "leave the first call out of the times",
    ),
    Flag(
        "profiling__all_calls",
        True,
        _bool,
        "the Class, Ops and Apply tables count each function's first call, as Theano's "
        "did (False: they leave it out; it is always also reported on its own line)",
    ),
    Flag("profiling__trace_capacity", 100_000, int, "max trace events kept per function"),
    Flag("ProfileMode__n_apply_to_print", 15, int, "legacy ProfileMode Apply rows"),
    Flag("ProfileMode__n_ops_to_print", 20, int, "legacy ProfileMode Op rows"),
    Flag(
        "compute_test_value",
        "off",
        _choice("off", "ignore", "warn", "raise", "pdb"),
        "compute each new node's test value from its inputs' (tag.test_value, constants, "
        "shared values) when it is built; a missing one is ignored, warned about, raised or "
        "opens pdb",
    ),
    Flag("print_test_value", False, _bool, "a Variable's repr shows its test value"),
    Flag("DebugMode__check_nan", False, _bool, "DEBUG_MODE raises on NaN/Inf outputs"),
    Flag("compile_timeout", 600.0, float, "seconds one C compile may take before it is stopped"),
    Flag(
        "compile_lock_wait",
        120.0,
        float,
        "seconds to wait for another process building the same module before building a "
        "private copy",
    ),
)


class Config:
    """The flag values. Attribute access reads and writes flags; names are checked."""

    __slots__ = ("_flags", "_values", "_explicit", "_ignored")  # its own state; the rest: flags

    def __init__(self, flags: tuple[Flag, ...] = FLAGS):
        self._flags = {f.name: f for f in flags}
        self._values = {f.name: f.default for f in flags}
        self._explicit: set[str] = set()
        self._ignored: dict[str, Any] = {}  # Theano names set by the user

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            pass
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get(name)

    def get(self, name: str) -> Any:
        """A flag, a section (``get("profiling").n_apply``) or an ignored Theano name."""
        name = name.replace(".", "__")
        if name in self._values:
            return self._values[name]
        if name in self._ignored:
            return self._ignored[name]
        if name in flags_theano.THEANO_NAMES:
            return flags_theano.THEANO_NAMES[name]
        if any(f.startswith(name + "__") for f in self._flags) or flags_theano.is_theano_section(
            name
        ):
            return _Section(self, name)
        raise AttributeError(f"graphc.config has no flag {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        """A public name sets a flag; a private one (``_values``...) is Config's own."""
        if name.startswith("_"):
            super().__setattr__(name, value)
        else:
            self.set(name, value)

    def set(self, name: str, value: Any) -> None:
        name = name.replace(".", "__")
        flag = self._flags.get(name)
        if flag is None and _theano_name(name):
            if name not in self._ignored:
                warnings.warn(
                    f"graphc.config: {name.replace('__', '.')} is a Theano flag graphc does "
                    "not use; it is stored and has no effect",
                    stacklevel=3,
                )
            self._ignored[name] = value
            return
        if flag is None:
            raise AttributeError(f"unknown graphc flag {name!r}; known: {', '.join(self._flags)}")
        try:
            self._values[name] = flag.parse(value)
        except (TypeError, ValueError) as e:
            raise ValueError(f"bad value for graphc flag {name}: {e}") from None
        self._explicit.add(name)

    def is_set(self, name: str) -> bool:
        """True when the flag was given by the user (env, rc file or assignment)."""
        return name in self._explicit

    @contextlib.contextmanager
    def change_flags(self, **changes: Any) -> Iterator[None]:
        """Change flags for the duration of a ``with`` block."""
        names = {k.replace(".", "__") for k in changes}
        old = {k: self._values[k] for k in names if k in self._flags}
        was_set = set(self._explicit)
        ignored = dict(self._ignored)
        try:
            for k, v in changes.items():
                self.set(k, v)
            yield
        finally:
            self._values.update(old)
            self._ignored.clear()
            self._ignored.update(ignored)
            self._explicit.clear()
            self._explicit.update(was_set)

    def describe(self) -> str:
        return "\n".join(
            f"{f.name} = {self._values[f.name]!r}  # {f.doc}" for f in self._flags.values()
        )

    def load_flags_string(self, text: str) -> None:
        for item in filter(None, (s.strip() for s in text.split(","))):
            if "=" not in item:
                raise ValueError(f"GRAPHC_FLAGS item {item!r} is not name=value")
            k, v = item.split("=", 1)
            self.set(k.strip(), v.strip())

    def load_rc(self, path: str) -> None:
        # strict=False: a file that starts with its own [global] header (the usual form)
        # continues the implicit [global] section instead of being a duplicate section
        parser = configparser.ConfigParser(strict=False)
        parser.optionxform = str  # keep case (floatX)
        with open(path) as fh:
            parser.read_string("[global]\n" + fh.read())
        for section in parser.sections():
            for k, v in parser.items(section):
                self.set(k if section == "global" else f"{section}__{k}", v)


def _theano_name(name: str) -> bool:
    return flags_theano.is_theano_name(name)


class _Section:
    """``config.profiling``: the flags named ``profiling__*`` as attributes."""

    __slots__ = ("_cfg", "_prefix")

    def __init__(self, cfg: Config, prefix: str):
        self._cfg = cfg
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._cfg.get(f"{self._prefix}__{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            super().__setattr__(name, value)
        else:
            self._cfg.set(f"{self._prefix}__{name}", value)

    def __repr__(self) -> str:
        return f"<graphc.config section {self._prefix.replace('__', '.')}>"


def _load_default() -> Config:
    cfg = Config()
    rc = os.environ.get("GRAPHCRC", os.path.expanduser("~/.graphcrc"))
    for path in rc.split(os.pathsep):
        if path and os.path.isfile(path):
            cfg.load_rc(path)
    cfg.load_flags_string(os.environ.get("GRAPHC_FLAGS", ""))
    return cfg


config = _load_default()
change_flags = config.change_flags
