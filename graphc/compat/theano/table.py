"""Which graphc module or object serves each Theano module.

A value is either a graphc module name (``theano.X`` *is* that module) or a ``Shim`` (a
Theano package assembled from graphc modules and extra names). A Theano module not listed
here is found under its parent's graphc module by the same name (``theano.tensor.blas`` is
``graphc.tensor.blas``); a module neither listed nor found there does not exist.
"""

from __future__ import annotations

from graphc.compat.theano.shim import Shim

GRAPH = "graphc.graph.basic"
SIG = "graphc.compat.theano.signatures"


def theano_order(*names: str) -> dict[str, str]:
    """Serve ``names`` from ``signatures`` (Theano's parameter order)."""
    return {name: f"{SIG}:{name}" for name in names}


TENSOR_ORDER = theano_order("constant", "flatten", "grad", "mean", "prod", "sum", "verify_grad")
SUBTENSOR_OPS = (
    "AdvancedIncSubtensor", "AdvancedIncSubtensor1", "AdvancedSubtensor", "AdvancedSubtensor1",
    "IncSubtensor", "Subtensor",
)  # fmt: skip
TENSOR_EXTRA = {
    **{name: f"graphc.tensor.subtensor:{name}" for name in SUBTENSOR_OPS},
    **{name: f"{GRAPH}:{name}" for name in ("Constant", "Type", "Variable")},
    "MethodNotDefined": "graphc.graph.utils:MethodNotDefined",
    "config": "graphc:config",
    "grad_not_implemented": "graphc.grad_ops:grad_not_implemented",
    "grad_undefined": "graphc.grad_ops:grad_undefined",
    "pprint": "graphc.printing:pprint",
    **TENSOR_ORDER,
}

MODULES: dict[str, str | Shim] = {
    "theano": Shim(
        ("graphc",),
        extra={
            "Variable": f"{GRAPH}:Variable",
            "Apply": f"{GRAPH}:Apply",
            "Constant": f"{GRAPH}:Constant",
            "Op": f"{GRAPH}:Op",
            "Type": f"{GRAPH}:Type",
            "FunctionGraph": "graphc.graph.fg:FunctionGraph",
            "InconsistencyError": "graphc.graph.fg:InconsistencyError",
            "FunctionMaker": "graphc.compile:FunctionMaker",
            "OrderedUpdates": "collections:OrderedDict",
            "clone": f"{GRAPH}:clone_replace",
            "get_scalar_constant_value": "graphc.tensor:get_scalar_constant_value",
            "pprint": "graphc.printing:pprint",
            **theano_order("In", "ProfileMode", "grad"),
        },
        preload=(
            "theano.gof",
            "theano.compile",
            "theano.tensor",
            "theano.tensor.shared_randomstreams",
            "theano.gradient",
            "theano.printing",
            "theano.scan_module",
        ),
    ),
    "theano.gof": Shim(
        ("graphc.graph",),
        extra={"inputs": f"{GRAPH}:graph_inputs"},
        preload=("theano.gof.graph", "theano.gof.utils"),
    ),
    "theano.gof.graph": Shim(
        (GRAPH,),
        extra={
            "inputs": f"{GRAPH}:graph_inputs",
            "is_same_graph": "graphc.graph.compare:is_same_graph",
            "equal_computations": "graphc.graph.compare:equal_computations",
        },
    ),
    "theano.gof.utils": "graphc.graph.utils",
    "theano.gof.fg": "graphc.graph.fg",
    "theano.compile": Shim(
        ("graphc.compile", "graphc.compile.ops"),
        preload=("theano.compile.sharedvalue", "theano.compile.ops"),
    ),
    "theano.scan_module": Shim(("graphc.scan_module",), preload=("theano.scan_module.scan_utils",)),
    "theano.scan_module.scan_utils": Shim(
        ("graphc.graph.compare",),
        extra={"clone": f"{GRAPH}:clone_replace"},
    ),
    "theano.tensor": Shim(
        ("graphc.tensor",),
        extra={
            "TensorSharedVariable": "graphc.compile.sharedvalue:SharedVariable",
            **TENSOR_EXTRA,
        },
        preload=(
            "theano.tensor.basic",
            "theano.tensor.nnet",
            "theano.tensor.sharedvar",
            "theano.tensor.shared_randomstreams",
            "theano.tensor.extra_ops",
            "theano.tensor.xlogx",
            "theano.tensor.nlinalg",
        ),
    ),
    "theano.tensor.basic": Shim(("graphc.tensor",), extra=TENSOR_EXTRA),
    "theano.gradient": Shim(
        ("graphc.gradient",),
        extra={
            "Variable": f"{GRAPH}:Variable",
            "ViewOp": "graphc.compile.ops:ViewOp",
            **theano_order("grad", "verify_grad"),
        },
    ),
    "theano.tensor.var": "graphc.tensor.variable",
    "theano.tensor.sharedvar": Shim(
        ("graphc.compile.sharedvalue",),
        extra={"TensorSharedVariable": "graphc.compile.sharedvalue:SharedVariable"},
    ),
    "theano.tensor.nnet": Shim(
        ("graphc.tensor.nnet",),
        preload=("theano.tensor.nnet.nnet", "theano.tensor.nnet.conv", "theano.tensor.nnet.sigm"),
    ),
    "theano.tensor.nnet.nnet": "graphc.tensor.nnet",
    "theano.tensor.nnet.sigm": "graphc.tensor.nnet",
    "theano.tensor.nnet.conv": "graphc.tensor.conv",
    "theano.tensor.nnet.abstract_conv": "graphc.tensor.conv",
}
