"""Campaigns: one spec applied to many repositories, with a preview, canaries, waves, a halt
when failures pile up, a dashboard and bulk steering.

Contract of this folder (everything here but `port.py`'s implementations is pure: no git,
subprocess, Redis or network):
- `settings.py`  the issue's `campaign:` block and the per-repository task it leaves.
- `record.py`    the campaign's own record: one small entry per repository.
- `selection.py` which repositories are in, and why the others are left out.
- `rollout.py`   canary, waves, the open-PR limit and the halt rule, as decisions on the record.
- `steering.py`  the `campaign <verb>` commands and what each does to the record.
- `dashboard.py` the dashboard Markdown, kept under GitHub's body limit at any size.
- `sample.py`    the preview's dry-run diff of one file per repository (`replace`).
- `shapes.py`    the repositories' edit shapes, summed for the dashboard (one review for all).
- `port.py`      what a mode must provide to run a campaign (local: jobs/local_campaigns.py),
                 and `drive`, the loop that drives the record through that port.
Each repository's job is an ordinary Stepwise job; the campaign only starts, reads and steers it.
"""
