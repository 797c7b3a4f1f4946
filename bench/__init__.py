"""Benchmarks and long-running evidence scripts (`python -m tests.kit.chaos`, `bench/fuzz.py`).

Every benchmark runs as `python -m bench.<name>`, so this package is their one composition root:
it installs the built-in recipes, as jobs/local.py, the server wiring and the CLI each do
(importing `jobs` registers none)."""

from jobs.composition import install

install()
