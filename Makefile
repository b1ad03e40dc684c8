# `make run` and `make test` work on a fresh machine: they create .venv, install everything
# (compiling llama-cpp-python on first install; pip's wheel cache reuses it afterwards),
# assemble the bundled models, then run the app or the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
VENV_READY := $(VENV)/.created
PACKAGING := $(VENV)/.packaging
PEERS := tests/peers/node
PYTHON_PEERS := tests/peers/python

# llama.cpp for every processor, never -march=native: its CPU code is built once per x86 level
# (SSE4.2 … AVX2 … AVX-512, AMX) as separate libraries and ggml loads the best one the processor
# runs (app/llm/native.py). Without the multimodal library, which Docent does not use, the build
# takes about 6 minutes on 2 cores. CMAKE_ARGS adds a GPU backend (see README). The wheel is kept
# in a cache of its own, keyed by these flags: pip's wheel cache ignores CMAKE_ARGS, and would
# hand back a wheel built with other flags.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON \
  -DLLAVA_BUILD=OFF -DLLAMA_BUILD_MTMD=OFF -DCMAKE_INSTALL_BINDIR=llama_cpp/lib $(CMAKE_ARGS)
LLAMA_BUILD_ID := $(shell printf '%s' '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)' | \
  $(PYTHON) -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')
LLAMA_WHEELS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/docent-build/llama-cpp-python-$(LLAMA_BUILD_ID)

.PHONY: setup peers run test lint bench conformance screenshots translations package package-test clean

$(VENV_READY):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	touch $@

$(LLAMA_WHEELS)/.built: | $(VENV_READY)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel --no-deps --no-cache-dir \
	  --wheel-dir $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	touch $@

$(INSTALLED): pyproject.toml $(VENV_READY) $(LLAMA_WHEELS)/.built
	$(BIN)/python -m pip install --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python \
	  -e '.[dev]'
	touch $(INSTALLED)

# MCP peers nobody here wrote (server-everything, the conformance suite, @houtini/lm, a Node 22).
$(PEERS)/node_modules/.installed: $(PEERS)/package.json $(PEERS)/package-lock.json
	cd $(PEERS) && npm ci --no-audit --no-fund
	touch $@

# Python MCP servers nobody here wrote, in their own venv (their dependencies are not Docent's).
$(PYTHON_PEERS)/.venv/.installed: $(PYTHON_PEERS)/requirements.txt
	$(PYTHON) -m venv $(PYTHON_PEERS)/.venv
	$(PYTHON_PEERS)/.venv/bin/python -m pip install --quiet -r $(PYTHON_PEERS)/requirements.txt
	touch $@

setup: $(INSTALLED)

peers: $(PEERS)/node_modules/.installed $(PYTHON_PEERS)/.venv/.installed

run: setup
	$(BIN)/docent models --setup
	$(BIN)/docent

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint peers
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: setup
	$(BIN)/docent bench ingest && $(BIN)/docent bench retrieval

# The official MCP conformance suite's client scenarios against Docent's client: a table.
conformance: setup peers
	$(BIN)/python -m tests.conformance.run

# The real app under Xvfb (apt install xvfb) on the bundled samples: a first run in a fresh
# folder, with the models the tests share.
screenshots: setup
	DOCENT_MODELS_DIR=$(CURDIR)/.cache/models $(BIN)/docent models --setup
	home=$$(mktemp -d) && DOCENT_HOME=$$home DOCENT_MODELS_DIR=$(CURDIR)/.cache/models \
	  xvfb-run -a -s "-screen 0 1280x800x24" $(BIN)/python -m ui.tools.screenshots docs/screenshots; \
	  status=$$?; rm -rf $$home; exit $$status

# The one-folder app (dist/docent) and its .deb (dist/docent_VERSION_ARCH.deb), with the .desktop
# file and icons; macOS and Windows recipes in packaging/README.md.
$(PACKAGING): $(INSTALLED)
	$(BIN)/python -m pip install -e '.[packaging]'
	touch $@

# The Chinese interface: every tr() string of ui/ into the catalogue translated by hand
# (strings gone from the code leave it), then compiled into the .qm the app loads (ui/i18n.py).
# Both are committed; tests/gui/test_translations.py fails on a string left untranslated.
I18N := resources/i18n/docent_zh_CN
translations: setup
	$(BIN)/pyside6-lupdate -no-obsolete -locations none $$(find ui -name '*.py' | sort) \
	  -ts $(I18N).ts
	$(BIN)/pyside6-lrelease $(I18N).ts -qm $(I18N).qm

package: $(PACKAGING)
	$(BIN)/pyinstaller --noconfirm --distpath dist --workpath build/pyinstaller packaging/docent.spec
	$(BIN)/python packaging/linux_deb.py

# The .deb and the folder started as a user starts them, under Xvfb (apt install xvfb): a first
# and a warm `docent --smoke-test`, timed.
package-test: package
	$(BIN)/python -m tests.bundle.run

clean:
	rm -rf $(VENV) build dist .cache .mypy_cache .ruff_cache .pytest_cache $(PEERS)/node_modules
