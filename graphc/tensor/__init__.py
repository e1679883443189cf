"""Symbolic tensors: types, constructors and the tensor Op library."""

import sys

from graphc.tensor import elemwise_grad, nnet, pprint_rules, rop_rules, subtensor
from graphc.tensor import variable as _variable
from graphc.tensor.basic import *  # noqa: F403
from graphc.tensor.blas import *  # noqa: F403
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import *  # noqa: F403
from graphc.tensor.subtensor import inc_subtensor, set_subtensor, take  # noqa: F401
from graphc.tensor.type import *  # noqa: F403
from graphc.tensor.type import TensorType, tensor
from graphc.tensor.variable import (
    TensorConstant,
    TensorVariable,
    as_tensor_variable,
    constant,
)

# The modules that fill rule tables owned by modules below them: Elemwise and DimShuffle
# gradients (tensor/elemwise.py), pprint (graphc/printing.py), R_op (graphc/graph/rop.py),
# and Subtensor's constant value (tensor/constant_value.py). Importing any graphc.tensor.*
# module runs this package first, so the tables are complete before a graph exists.
RULE_MODULES = (elemwise_grad, pprint_rules, rop_rules, subtensor)

__all__ = [
    "DimShuffle", "Elemwise", "TensorConstant", "TensorType", "TensorVariable",
    "as_tensor_variable", "constant", "nnet", "subtensor", "tensor",
]  # fmt: skip

from graphc.tensor.contractions import batched_dot, dot, tensordot  # noqa: E402
from graphc.tensor.extra_ops import argsort, cumprod, cumsum, repeat, sort, tile  # noqa: E402

__all__ += [
    "argsort", "batched_dot", "cumprod", "cumsum", "dot", "repeat", "sort", "tensordot", "tile",
]  # fmt: skip

from graphc.tensor import theano_fns  # noqa: E402
from graphc.tensor.theano_fns import *  # noqa: E402,F403

__all__ += theano_fns.__all__

from graphc.tensor import split_grid  # noqa: E402
from graphc.tensor.split_grid import *  # noqa: E402,F403

__all__ += split_grid.__all__


def __getattr__(name: str):
    """Theano's ``T.grad`` / ``T.Rop`` / ``T.Lop`` / ``T.jacobian`` / ``T.hessian``, resolved on
    first use (the gradient module sits above this package)."""
    if name in ("grad", "Rop", "Lop", "jacobian", "hessian", "verify_grad"):
        import graphc.gradient

        return getattr(graphc.gradient, name)
    raise AttributeError(f"module 'graphc.tensor' has no attribute {name!r}")


# The operator methods of TensorVariable (``x + y``, ``x.sum()``...) call this package's
# functions: bound once here, so tensor/variable.py imports nothing that builds on it.
_variable.bind_operator_namespace(sys.modules[__name__])
