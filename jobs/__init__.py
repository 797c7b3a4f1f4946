"""The engine: specs, plans, editors, guards, the sandbox, the store and the job state machine."""
