# Two commands do all set-up on a fresh machine:
#   make book   build the book (executing every notebook) into _build/html
#   make test   the fast tier (make check: lint, unit, property, derivation notebooks), then
#               the book from the bundled data only and the tests that need it or the testbed
#               (figure and claims check against the book's tables, browser, experiments)
VENV ?= .venv
PYTHON ?= python3
STAMP := $(VENV)/.installed-stamp
BIN := $(VENV)/bin

.PHONY: book check test bench lint figures clean system-deps store verify-store pdf fuzz-figures

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

# Jupyter Book 1.x through its Sphinx entry point, one page per CPU at a time, warnings as
# errors; each figure's table and SVG also land in _build/figures. BOOK_FLAGS=--bundled-only
# leaves fetched external data out (the test target does, to compare the tables). A rebuild
# executes only the pages whose inputs changed; --fresh (CI's full tier) executes them all.
BOOK_FLAGS ?=
book: $(STAMP)
	$(BIN)/coexist book $(BOOK_FLAGS)

# Debian packages the tests need: headless Chromium for the browser check; iperf3, ping,
# ethtool, iproute2 and a C compiler for the experiment harness; Node, and clang, lld,
# wasi-libc and the wasm32 compiler runtime for the page's engine (its comparison with the
# native kernel, and the check that kernel.wasm is its sources built). Each is a command,
# or a file, with the package that brings it; installed when missing.
SYSTEM_TOOLS := chromium:chromium iperf3:iperf3 ping:iputils-ping ethtool:ethtool \
	tc:iproute2 cc:gcc nsenter:util-linux node:nodejs clang:clang wasm-ld:lld \
	/usr/lib/wasm32-wasi/libc.a:wasi-libc \
	/usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a:libclang-rt-14-dev-wasm32
system-deps:
	@missing=""; for pair in $(SYSTEM_TOOLS); do \
	  command -v $${pair%%:*} >/dev/null 2>&1 || [ -e "$${pair%%:*}" ] || \
	    missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (sudo apt-get install$$missing)" >&2; exit 1; fi; fi

# The fast tier: lint, unit and property tests, the derivation notebooks, the claims, prose
# and notebook-contract checks; nothing that needs the built book or the testbed. Tests run
# on every core, one file per worker at a time (a notebook's cells stay in one kernel).
FAST := not slow and not browser and not testbed and not rerun
check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks pipelines notebooks
	$(BIN)/coexist store check
	$(BIN)/pytest -p no:cacheprovider -q -n auto --dist loadfile -m "$(FAST)" --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg tests notebooks/derive_*.ipynb

# Every test: the fast tier first (a broken change fails in minutes), a seeded sample of the
# stored fluid-model runs recomputed bit for bit, then the book from the bundled data and
# the stored runs (a run the store lacks is an error naming the page and `make store`) and
# the tests that need it (figure check, browser, every figure re-run once with parameters
# drawn inside its ranges, seeded with the commit) on both cores, test by test (the
# browser tests share one rendering of the pages through a file), then the testbed's
# experiments alone, since their timing gates must not share the CPU.
test: system-deps check
	$(BIN)/coexist store verify --quiet
	COEXIST_STORE_STRICT=1 $(MAKE) book BOOK_FLAGS="--bundled-only$(if $(CI), --fresh)"
	COEXIST_BOOK_TABLES_BUILT=_build/figures $(BIN)/pytest -p no:cacheprovider --durations=15 -n auto --dist load -m "not testbed and not ($(FAST))" tests
	$(BIN)/pytest -p no:cacheprovider --durations=15 -m "testbed" tests

# The committed fluid-model runs (data/model-runs): `make store` computes what the book needs
# that the store lacks (after a change to the model's code, every run) and drops what no
# page reads; commit data/model-runs and data/datapackage.json with the change. `make
# verify-store` recomputes every stored run and requires the same bits (CI: a sample).
store: $(STAMP)
	$(BIN)/coexist store refresh

verify-store: $(STAMP)
	$(BIN)/coexist store verify --all

# The book as one PDF (_build/pdf/book.pdf, and book.pdf inside the site): every built page
# printed by headless Chromium as the site shows it (vector figures, typeset math, code
# collapsed), joined in reading order with a bookmark per page; builds the book first.
pdf: book
	$(BIN)/coexist pdf

figures: $(STAMP)
	$(BIN)/coexist figures --check

# Every figure re-run with parameters drawn inside its ledger ranges (tests/book/test_rerun.py):
# RERUN_DRAWS per figure, seeded with RERUN_SEED (default: the commit), outcomes in
# _build/rerun-outcomes.jsonl. make test runs one draw per figure, seeded with the commit
RERUN_DRAWS ?= 1
RERUN_SEED ?=
fuzz-figures: $(STAMP)
	COEXIST_RERUN_DRAWS=$(RERUN_DRAWS) COEXIST_RERUN_SEED=$(RERUN_SEED) $(BIN)/pytest -p no:cacheprovider -n auto --dist loadfile -q tests/book/test_rerun.py

bench: $(STAMP)
	$(BIN)/python benchmarks/nash_map.py
	$(BIN)/python benchmarks/fluid_solver.py
	$(BIN)/python benchmarks/fluid_readings.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks pipelines notebooks

clean:
	rm -rf _build build .pytest_cache
