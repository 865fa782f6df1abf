# Two commands do all set-up on a fresh machine:
#   make book   build the book (executing every notebook) into _build/html
#   make test   build the book, then run every test (unit, property, notebooks, figure check, browser)
VENV ?= .venv
PYTHON ?= python3
STAMP := $(VENV)/.installed-stamp
BIN := $(VENV)/bin

.PHONY: book test bench lint figures clean system-deps

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

book: $(STAMP)
	rm -rf _build/html
	$(BIN)/jupyter-book build -W -n --keep-going .

# Debian packages the tests need (headless Chromium for the browser check).
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install chromium" >&2; exit 1; fi; }

test: book system-deps
	$(BIN)/ruff check src tests benchmarks notebooks
	$(BIN)/pytest -p no:cacheprovider --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg tests notebooks

figures: $(STAMP)
	$(BIN)/coexist figures --check

bench: $(STAMP)
	$(BIN)/python benchmarks/nash_map.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks

clean:
	rm -rf _build build .pytest_cache
