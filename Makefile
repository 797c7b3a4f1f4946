# The README's commands, and the benchmarks.
.PHONY: demo test test-fast test-pure bench bench-llm chaos fuzz readme lock

demo:
	./scripts/demo

test:
	./scripts/test

# Local work: everything but the slow runs and the browser test (CI runs `./scripts/test`: all).
test-fast:
	./scripts/test -m "not slow and not browser"

# The pure rooms alone (jobs/basics, inputs, kernel, decisions, notes and the features' rules: no git, Redis or sandbox), in seconds.
PURE_TESTS = tests/jobs/basics tests/jobs/inputs tests/jobs/kernel \
	tests/jobs/decisions tests/jobs/notes tests/jobs/features/bisect/test_rules.py \
	tests/jobs/features/campaigns/test_rules.py tests/jobs/features/campaigns/test_gate_rules.py \
	tests/jobs/features/campaigns/test_record_counters.py tests/jobs/features/ci/test_ci.py \
	tests/jobs/features/ci/test_ci_gate.py tests/jobs/features/ci/test_ci_config.py
test-pure:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m pytest -q $(PURE_TESTS)'

bench:
	./scripts/bench

# The model benchmark: STEPWISE_LLM_BASE_URL (and _MODEL, _API_KEY) measure a model; unset, the
# scripted model checks the protocol.
bench-llm:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m bench.llm_tasks'

chaos:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m tests.kit.chaos'

fuzz:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m bench.fuzz'

# requirements.lock rewritten from the virtualenv's versions (after an upgrade the tests passed on).
lock:
	{ sed -n '1,3p' requirements.lock; .venv/bin/pip freeze --exclude-editable; } > requirements.lock.new
	mv requirements.lock.new requirements.lock

# The README's generated tables (spec keys, config keys, comment commands) rewritten from the code.
readme:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" scripts/readme_tables.py'
