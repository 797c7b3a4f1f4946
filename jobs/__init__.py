"""The engine: specs, plans, editors, guards, the sandbox, the store and the job state machine.

Importing it does nothing else: the recipes are installed by the composition roots (local mode,
the server wiring, the CLI, the test kit) with `jobs.editors.install_recipes`, so a pure module
imports only what it needs."""
