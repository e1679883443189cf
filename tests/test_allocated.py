"""graphc.profile.allocated(): bytes held by profiled functions, checked by hand."""

import gc

import numpy as np
import pytest

import graphc
import graphc.tensor as T
from graphc.profile import allocated


def _called_once(vm: str, **flags) -> tuple:
    """(f, bytes allocated before f existed): a profiled ``(x + 1) * 2`` on the Python
    linker and ``vm``, compiled with ``flags`` and called once on 1000 float64."""
    gc.collect()
    before, _ = allocated()
    x = T.dvector("x")
    mode = graphc.Mode(linker="py", optimizer=None, vm=vm)
    with graphc.config.change_flags(**flags):
        f = graphc.function([x], (x + 1) * 2, mode=mode, profile=True)
    f(np.ones(1000))
    return f, before


@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_current_counts_intermediates_kept_without_gc(vm):
    f, before = _called_once(vm, allow_gc=False)
    # x + 1 (8000 bytes) stays in its slot for reuse; the output is handed to the caller
    assert allocated()[0] - before == 8000
    del f
    gc.collect()
    assert allocated()[0] == before


@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_peak_with_the_memory_profile(vm):
    f, before = _called_once(vm, profile_memory=True)
    current, peak = allocated()
    assert current == before  # gc on: nothing held between calls
    # during the call x + 1 and the output (8000 bytes each) were alive together
    assert peak - current >= 16000
    del f
