# The README's commands, and the benchmarks.
.PHONY: demo test bench chaos fuzz

demo:
	./scripts/demo

test:
	./scripts/test

bench:
	./scripts/bench

chaos:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m tests.kit.chaos'

fuzz:
	STEPWISE_EXTRAS='[dev]' bash -c 'source scripts/_venv.sh && "$$VENV/bin/python" -m bench.fuzz'
