"""Benchmarks and long-running evidence scripts (`python -m bench.chaos`, `bench/fuzz.py`)."""
