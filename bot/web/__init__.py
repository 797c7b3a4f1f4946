"""The web app: `app.py` (the FastAPI factory), `webhooks.py` (verify the signature, parse, dedupe,
enqueue), `webhook_body.py` (the capped body read), `noops.py` (events that cannot concern a
job, answered without a task), `payload_shapes.py` (a body must have its event's shape),
`replays.py` (a body seen before under another delivery id), `metrics_route.py` (`GET /metrics`),
`redis_deadline.py` (the web app's Redis calls, off the event loop under one total deadline).

Contract: it answers GitHub within its timeout and does no job's work: a verified delivery
becomes a task in Redis (bot/plumbing/queue.py); it never imports the workers (bot/server/).
"""
