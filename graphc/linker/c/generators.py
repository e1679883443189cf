"""The complete table of C generators: every generator module, named here, registers its
Op family's generators in ``registry`` when imported, so a lookup through this module sees
them all. A new family's module is added to ``GENERATOR_MODULES``."""

from __future__ import annotations

from graphc.graph.basic import Apply
from graphc.linker.c import (
    gen_blas,
    gen_conv,
    gen_dimshuffle,
    gen_elemwise,
    gen_mrg,
    gen_nnet,
    gen_pool,
    gen_random,
    gen_reduce,
    gen_shape,
)
from graphc.linker.c.registry import _GENERATORS, CGenerator, CThunkCode, has_float16

#: One module per Op family, each registering its generators when imported.
GENERATOR_MODULES = (
    gen_blas, gen_conv, gen_dimshuffle, gen_elemwise, gen_mrg, gen_nnet, gen_pool,
    gen_random, gen_reduce, gen_shape,
)  # fmt: skip


def generator_for(op: object) -> CGenerator | None:
    """The generator registered for ``op``'s class (or a base), or None."""
    return _GENERATORS.get(op)


def c_code_for(node: Apply) -> CThunkCode | None:
    """The C for ``node``, or None when it must run in Python: no generator, the generator
    declines, or the node reads or writes float16 (generated C has no half type, so such
    a node always runs its numpy ``perform``)."""
    if has_float16(node):
        return None
    gen = generator_for(node.op)
    return None if gen is None else gen(node)
