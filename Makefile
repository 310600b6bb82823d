# The two commands a newcomer needs: `make demo` and `make test`. Everything installs from this repo.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export PYTHONDONTWRITEBYTECODE := 1
export PATH := $(CURDIR)/$(VENV)/bin:$(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: install demo test compat lint format bench clean

install: $(STAMP) node_modules/.installed

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## demo: build the example models, synthesize and check the app, serve and invoke both endpoints locally
demo: install
	$(PY) -m cdk_triton.cli demo

## test: the whole suite (the same command CI runs)
test: install
	$(PY) -m pytest --durations=15 -p no:cacheprovider $(PYTEST_ARGS)

## compat: the compatibility lane (CI runs it after test): a separate venv (.venv-compat) with the newest
## numpy 2 and transformers 5 beside the pinned CPU torch (shared from .venv, not downloaded); checks that
## installing cdk-triton[build] there replaces none of them, then runs the build-stage tests and the
## example build (.ci/compat says how)
compat: install
	.ci/compat

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

## bench: benchmarks printing side-by-side ratios; results land in bench/results/*.json
bench: install
	$(PY) -m bench

clean:
	rm -rf build/out cdk.out cdk.out.pipeline cdk.out.promotion .cdk-triton .venv-compat
