# The two commands a newcomer needs: `make demo` and `make test`. Everything installs from this repo.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export PYTHONDONTWRITEBYTECODE := 1
export PATH := $(CURDIR)/$(VENV)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
# the wheels python models' requirements resolve from, offline (filled by `make install`; git-ignored)
WHEELHOUSE := .wheelhouse
export CDK_TRITON_WHEELHOUSE ?= $(CURDIR)/$(WHEELHOUSE)

.PHONY: install demo test compat lint format bench clean gpu-check docs

install: $(STAMP) node_modules/.installed $(WHEELHOUSE)/.filled

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

## the text example's requirements (build/examples/text/models.yaml) for the container's Python (24.09: 3.10)
## and this machine's (the local variant), with their dependencies, as the build resolves them
$(WHEELHOUSE)/.filled: $(STAMP) build/examples/text/models.yaml
	PYTHONPATH=$(CURDIR) $(PY) -m cdk_triton.builder.export.python fill $(WHEELHOUSE) build/examples/text/models.yaml
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

## docs: the site (guides, concepts, the generated reference; Material for MkDocs + mkdocstrings) into site/;
## any warning fails it: a broken link or anchor, a nav entry without a page, a page outside the nav, a docstring
## griffe cannot read. Material's banner about its end of life is silenced: docs/contributing/docs-stack.md
## records that decision and its date to revisit. tests/unit/test_docs.py runs exactly this recipe.
docs: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

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

## gpu-check: on a CUDA host: build the example, run every GPU-placed model on the GPU (parity, memory),
## write build/out/gpu-readings.json. Its own venv sees the host's CUDA torch (this repo's make installs a
## CPU torch); WHEELS=<dir> installs the other build dependencies offline. GPU_CHECK_ARGS=--config <yaml>.
GPU_VENV ?= .venv-gpu
GPU_PY := $(GPU_VENV)/bin/python
GPU_DEPS := onnx onnxscript onnxruntime "protobuf<7" isal rich pyyaml "tritonclient[grpc]" pytest pytest-timeout syrupy
gpu-check:
	test -x $(GPU_PY) || $(PYTHON) -m venv --system-site-packages $(GPU_VENV)
	$(GPU_PY) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'gpu-check: ' + torch.__version__ + ' sees no CUDA device; install the host CUDA torch for $(PYTHON) (README: GPU check)')"
	$(GPU_PY) -m pip install -q $(if $(WHEELS),--no-index --find-links $(WHEELS)) $(GPU_DEPS)
	PYTHONPATH=$(CURDIR) $(GPU_PY) -m cdk_triton.cli gpu-check $(GPU_CHECK_ARGS)

clean:
	rm -rf site build/out build/examples/text/out cdk.out cdk.out.pipeline cdk.out.promotion .cdk-triton .venv-compat
