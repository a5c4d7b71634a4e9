# knoc: every target sets up .venv first, so each works on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: build check lint test bench compare snapshot-update reference docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs]'
	touch $(STAMP)

build: $(STAMP)  ## compile the example content repo into build/
	$(BIN)/knoc build

check: $(STAMP)  ## the drift guard: is the committed build/ what the sources compile to?
	$(BIN)/knoc check

lint: $(STAMP)  ## the linter and the type checker
	$(BIN)/ruff check knoc tests bench
	$(BIN)/mypy

test: lint  ## the linter, the type checker and the whole test suite (what CI runs)
	$(BIN)/pytest -q

bench: $(STAMP)  ## knoc, the floor and check-jsonschema at 1,000, 10,000 and 100,000 agents (about an hour)
	$(BIN)/python bench/run.py

compare: $(STAMP)  ## this checkout against BASE (a commit): cold build, checks and builds at 10,000 and 100,000 agents
	$(BIN)/python bench/compare.py $(BASE)

reference: $(STAMP)  ## regenerate the reference pages under docs/reference/ from the code
	$(BIN)/python -m knoc.cli.reference

docs: $(STAMP)  ## build the documentation site into site/ (mkdocs, --strict)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

snapshot-update: $(STAMP)  ## rewrite snapshots after an intended output change; review the diff
	$(BIN)/pytest -q tests/test_snapshots.py --snapshot-update

clean:
	rm -rf $(VENV) .pytest_cache site
