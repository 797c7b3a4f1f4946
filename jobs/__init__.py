"""The engine: specs, plans, editors, guards, the sandbox, the store and the job state machine."""

# Registers the recipes (their spec rules and editors) before anything can read a task spec:
# every entry point (CLI, worker, web app, tests, bench) imports some part of `jobs` first.
import jobs.editors  # noqa: F401
