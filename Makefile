# graphc: set up a virtual environment, then run the example, the tests or the benchmarks.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.graphc-installed

.PHONY: example test lint format bench bench-quick fuzz clean

$(READY): pyproject.toml setup.py graphc/vm/_cvm.pyx graphc/vm/_loop.pyx
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

EXAMPLE_HTML ?= build/example-profile.html

example: $(READY)  ## the main job: logistic regression under PROFILE_MODE, with its profile
	mkdir -p $(dir $(EXAMPLE_HTML))
	GRAPHC_FLAGS="$${GRAPHC_FLAGS:+$$GRAPHC_FLAGS,}profile_html=$(EXAMPLE_HTML)" \
		$(BIN)/python examples/logistic_regression.py

test: $(READY)  ## the test suite
	$(BIN)/python -m pytest

lint: $(READY)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(READY)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(READY)
	$(BIN)/python -m benchmarks

bench-quick: $(READY)
	$(BIN)/python -m benchmarks --quick

fuzz: $(READY)  ## the long random-graph run
	$(BIN)/python -m pytest tests -m fuzz --fuzz-examples=2000

clean:
	rm -rf $(VENV) build *.egg-info graphc/vm/_cvm.c graphc/vm/_cvm*.so graphc/vm/_loop.c graphc/vm/_loop*.so
