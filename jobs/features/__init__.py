"""Features that plug into the engine through the hooks it is built with (jobs/engine/hooks.py),
never imported by it; each folder opens with its contract. One line each:

- bisect/: split a multi-file batch that failed validation, and `batch_size: auto`.
"""
