"""GitHub-facing: the command line, the web app, the workers, the task center, the GitHub adapter
and the demo; it uses the engine in jobs/, never the reverse.

In layers, each importing only those below it (import-linter checks it): the command line
(`cli.py`, typer: the app and local mode's commands, with `cli_output.py` (what the commands
print, errors and exit codes), `cli_config.py` (`stepwise check-config`), `cli_demo.py`
(`stepwise demo`, the only importer of `demo/`), `cli_campaign.py` (`stepwise campaign`) and
`cli_server.py` (`serve`, `worker`)); the web app and the workers, which never import each other
and meet only through Redis; the task center, `steering.py` (the role or team membership
steering needs, from GitHub) and observability; the Redis plumbing; `settings.py`; the GitHub
adapter; and at the bottom the command registry, `authz.py` (the decision), `events.py`
(normalised events) and `log_context.py` (the fields a log line and a queued task's trace
carry).
"""
