"""Theano 0.8.2's public names graphc does not implement, per served module.

Measured: tests/data/theano_api.json lists every public name of real Theano's modules
(scripts/theano_reference/api.py); these are the ones graphc serves nothing for. A
callable one is served as a stub that raises ``NotImplementedError`` naming it when called
(so ``hasattr`` and ``isinstance`` checks work); reading a value or module one raises
``TheanoNameMissing``, a ``NotImplementedError`` that is also an ``AttributeError``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MISSING", "TheanoNameMissing", "missing"]


class TheanoNameMissing(NotImplementedError, AttributeError):
    """A Theano 0.8.2 name graphc does not implement."""


def _names(calls: str, values: str) -> dict[str, str]:
    return {**dict.fromkeys(calls.split(), "call"), **dict.fromkeys(values.split(), "value")}


MISSING: dict[str, dict[str, str]] = {
    "theano": _names(
        calls="""
        CLinker Container DualLinker Generic Linker LocalLinker OpFromGraph OpWiseCLinker
        OpenMPOp Param PerformLinker SymbolicInput SymbolicOutput as_op function_dump generic
        object2 sparse_grad subgraph_grad test""",
        values="""
        configdefaults configparser generated_version misc predefined_linkers predefined_modes
        predefined_optimizers tests toolbox updates utils version""",
    ),
    "theano.gradient": _names(
        calls="""
        ConsiderConstant DisconnectedGrad DisconnectedType ZeroGrad consider_constant
        consider_constant_ disconnected_grad disconnected_grad_ disconnected_type format_as
        get_debug_values null_type numeric_grad subgraph_grad zero_grad zero_grad_""",
        values="""
        gof grad_time tensor theano""",
    ),
    "theano.tensor": _names(
        calls="""
        AdvancedIndexingError AllocEmpty AsTensorError Choose Default Diag Diagonal DiffOp
        DisconnectedType EmptyConstantError Flatten Generic LoadFromDisk MPIRecv MPIRecvWait
        MPISend MPISendWait MakeSlice MaxAndArgmax Mean NoneTypeT Nonzero NumpyAutocaster
        PermuteRowElements ScalarFromTensor ShapeError SliceConstant SliceType Split
        SubtensorPrinter Sum Tensor TensorConstantSignature TensorFromScalar Tile Tri
        adv_index_broadcastable_pattern advanced_inc_subtensor advanced_inc_subtensor1
        advanced_set_subtensor advanced_set_subtensor1 advanced_subtensor advanced_subtensor1
        angle as_index_variable as_int_none_variable autocast_float autocast_float_as
        autocast_int bartlett batched_tensordot bitwise_not ccol ceil_intdiv check_equal_numpy
        chi2sf choose cmatrix complex complex_from_polar conj consider_constant
        constant_or_value constructor crow cscalar ctensor3 ctensor4 cvector default div_proxy
        erfc erfcinv erfcx erfinv extract_constant fill_diagonal_offset gamma gammaln
        get_canonical_form_slice get_idx_list hashtype imag irecv iround is_flat isend j0 j1
        key_to_cmp load makeKeepDims make_constant make_slice min_informative_str mod_check
        mpi_send_wait_cmp mpi_send_wait_key mpi_tag_cmp mpi_tag_key none_type_t numeric_grad
        numpy_scalar permute_row_elements psi real recv register_transfer
        round_half_away_from_zero round_half_to_even scalar_from_tensor send setdefault
        slicetype tensor_copy tensor_from_scalar transfer values_eq_approx_always_true zcol
        zmatrix zrow zscalar ztensor3 ztensor4 zvector""",
        values="""
        NoneConst all_dtypes blas_c blas_headers blas_scipy compile complex_dtypes
        complex_matrix_types complex_scalar_types complex_types complex_vector_types
        constant_cache continuous_dtypes discrete_dtypes elemwise_cgen float16_atol
        float16_rtol float32_atol float32_rtol float64_atol float64_rtol float_dtypes
        float_matrix_types float_scalar_types float_types float_vector_types
        get_scalar_constant_value_elemwises gof int_dtypes int_matrix_types int_scalar_types
        int_types int_vector_types integer_types io mpi_cmps mpi_enabled mpi_keys
        numpy_diagonal_return_view opt opt_uncanonicalize printing raw_random scal
        sparse_module_ref theano type_other uint_dtypes utils""",
    ),
    "theano.tensor.nnet": _names(
        calls="""
        Conv3D ConvGrad3D ConvOp ConvTransp3D CrossentropySoftmax1HotWithBiasDx
        CrossentropySoftmaxArgmax1HotWithBias DisconnectedType
        Prepend_scalar_constant_to_each_row Prepend_scalar_to_each_row SoftmaxGrad
        SoftmaxWithBias abstract_conv2d batch_normalization blas_header_text
        blas_header_version computeH computeR conv3D convGrad3D convTransp3D
        crossentropy_categorical_1hot_grad crossentropy_softmax_1hot_with_bias_dx
        crossentropy_softmax_argmax_1hot_with_bias crossentropy_softmax_max_and_argmax_1hot
        crossentropy_softmax_max_and_argmax_1hot_with_bias
        crossentropy_to_crossentropy_with_softmax
        crossentropy_to_crossentropy_with_softmax_with_bias grad_undefined h_softmax ldflags
        logsoftmax_op prepend_0_to_each_row prepend_1_to_each_row prepend_scalar_to_each_row
        scalar_sigmoid sigmoid_inplace softmax_grad softmax_graph softmax_op softmax_simplifier
        softmax_with_bias ultra_fast_sigmoid""",
        values="""
        T blocksparse bn corr graph_merge_softmax_with_crossentropy_softmax opt strutil theano""",
    ),
}


def _message(module: str, name: str) -> str:
    return f"{module}.{name} (Theano 0.8.2) is not implemented in graphc"


def missing(module: str, name: str) -> Any:
    """The stand-in for ``module.name`` if graphc lacks that Theano name, else raise
    AttributeError."""
    kind = MISSING.get(module, {}).get(name)
    if kind is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    message = _message(module, name)
    if kind == "value":
        raise TheanoNameMissing(message)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(message)

    return type(name, (), {"__init__": __init__, "__doc__": message, "__module__": module})
