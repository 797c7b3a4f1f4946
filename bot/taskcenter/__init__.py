"""The task center: every job in one place (HTML pages under /jobs, JSON under /api/jobs).

`mount.install(app, settings)` adds it to the web app; `records` and `views` read and shape
the job records (also used by `stepwise jobs` and the metrics)."""
