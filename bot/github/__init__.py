"""GitHub: the App and every call Stepwise makes to GitHub.

- `app.py`: the App: its JWT client, installation tokens, the bot user's commit identity, one
  TLS context for every client.
- `client.py`: an installation's REST and GraphQL calls, with `records.py` (the records it
  answers with) and `errors.py` (a failed call: `ForgeError`, the failure classified, call-level
  retries and rate limits); `api_versions.py`: the REST API versions spoken (read by the
  settings without importing githubkit).
- `conditional.py`: ETag reads, a bounded store; `observer.py`: every call's answer and retry seen
  at the githubkit client (route templates, rate-limit headers).
- `forge.py`: the forge port (jobs/ports.py) on GitHub, with `conversation.py` (who a gate
  mentions, which comment it edits, what a superseded comment says).
- `mirror.py`: cached clones, push and fetch, with `clone_use.py` (the lock each task using a
  clone holds, which an uninstall's cleanup takes alone); `git_data.py`: commits GitHub signs
  (the Git Data API), with `git_objects.py` (the local commit read for it: changes, blobs,
  sizes, credits).
- `ci.py`: the repository's CI: checks, statuses, required checks, annotations, job logs,
  re-runs, Stepwise's own check runs; `check_run_publish.py`: a check run with all its
  annotations, 50 a request.
- `write_budget.py`: each installation's content-creating writes within GitHub's secondary
  limits (80 a minute, 500 an hour, spaced), shared by all workers through Redis; `limited.py`
  (a rate limit GitHub answered stops every request of the installation until it is over);
  `coalesce.py` (a working job's card and check run sent at most once a minute, never unchanged).
- `installed_repos.py`: the repositories an installation reaches (campaigns select among
  them, recovery looks for jobs in them); `campaign_calls.py` (the campaigns feature's calls: who
  reads a repository, tracking issues created once, the campaign issue's body).

Contract: the only folder that talks to GitHub's API (through githubkit); what it answers with
are plain records, never githubkit models.
"""
