# One command sets up and tests, one runs. Both bootstrap .venv from nothing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# `make run` and `make tour` use REVERIE_HOME when it is set, as the reverie command does.
HOME_DIR ?= $(or $(REVERIE_HOME),reverie-data)

.PHONY: run tour test lint typecheck unit bench bench-dense crash-campaign fault-campaign pg-crash clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the project's metadata changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/reverie serve --home $(HOME_DIR)

tour: $(VENV)/.installed
	$(BIN)/python -m reverie.tour --home $(HOME_DIR)

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.installed
	$(BIN)/mypy

unit: $(VENV)/.installed
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/write_bench.py
	$(BIN)/python bench/pack_bench.py
	$(BIN)/python bench/search_bench.py
	$(BIN)/python bench/secrets_bench.py
	$(BIN)/python bench/turn_bench.py
	$(BIN)/python bench/serve_bench.py
	$(BIN)/python bench/slack_bench.py
	$(BIN)/python bench/review_quality.py
	$(BIN)/python bench/review_corpus.py
	$(BIN)/python bench/review_cost.py
	$(BIN)/python bench/review_locomo.py
	$(BIN)/python bench/locomo_bench.py --arms reverie,bm25s,rank-bm25
	$(BIN)/python bench/pg_bench.py

# The LoCoMo history benchmark with its dense baseline (torch CPU first: see pyproject.toml).
bench-dense: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[bench,bench-dense]'
	HF_HUB_OFFLINE=1 $(BIN)/python bench/locomo_bench.py

# Long campaigns, run by hand: thousands of SIGKILLs of a writer (the suite runs 150).
crash-campaign: $(VENV)/.installed
	$(BIN)/python bench/crash_campaign.py --kills 2000

# Real storage faults while writers and readers run (needs root, for the mounts; about 3 min).
fault-campaign: $(VENV)/.installed
	$(BIN)/python bench/fault_campaign.py --rounds 8

# PostgreSQL's crash safety: writers SIGKILLed and the server restarted while they write
# (needs root for pg_ctlcluster; restarts the machine's PostgreSQL: run it alone).
pg-crash: $(VENV)/.installed
	$(BIN)/python bench/pg_crash.py --writers 4 --restarts 4 --seconds 20

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
