"""The benchmarks' roofline share: the least time a loop's bytes and flops allow on this
machine over its measured time, and which limit gives that least time."""

from __future__ import annotations

import pytest

from benchmarks.roofline import BANDWIDTH, PEAK, Loop, share


def test_a_loop_of_few_flops_per_byte_is_bound_by_the_bandwidth():
    # 32 MB and 4e6 flops: 4 ms at 8 GB/s, 0.05 ms at 80 GFLOP/s
    loop = Loop(nbytes=32e6, flops=4e6)
    bound, s = share(8e-3, loop, peak_gflops=80.0, bandwidth_gbs=8.0)
    assert bound == BANDWIDTH
    assert s == pytest.approx(0.5)  # 4 ms of the 8 measured


def test_a_loop_of_many_flops_per_byte_is_bound_by_the_peak():
    # 32 MB and 1.01e8 flops: 4 ms at 8 GB/s, 1.2625 ms at 80 GFLOP/s
    loop = Loop(nbytes=32e6, flops=101e6)
    assert loop.intensity == pytest.approx(3.15625)
    bound, s = share(2.525e-3, loop, peak_gflops=40.0, bandwidth_gbs=32.0)
    # at 40 GFLOP/s the flops take 2.525 ms, the bytes 1 ms
    assert bound == PEAK
    assert s == pytest.approx(1.0)


def test_the_binding_limit_is_the_lower_roof():
    loop = Loop(nbytes=1e6, flops=1e6)  # intensity 1: the ridge at peak / bandwidth
    assert share(1.0, loop, peak_gflops=10.0, bandwidth_gbs=9.0)[0] == BANDWIDTH
    assert share(1.0, loop, peak_gflops=9.0, bandwidth_gbs=10.0)[0] == PEAK
    # achieved over attainable = min(peak, intensity x bandwidth): 1 GFLOP/s over 9
    assert share(1e-3, loop, peak_gflops=10.0, bandwidth_gbs=9.0)[1] == pytest.approx(1 / 9)


def test_a_loop_without_flops_is_bound_by_the_bandwidth():
    assert share(1e-3, Loop(nbytes=2e6, flops=0.0), 50.0, 4.0) == (BANDWIDTH, pytest.approx(0.5))
