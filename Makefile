# One-command set-up and entry points (see README.md).
#
#   make demo   create .venv if missing, install warpmatch with its dev extras, run the demo
#   make test   the same set-up, then run the test suite (what CI runs: .ci/run)
#
# Set-up is idempotent: a stamp file inside .venv records the installation, and is
# redone only when pyproject.toml changes (or after `make clean`).

PYTHON ?= python3
VENV   ?= .venv
PIP_INSTALL_FLAGS ?=
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.warpmatch-installed

.PHONY: demo test setup clean

demo: $(STAMP)
	$(VENV)/bin/warpmatch demo

test: $(STAMP)
	$(PY) -m pytest -q

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	-$(PY) -m pip install --quiet --upgrade pip  # best effort: offline machines keep the bundled pip
	$(PY) -m pip install --quiet $(PIP_INSTALL_FLAGS) -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .hypothesis
