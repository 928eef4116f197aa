# Two set-up commands work on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-real lint bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,spark,dev]'
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

# The demo cluster has problems on purpose: report them without failing the make run.
demo: $(STAMP)
	$(BIN)/rmqlb demo --fail-on never

lint: $(STAMP)
	$(BIN)/ruff check rmqlb tests bench
	$(BIN)/ruff format --check rmqlb tests bench
	$(BIN)/mypy

test: lint
	SPARK_LOCAL_IP=127.0.0.1 $(BIN)/python -m pytest -m 'not real'

# Real Apache RocketMQ 4.9.8 (../shared/rocketmq; run its setup.sh once). It creates topics and
# groups: only ever against the disposable cluster the suite starts itself.
test-real: $(STAMP)
	$(BIN)/python -m pytest tests/real -m real

bench: $(STAMP)
	SPARK_LOCAL_IP=127.0.0.1 $(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
