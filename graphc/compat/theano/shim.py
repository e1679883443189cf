"""The module object that stands for a Theano package whose layout differs from graphc's."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Shim:
    """A Theano module served from several graphc modules.

    ``sources``: graphc modules whose names it serves (the first that has a name wins; the
    first is also where its unlisted submodules are looked up). ``extra``: Theano names
    graphc keeps elsewhere, ``name -> "graphc.module:attr"`` (or ``"graphc.module"``).
    ``preload``: Theano submodules that importing it loads, as Theano's import does.
    """

    sources: tuple[str, ...]
    extra: dict[str, str] = field(default_factory=dict)
    preload: tuple[str, ...] = ()


def resolve_ref(ref: str) -> Any:
    """``"graphc.x:attr"`` -> that object; ``"graphc.x"`` -> the module."""
    mod, _, attr = ref.partition(":")
    module = importlib.import_module(mod)
    return getattr(module, attr) if attr else module


class ShimModule(ModuleType):
    """A Theano package: its names are graphc's own objects, looked up on each access (so
    ``theano.tensor.dot is graphc.tensor.dot``), never copied."""

    _shim: Shim
    _submodule: Any  # callable(full_name) -> module or None, set by the finder

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        shim = self.__dict__["_shim"]
        if name in shim.extra:
            return resolve_ref(shim.extra[name])
        sub = self.__dict__["_submodule"](f"{self.__name__}.{name}", explicit=True)
        if sub is not None:
            return sub
        for src in shim.sources:
            module = importlib.import_module(src)
            if hasattr(module, name):
                return getattr(module, name)
        sub = self.__dict__["_submodule"](f"{self.__name__}.{name}", explicit=False)
        if sub is not None:
            return sub
        from graphc.compat.theano.missing import missing

        return missing(self.__name__, name)  # a Theano name graphc lacks, or AttributeError

    def __dir__(self) -> list[str]:
        shim = self.__dict__["_shim"]
        names = set(self.__dict__) | set(shim.extra)
        for src in shim.sources:
            names |= {n for n in dir(importlib.import_module(src)) if not n.startswith("_")}
        return sorted(names)


def _public(name: str, value: Any) -> bool:
    """A name a star import should give: not private, not a helper module or flag."""
    if name.startswith("_") or name in ("TYPE_CHECKING", "annotations"):
        return False
    return not isinstance(value, ModuleType) or value.__name__.startswith("graphc.")


def public_names(shim: Shim) -> list[str]:
    """``__all__`` of a shim: its sources' public names (listed in their ``__all__`` or
    not starting with ``_``: Theano's ``from theano.tensor import *`` gives them all) and
    its extra names."""
    names: dict[str, None] = {}
    for src in shim.sources:
        module = importlib.import_module(src)
        names.update(dict.fromkeys(getattr(module, "__all__", ())))
        names.update(dict.fromkeys(n for n, v in vars(module).items() if _public(n, v)))
    names.update(dict.fromkeys(n for n in shim.extra if not n.startswith("_")))
    return list(names)
