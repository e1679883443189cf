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


@pytest.mark.parametrize("vm", ["cvm", "py"])
def test_current_counts_the_second_buffer_of_a_double_buffered_update(vm):
    """A shared update's replaced value is kept for the next call to write into: the
    function holds it, and tracemalloc sees it freed with the function (32 MB; the 1%
    tolerance is the function's own Python objects freed with it)."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        before, _ = allocated()
        w = graphc.shared(np.zeros((2000, 2000)), name="w")
        x = T.dmatrix("x")
        f = graphc.function([x], [], updates=[(w, w * 0.5 + x)], profile=True,
                            mode=graphc.Mode(vm=vm))  # fmt: skip
        xv = np.ones((2000, 2000))
        for _ in range(3):
            f(xv)
        held = allocated()[0] - before
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
        del f
        gc.collect()
        freed = traced - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held == 2000 * 2000 * 8
    assert freed == pytest.approx(held, rel=0.01)
    np.testing.assert_array_equal(w.get_value(), 1.75 * np.ones((2000, 2000)))
