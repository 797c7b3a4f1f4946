"""GitHub-facing: the command line, the web app, the workers, the task center, the GitHub adapter
and the demo; it uses the engine in jobs/, never the reverse.

In layers, each importing only those below it (import-linter checks it): the command line
(`cli/`); the demo (`demo/`); the web app and the workers, which never import each other
and meet only through Redis; the task center, `steering.py` (the role or team membership
steering needs, from GitHub) and observability; the Redis plumbing; `settings.py`; the GitHub
adapter; and at the bottom the command registry, `authz.py` (the decision), `events.py`
(normalised events) and `log_context.py` (the fields a log line and a queued task's trace
carry).
"""
