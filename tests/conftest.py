"""Shared pytest options: ``--fuzz-examples`` (examples per random-graph fuzz test) and the
``fuzz`` marker. The bounded fuzz tests run in the default suite; ``make fuzz`` runs only
them, with many more examples."""

from __future__ import annotations

import pytest

DEFAULT_FUZZ_EXAMPLES = 30


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
