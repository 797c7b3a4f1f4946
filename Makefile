# The project's make targets; a bare `make` lists them (one line each, from the `## ` comments).
.DEFAULT_GOAL := help
.PHONY: help demo test test-fast test-pure bench bench-llm chaos fuzz docs docs-serve lock

DEV = STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$0" "$$@"'

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

demo: ## Run a whole job on the bundled sample repository (local mode: no GitHub, no Redis)
	./scripts/demo

test: ## The whole suite as CI runs it: ruff, mypy, import contracts, docs build, pytest
	./scripts/test

test-fast: ## Everything but the slow runs and the browser test, for local work
	./scripts/test -m "not slow and not browser"

test-pure: ## The tests of the pure rooms alone (marker `pure`, set from what a test imports), in seconds
	$(DEV) python -m pytest -q -p no:xdist -m pure

bench: ## The performance benchmarks (ratios against a baseline measured in the same run)
	./scripts/bench

# STEPWISE_LLM_BASE_URL (and _MODEL, _API_KEY) measure a model; unset, the scripted model checks the protocol.
bench-llm: ## The language-model benchmark
	$(DEV) python -m bench.llm_tasks

chaos: ## Kill workers and Redis while jobs run; count duplicate, lost or stuck batches
	$(DEV) python -m tests.kit.chaos

fuzz: ## Hostile webhooks, comments, specs and diffs against the real app
	$(DEV) python -m bench.fuzz

docs: ## Build the documentation site into site/ (mkdocs build --strict)
	NO_MKDOCS_2_WARNING=1 $(DEV) mkdocs build --strict --site-dir site

docs-serve: ## Serve the documentation site on http://127.0.0.1:8001 with live reload
	NO_MKDOCS_2_WARNING=1 $(DEV) mkdocs serve --dev-addr 127.0.0.1:8001

lock: ## Rewrite requirements.lock from the virtualenv's versions (after an upgrade the tests passed on)
	{ sed -n '1,3p' requirements.lock; .venv/bin/pip freeze --exclude-editable; } > requirements.lock.new
	mv requirements.lock.new requirements.lock
