# Two entry points for a fresh machine (see README):
#   make lab   -> install into .venv and open the course (JupyterLab on notebooks/; the main job)
#   make test  -> install into .venv (with test extras) and run every test
# Others: make demo (command-line comparison table), make app (the dashboard as a Voila app),
#         make notebooks (re-execute the course notebooks), make bench (benchmarks),
#         make site (the course as a static website in build/site).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# JupyterLab refuses to start as root ("Running as root is not recommended. Use
# --allow-root to bypass.") and root is the only user in many containers and fresh cloud
# machines: `make lab` adds --allow-root when `id -u` is 0, so the course starts whoever
# runs it.
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: lab app notebooks demo test install install-lab install-test install-bench chromium lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

install: $(PY)
	$(PY) -m pip install -e .

# JupyterLab, Voila and what the notebooks import (the `lab` extra): the course
install-lab: $(PY)
	$(PY) -m pip install -e ".[lab]"

install-test: $(PY)
	$(PY) -m pip install -e ".[test]"

# The browser tests (tests/browser/) drive the system Chromium with Playwright. When
# /usr/bin/chromium is missing, install it with apt-get if we can (root); otherwise those tests
# are skipped with the reason shown (and fail when CI is set). Never `playwright install`.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Chromium with apt-get for the browser tests"; \
	    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } \
	      || echo "WARNING: could not install chromium; the browser tests will be skipped"; \
	  else \
	    echo "NOTE: no /usr/bin/chromium and no root+apt-get to install it;" \
	      "the browser tests will look for one on PATH or be skipped"; \
	  fi; \
	fi

lab: install-lab
	$(PY) -m jupyter lab $(ALLOW_ROOT) notebooks/00-visual-explainer.ipynb

app: install-lab
	$(PY) -m voila notebooks/app.ipynb

notebooks: install-test
	$(PY) scripts/execute_notebooks.py

demo: install
	$(PY) -m rgrasp_viz demo

test: install-test chromium npm
	$(PY) -m ruff check rgrasp_viz tests benchmarks scripts
	$(PY) -m pytest

# the benchmarks' peers (scikit-learn, abess, skscope) and benchopt: the bench extra
install-bench: $(PY)
	$(PY) -m pip install -e ".[bench]"

bench: install-bench
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

# The course as a static website in build/site (scripts/build_site.py): Sphinx + MyST-NB from
# PyPI (the site extra), MathJax from the npm registry (npm installed with apt-get when missing
# and we are root), plotly.js from the installed plotly package. Open it with
#   python -m http.server -d build/site   ->  http://localhost:8000
.PHONY: site npm
site: $(PY) npm
	$(PY) -m pip install -e ".[site]"
	$(PY) scripts/build_site.py

npm:
	@if ! command -v npm >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing npm with apt-get (the site bundles MathJax from the npm registry)"; \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y npm; \
	  else \
	    echo "NOTE: npm not found and no root+apt-get to install it; the site build needs it" \
	      "once to fetch MathJax (install Node.js and npm)"; \
	  fi; \
	fi

clean:
	rm -rf $(VENV) build *.egg-info
