"""Campaigns in server mode: the campaign issue of a control repository (its label starts one, its
body carries the dashboard, its `/stepwise campaign` comments steer it), the record in Redis
(bot/plumbing/campaign_store.py), and the port through which the pure rules of
jobs/features/campaigns/ start, read and steer each repository's ordinary job.

- `tasks.py`: the label starts a campaign's preview, `/stepwise campaign` steers it, each
  reconciler pass ticks it and rewrites the dashboard in the issue's body when it changed.
- `port.py`: each repository's job: a tracking issue, an ordinary job, its plan gate passed for
  the approved preview by someone who may steer there.
- `access.py`: who may see a repository in a campaign (the viewer reads it, and so does everyone
  who reads the control issue) and which control repositories an owner allows.
- `closing.py`: closing the campaign issue cancels it; reopening says how to run it again.
- `plug.py`: the hooks they plug into the server (bot/server/plugs.py names it, one line).
"""
