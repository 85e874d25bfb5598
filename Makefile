# `make run` and `make test` do all set-up from a fresh clone: a local .venv with the project installed.
#   make run  [PORT=8501] [HOST=127.0.0.1] [DB=path/registry.db]   start the app (seeds an empty registry first)
#   make test [PYTEST_ARGS="-k cli"]                                run the test suite
#   make check [PYTEST_ARGS=...]   the quick loop (no Java, browser, serve child, PostgreSQL or cluster, not slow), 2 workers
#   make lint | seed [DB=...] [FORCE=1] | speedups | clean | distclean

PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8501
HOST   ?= 127.0.0.1
DB     ?=
FORCE  ?=
PYTEST_ARGS ?=

BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SPEEDUPS := $(VENV)/.speedups
DB_ARG  := $(if $(DB),--db "$(DB)")

.DEFAULT_GOAL := help
.PHONY: help install speedups run seed test check lint clean distclean

help:
	@echo "make run    start the Streamlit app on http://$(HOST):$(PORT) (PORT=, HOST=, DB= to override)"
	@echo "make test   run the tests (PYTEST_ARGS= to pass pytest options)"
	@echo "make check  the quick loop: no Java, browser, serve child, PostgreSQL or simulated cluster, nor the slow ones (tests/needs.py)"
	@echo "make lint   ruff check, ruff format --check, mypy --strict over the core, the shells and test helpers"
	@echo "make speedups  recompile the Avro core with mypyc (optional; make run/test do it when its sources change)"
	@echo "make seed   load sample_data/ into the registry (DB=, FORCE=1 to seed a non-empty one)"
	@echo "make clean  remove caches and build files; make distclean also removes $(VENV)"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "error: Python 3.11+ is required; '$(PYTHON)' is $$($(PYTHON) --version 2>&1). Use make PYTHON=python3.11"; exit 1; }
	@echo "==> creating $(VENV) with $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV) || \
		{ rm -rf $(VENV); echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu: apt-get install -y python3-venv"; exit 1; }

# Re-installs only when pyproject.toml changes; the editable install puts the checkout's root on sys.path
# (see [tool.setuptools.package-dir]), so new packages need no re-install.
$(STAMP): pyproject.toml | $(BIN)/python
	@echo "==> installing pulsar-schema-explorer[test] into $(VENV) (editable)"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# Optional mypyc build of the Avro core (tools/build_speedups.py): redone when its sources change; without a C
# compiler it prints one warning and everything runs in pure Python. PSE_NO_SPEEDUPS=1 skips it.
$(SPEEDUPS): registry/avro/_nodes.py registry/avro/_parser.py registry/avro/_schema.py registry/avro/_resolution.py tools/build_speedups.py $(STAMP)
	@$(BIN)/python tools/build_speedups.py || echo "warning: tools/build_speedups.py failed; the Avro core runs in pure Python"
	@touch $@

install: $(STAMP) $(SPEEDUPS)

speedups: $(STAMP)
	$(BIN)/python tools/build_speedups.py --force
	@touch $(SPEEDUPS)

run: $(STAMP) $(SPEEDUPS)
	$(BIN)/schema-explorer ui $(DB_ARG) --port $(PORT) --host $(HOST)

seed: $(STAMP) $(SPEEDUPS)
	$(BIN)/schema-explorer seed $(DB_ARG) $(if $(FORCE),--force)

# pytest exits 5 when it collects no tests; that is not a failure for this target. Bytecode is written even
# where PYTHONDONTWRITEBYTECODE is set: pytest caches its assertion rewriting there (about 10 s per run).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

test: $(STAMP) $(SPEEDUPS)
	@java -version >/dev/null 2>&1 || { echo "error: no Java runtime (PySpark needs Java 17+ for tests/spark); install one: sudo apt-get install -y openjdk-17-jre-headless, or set JAVA_HOME"; exit 1; }
	@$(PYTEST) $(PYTEST_ARGS); rc=$$?; \
		if [ $$rc -eq 5 ]; then echo "==> no tests collected"; exit 0; fi; exit $$rc

# Markers (tests/needs.py): java, browser, server (a `serve` child), postgres, cluster (TLS brokers), slow; `make check` leaves them to
# `make test`. Two workers (pytest-xdist), one per core; a module stays on one worker (loadfile), so its module
# fixtures are built once. Test files live in memory (/dev/shm, where there is one): every registry write
# fsyncs, which a disk makes the slowest part of the loop. A test that hangs fails after 120 s.
CHECK_TMP := $(if $(wildcard /dev/shm),/dev/shm/pse-check-$(shell id -u),$(shell mktemp -d -u))
check: $(STAMP) $(SPEEDUPS)
	@mkdir -p $(CHECK_TMP)
	@TMPDIR=$(CHECK_TMP) $(PYTEST) -q -n 2 --dist loadfile --timeout 120 --basetemp=$(CHECK_TMP)/pytest \
		-m "not java and not browser and not slow and not server and not postgres and not cluster" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
