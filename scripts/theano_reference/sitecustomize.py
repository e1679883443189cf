"""Runtime aliases a 2016 Theano (0.8.2) needs on Python 3.11, installed as the reference
venv's ``sitecustomize`` (loaded before any import). Theano's files are not touched."""

import collections
import collections.abc
import inspect

for _name in collections.abc.__all__:
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

if not hasattr(inspect, "getargspec"):

    def _getargspec(func):
        spec = inspect.getfullargspec(func)
        return inspect.ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)

    inspect.ArgSpec = collections.namedtuple("ArgSpec", "args varargs keywords defaults")
    inspect.getargspec = _getargspec

# Theano 0.8.2's scan loop in C is Cython output of its time, which includes
# "longintrepr.h" (moved in 3.11) and so fails to compile: make its import fail as when no
# compiler is there, so scan runs its Python loop (the inner function is still C).
import sys  # noqa: E402

sys.modules.setdefault("theano.scan_module.scan_perform_ext", None)
