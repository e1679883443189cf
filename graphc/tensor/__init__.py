"""Symbolic tensors: types, constructors and the tensor Op library."""

import sys

from graphc.tensor import (
    nnet,  # noqa: E402,I001  (graphc.tensor.nnet, as in Theano)
    subtensor,
)
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

__all__ = [
    "DimShuffle", "Elemwise", "TensorConstant", "TensorType", "TensorVariable",
    "as_tensor_variable", "constant", "nnet", "subtensor", "tensor",
]  # fmt: skip

# The operator methods of TensorVariable (``x + y``, ``x.sum()``...) call this package's
# functions: bound once here, so tensor/variable.py imports nothing that builds on it.
_variable.bind_operator_namespace(sys.modules[__name__])
