"""Theano config names graphc accepts but does not use (setting one warns once).

Programs written for Theano set these (``config.warn.round = False``,
``THEANO_FLAGS=device=cpu``); graphc stores the value, warns that it has no effect, and
keeps refusing names Theano never had.
"""

from __future__ import annotations

from typing import Any

# single names, with the value Theano gives them by default
THEANO_NAMES: dict[str, Any] = {
    "device": "cpu",
    "init_gpu_device": "",
    "force_device": False,
    "print_active_device": True,
    "cast_policy": "custom",
    "int_division": "int",
    "deterministic": "default",
    "on_opt_error": "warn",
    "nocleanup": False,
    "on_unused_input": "raise",
    "exception_verbosity": "low",
    "check_input": True,
    "cycle_detection": "regular",
    "check_stack_trace": "off",
    "reoptimize_unpickled_function": False,
    "unpickle_function": True,
    "print_global_stats": False,
    "warn_float64": "ignore",
    "assert_no_cpu_op": "ignore",
    "base_compiledir": "",
    "compiledir_format": "",
    "experimental__local_alloc_elemwise": True,
    "profiling__time_thunks": True,
    "profiling__output_line_width": 512,
    "profiling__min_peak_memory": False,
    "profiling__debugprint": False,
    "DebugMode__check_c": True,
    "DebugMode__check_py": True,
    "DebugMode__check_finite": True,
    "DebugMode__check_strides": 0,
    "DebugMode__patience": 10,
}

# sections whose every name is accepted (GPU back ends, C build options graphc sets
# itself, warnings about old Theano bugs, ...)
THEANO_SECTIONS: frozenset[str] = frozenset(
    {
        "warn", "gpuarray", "dnn", "nvcc", "cuda", "lib", "numpy", "cmodule", "gcc",
        "blas", "scan", "optdb", "metaopt", "magma", "tensor", "compile", "unittests",
        "experimental", "conv", "pycuda", "cublas", "gpuelemwise", "NanGuardMode",
        "elemwise", "ctc", "traceback",
    }
)  # fmt: skip


def is_theano_name(name: str) -> bool:
    """``name`` (``section__key`` form) is one of Theano's that graphc ignores."""
    return name in THEANO_NAMES or name.split("__", 1)[0] in THEANO_SECTIONS and "__" in name


def is_theano_section(prefix: str) -> bool:
    """``prefix`` (``a__b`` form) is, or lies inside, a section of ignored Theano names."""
    return prefix.split("__", 1)[0] in THEANO_SECTIONS or any(
        n.startswith(prefix + "__") for n in THEANO_NAMES
    )
