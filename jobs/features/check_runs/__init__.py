"""Stepwise's own check runs, a server-only feature (GitHub shows them; local mode has none):
`Stepwise / batch K` on each batch commit and `Stepwise` on the branch head.

- `publish.py`: the two runs drafted from the record (the drafts themselves are pure,
  jobs/notes/check_runs.py) and sent through the forge's `publish_check_run`.
- `port.py`: its port (`jobs.ports.CheckRunPublisher`), the only part of the forge it reaches.
- `wiring.py`: its `Feature`: `committed` (a batch commit's run), `after_steps` (the head's run,
  when the engine stops: at a gate, at the end, waiting for CI, or cancelled).

Contract: only bot/server's composition (jobs/composition.py `SERVER_FEATURES`) adds it; nothing
else in the loop needs it, so taking it out leaves local and server mode working without runs.
"""
