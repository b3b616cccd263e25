# Two entry points for a fresh machine (see README):
#   make demo  -> install into .venv and run the command-line demo (the main job)
#   make test  -> install into .venv (with test extras) and run every test
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test install install-test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

install: $(PY)
	$(PY) -m pip install -e .

install-test: $(PY)
	$(PY) -m pip install -e ".[test]"

demo: install
	$(PY) -m rgrasp_viz demo

test: install-test
	$(PY) -m ruff check rgrasp_viz tests benchmarks
	$(PY) -m pytest

bench: $(PY)
	$(PY) -m pip install -e ".[bench]"
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
