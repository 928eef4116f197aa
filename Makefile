# Two set-up commands work on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HASH   := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# the package alone (what `make demo` needs), and the package with the test, Spark and dev
# extras (what `make test` needs); both stamps change with pyproject.toml
PKG_STAMP := $(VENV)/.installed-pkg-$(HASH)
STAMP     := $(VENV)/.installed-dev-$(HASH)

.PHONY: demo test test-real lint bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(PKG_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	@rm -f $(VENV)/.installed-pkg-* && touch $(PKG_STAMP)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,spark,dev]'
	@rm -f $(VENV)/.installed-* && touch $(PKG_STAMP) $(STAMP)

install: $(STAMP)

# The demo cluster has problems on purpose: report them without failing the make run.
# It needs the package only: no test, Spark or dev extras.
demo: $(PKG_STAMP)
	$(BIN)/rmqlb demo --fail-on never

lint: $(STAMP)
	$(BIN)/ruff check rmqlb tests bench
	$(BIN)/ruff format --check rmqlb tests bench
	$(BIN)/mypy

# Two pytest workers (about 1 min 45 s on 2 cores instead of 3 min); TEST_WORKERS=0 runs the
# suite in one process.
TEST_WORKERS ?= 2
test: lint
	SPARK_LOCAL_IP=127.0.0.1 $(BIN)/python -m pytest -m 'not real' -n $(TEST_WORKERS)

# Real Apache RocketMQ 4.9.8, 5.0.0 and 5.1.4 (../shared/rocketmq; run its setup.sh once per
# version; RMQLB_REAL_VERSIONS=5.0.0 runs one). It creates topics and groups: only ever against
# the disposable clusters the suite starts itself. The versions run side by side, one pytest
# worker each (their clusters wait on the network and timers far more than they compute).
REAL_WORKERS ?= 3
test-real: $(STAMP)
	$(BIN)/python -m pytest tests/real -m real -n $(REAL_WORKERS) --dist loadgroup

bench: $(STAMP)
	SPARK_LOCAL_IP=127.0.0.1 $(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
