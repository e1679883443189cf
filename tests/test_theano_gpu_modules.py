"""The GPU modules look as they do on a Theano without a GPU: availability flags say no,
and every GPU name raises an ImportError (what libraries catch to skip GPU code) that is
also a NotImplementedError."""

from __future__ import annotations

import importlib

import pytest

import graphc as theano
from graphc.gpuarray import GPUUnavailableError


def test_cpu_theano_flags_say_no_gpu():
    from graphc.sandbox.cuda import dnn  # importable on a CPU Theano

    assert theano.sandbox.cuda.cuda_available is False
    assert theano.sandbox.cuda.cuda_enabled is False
    assert dnn.dnn_available() is False and dnn.dnn_available.msg == "CUDA not available"
    assert theano.gpuarray.pygpu_activated is False
    assert importlib.import_module("graphc.sandbox.cuda.dnn") is dnn


@pytest.mark.parametrize(
    "module, name",
    [
        ("graphc.gpuarray", "GpuArrayType"),
        ("graphc.sandbox.cuda", "CudaNdarray"),
        ("graphc.sandbox.cuda", "gpu_contiguous"),
        ("graphc.sandbox.cuda.dnn", "dnn_conv"),
    ],
)
def test_gpu_names_raise_import_error_naming_them(module, name):
    mod = importlib.import_module(module)
    with pytest.raises(ImportError, match=f"{module}.{name}: graphc has no GPU back end"):
        getattr(mod, name)
    with pytest.raises(NotImplementedError, match=name):
        getattr(mod, name)
    with pytest.raises(ImportError) as info:  # the form libraries use
        exec(f"from {module} import {name}", {})
    assert isinstance(info.value, GPUUnavailableError) and info.value.name == f"{module}.{name}"


def test_library_gpu_guard_skips_on_graphc():
    # the guard of a GPU-only layer module: it must end in ImportError, not another error
    def load_gpu_layer():
        from graphc.sandbox.cuda import dnn

        if not theano.config.device.startswith("gpu") or not dnn.dnn_available():
            raise ImportError("dnn not available")

    with pytest.raises(ImportError, match="dnn not available"):
        load_gpu_layer()
    for attempt in ("theano.sandbox.gpuarray", "theano.sandbox.cuda.use('gpu0')"):
        with pytest.raises(ImportError, match="graphc has no GPU back end"):
            eval(attempt, {"theano": theano})
    with pytest.raises(AttributeError):
        theano.sandbox.cuda.__wrapped__  # noqa: B018  (dunder lookups stay AttributeError)
