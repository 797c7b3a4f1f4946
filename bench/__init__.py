"""Benchmarks and long-running evidence scripts (`python -m tests.kit.chaos`, `bench/fuzz.py`)."""
