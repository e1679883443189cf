"""Write the public API of the Theano this runs under (its modules ``theano``,
``theano.tensor``, ``theano.tensor.nnet``, ``theano.gradient``) as JSON: per module, per
public name, its kind and, for functions and classes, the names of its positional
parameters in order. tests/data/theano_api.json is this script's output under Theano 0.8.2.

    python api.py OUT.json        (under a real Theano, e.g. scripts/theano_reference.sh api)

A public name is one not starting with ``_`` that is not an alias of something outside
Theano (``numpy``, ``warnings``, ``xrange``, ``OrderedDict``, ...).
"""

import functools
import importlib
import inspect
import json
import sys
import types

MODULES = ("theano", "theano.tensor", "theano.tensor.nnet", "theano.gradient")


def _theano_owned(value):
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "theano"
    if isinstance(value, functools.partial):
        return _theano_owned(value.func)
    owner = getattr(value, "__module__", None)
    if owner is None or isinstance(value, (int, float, str, list, tuple, dict, set)):
        return type(value).__module__ == "builtins" or _theano_owned(type(value))
    return owner.split(".")[0] in ("theano", "tensor", "scalar")  # Elemwise ops say "tensor"


def positional(value):
    """Names of the positional parameters (``"*"`` last for ``*args``), or None when
    there is no signature. tests/test_theano_api_reference.py reads graphc's with it."""
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in sig.parameters.values() if p.kind in kinds]
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
        names.append("*")
    return names


def describe(value):
    if isinstance(value, types.ModuleType):
        return {"kind": "module"}
    if inspect.isclass(value):
        return {"kind": "class", "positional": positional(value)}
    if isinstance(value, (types.FunctionType, functools.partial)):
        return {"kind": "function", "positional": positional(value)}
    if callable(value):
        return {"kind": "callable"}  # an Op instance: called with its inputs
    return {"kind": "value"}


def main(out):
    api = {}
    for name in MODULES:
        module = importlib.import_module(name)
        api[name] = {
            attr: describe(getattr(module, attr))
            for attr in sorted(dir(module))
            if not attr.startswith("_") and _theano_owned(getattr(module, attr))
        }
    api["_version"] = importlib.import_module("theano").__version__
    with open(out, "w") as f:
        json.dump(api, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
