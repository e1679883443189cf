"""``import theano`` served by graphc, for running Theano code unchanged (opt-in).

``install()`` puts a finder first on ``sys.meta_path`` that serves ``theano`` and every
``theano.X.Y`` from graphc's own modules and objects (``table.MODULES``): aliases, not
copies, so ``theano.tensor.dot is graphc.tensor.dot``. Nothing happens until it is called,
and it refuses to run when a real Theano is already imported. ``uninstall()`` undoes it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from graphc.compat.theano.shim import Shim, ShimModule, public_names
from graphc.compat.theano.table import MODULES

__all__ = ["install", "installed", "resolve", "uninstall"]


def _graphc_module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def resolve(name: str, explicit: bool = False) -> str | Shim | None:
    """What serves the Theano module ``name``: a graphc module name, a Shim, or None.

    With ``explicit``, only modules listed in the table (not found by name under their
    parent's graphc module)."""
    if name in MODULES:
        return MODULES[name]
    parent, _, child = name.rpartition(".")
    if explicit or not parent or not name.startswith("theano."):
        return None
    home = resolve(parent)
    if home is None:
        return None
    base = home if isinstance(home, str) else home.sources[0]
    candidate = f"{base}.{child}"
    return candidate if _graphc_module_exists(candidate) else None


def _submodule(full: str, explicit: bool) -> ModuleType | None:
    """The Theano submodule ``full`` if it exists, imported (for a shim's attributes)."""
    if resolve(full, explicit) is None:
        return None
    return importlib.import_module(full)


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str | Shim) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if isinstance(self.target, str):
            return ModuleType(spec.name)  # replaced by the graphc module in exec_module
        module = ShimModule(spec.name, f"Theano's {spec.name}, served by graphc.")
        module.__dict__.update(_shim=self.target, _submodule=_submodule, __path__=[])
        return module

    def exec_module(self, module: ModuleType) -> None:
        if isinstance(self.target, str):
            # the import system returns what sys.modules holds after this: graphc's module
            sys.modules[module.__name__] = importlib.import_module(self.target)
            return
        module.__dict__["__all__"] = public_names(self.target)
        for sub in self.target.preload:
            importlib.import_module(sub)


class TheanoFinder(importlib.abc.MetaPathFinder):
    """Serves ``theano`` and its submodules from graphc (see ``table.MODULES``)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "theano" and not fullname.startswith("theano."):
            return None
        found = resolve(fullname)
        if found is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} (graphc serves no such Theano module)",
                name=fullname,
            )
        is_package = isinstance(found, Shim)
        return importlib.machinery.ModuleSpec(fullname, _Loader(found), is_package=is_package)


def installed() -> bool:
    """Whether the hook is on ``sys.meta_path``."""
    return any(isinstance(f, TheanoFinder) for f in sys.meta_path)


def install() -> None:
    """Serve ``import theano`` from graphc in this process (idempotent).

    Raises RuntimeError if a real Theano (or anything else named ``theano``) is already
    imported: graphc never shadows it by accident."""
    if installed():
        return
    other = sys.modules.get("theano")
    if other is not None and not isinstance(other, ShimModule):
        where = getattr(other, "__file__", None) or repr(other)
        raise RuntimeError(
            f"graphc.compat.theano.install(): a module 'theano' is already imported ({where}); "
            "install the hook before anything imports Theano, in a process without it"
        )
    sys.meta_path.insert(0, TheanoFinder())


def uninstall() -> None:
    """Remove the hook and forget the ``theano`` modules it served."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TheanoFinder)]
    for name in [n for n in sys.modules if n == "theano" or n.startswith("theano.")]:
        del sys.modules[name]
