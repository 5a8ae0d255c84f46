# Two commands do all set-up: `make demo` (install, then run the offline default) and
# `make test` (install, then lint and run the tests). Both create .venv on first use.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch is pinned to the local CPU build everywhere, build environments included
export PIP_CONSTRAINT := $(CURDIR)/constraints.txt

.PHONY: install demo test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/stellar run

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python bench/effectiveness.py
	$(BIN)/python bench/embeddings.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
