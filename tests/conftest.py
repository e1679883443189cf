"""Shared pytest options: ``--fuzz-examples`` (examples per random-graph fuzz test), the
``fuzz`` marker and the hypothesis profile. The bounded fuzz tests run in the default suite;
``make fuzz`` runs only them, with many more examples."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run ("fixed", the default), so the C modules
# they compile are found in the compile cache the next time; GRAPHC_HYPOTHESIS=explore draws
# new ones each run, as hypothesis does by default. Explicit settings override either.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("GRAPHC_HYPOTHESIS", "fixed"))

DEFAULT_FUZZ_EXAMPLES = 100  # per fuzz test; the scan-gradient fuzzer runs a quarter


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-examples",
        type=int,
        default=DEFAULT_FUZZ_EXAMPLES,
        help=f"hypothesis examples per fuzz test (default {DEFAULT_FUZZ_EXAMPLES})",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fuzz: random-graph fuzzing with hypothesis (bounded by --fuzz-examples)"
    )


@pytest.fixture
def fuzz_examples(request) -> int:
    return max(1, int(request.config.getoption("--fuzz-examples")))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With GRAPHC_NO_SKIPS=1 (CI sets it) a skipped test fails: the skips in this suite are
    for a missing compiler, VM build or Graphviz, which CI must have."""
    outcome = yield
    report = outcome.get_result()
    if (
        report.skipped
        and os.environ.get("GRAPHC_NO_SKIPS") == "1"
        and not hasattr(report, "wasxfail")
    ):
        report.outcome = "failed"
        report.longrepr = f"skipped, but GRAPHC_NO_SKIPS=1 forbids skips: {report.longrepr}"
