"""The task center: every job in one place (HTML pages under /jobs, JSON under /api/jobs).

- `mount.py`: the routes (`install(app, settings)` adds them to the web app).
- `records.py` (listing and grouping jobs) and `views.py` (what a page shows of a record), also
  used by `stepwise jobs` and the metrics; `pages.py` (the pages), `api.py` (JSON),
  `markdown.py` (job text as sanitized Markdown), `links.py` (where a job lives: its issue,
  pull request, commits and task center page, from validated parts only).
- `auth.py` (the token and the session) and `login_guard.py` (a strong token, failed logins
  limited); `artifacts.py` (a failed attempt's `output.log` and `attempt.diff`, behind the
  login).
- `terminal.py` (`stepwise jobs`, `status --server`); `campaign_pages.py` (every campaign, and
  one with all its repositories); templates and static files.

Contract: it reads job records and never changes one; every page but the login is behind it.
"""
