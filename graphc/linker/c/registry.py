"""Which Ops have C code, and the C each node gets.

A generator is registered per Op class and returns a ``CThunkCode`` for a node, or None
when that node (its dtypes, its layout...) has no C implementation and must run its
Python ``perform``. Code generation stays here in the linker, keyed by Op and input
types; the Ops only provide pieces (a scalar Op's C expression, for instance).

The body of a node's thunk is C with these names in scope::

    static int thunk_N(void *params, PyObject *const *inputs, PyObject **outputs) {
        PyArrayObject *i0 = (PyArrayObject *)inputs[0];   ... one per input
        PyObject **o0 = &outputs[0];                       ... one per output slot
        <body>            /* on error: set a Python exception, then FAIL; */
        return 0;
    }

An output slot holds NULL or an owned reference to the previous value (garbage
collection off), which the body may reuse when it has the right dtype and shape; on
success every slot must hold an owned reference (``Py_XSETREF(*o0, (PyObject *)arr)``).
Inputs are borrowed, never NULL, and must never be written to unless the Op declares a
``destroy_map`` for them. ``FAIL`` is ``return -1``.

An element-wise node may also name its contiguous kernel (``kernel``), a support function
``static void NAME(npy_intp n, char **p)``: ``p`` holds one pointer per input, then one per
output, each to ``n`` contiguous, aligned elements of that operand's dtype (no
broadcasting); every input of an element is read before its outputs are written, so an
output may be exactly an input. The linker exports it as a ``"graphc.ew_kernel"`` capsule
(``NodeImpl.c_kernel``), which a loop driver may call instead of the thunk when it has
checked those conditions itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graphc.graph.basic import Apply
from graphc.graph.rules import RuleTable


@dataclass(frozen=True)
class CThunkCode:
    """The C for one node: its thunk body plus module-level support code."""

    body: str
    support: tuple[str, ...] = ()  # top-level C (helpers, typedefs); deduplicated by text
    init: tuple[str, ...] = ()  # statements run once in the module init; FAIL on error
    libraries: tuple[str, ...] = ()  # extra libraries to link (besides m, mvec)
    key: object = None  # equal keys share one thunk function (same Op, same input types)
    inputs: tuple[tuple[int, int], ...] = ()  # per input (ndim, type number), set by the linker
    name: str = ""  # the node's Op, for the linker's input-check errors
    kernel: str = ""  # the contiguous element kernel's C name (see the module docstring)


CGenerator = Callable[[Apply], CThunkCode | None]
_GENERATORS: RuleTable[CGenerator] = RuleTable("C generator")


def register_c(*op_classes: type) -> Callable[[CGenerator], CGenerator]:
    """Decorator: ``@register_c(Elemwise) def gen(node) -> CThunkCode | None``."""

    return _GENERATORS.register(*op_classes)


def has_float16(node: Apply) -> bool:
    """Whether an input or output of ``node`` is a float16 tensor or scalar."""
    return any(getattr(v.type, "dtype", None) == "float16" for v in (*node.inputs, *node.outputs))
