"""What the web app and the workers tell the operator: `metrics.py` (the Prometheus metrics, read
from Redis), `github_metrics.py` (GitHub calls, retries, 304s and rate limits per installation),
`process_metrics.py` (what the web process counts itself: Redis being down), `jsonlog.py` (one
JSON object per log line, with the fields and the delivery's trace bound by bot/log_context.py)
`logs.py` (the logging set-up, with the redaction filter on every handler), `outages.py` (an
outage's repeated lines held back, a worker's stray stderr logged) and `version.py`
(the running version, from the installed package's metadata).

Contract: nothing here changes a job; tokens never reach a log line.
"""
