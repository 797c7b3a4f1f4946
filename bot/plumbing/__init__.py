"""Redis, below both the web app and the workers:

- `keys.py`: every Redis key, lease name and RQ task id, spelled there only
  (`tests/bot/plumbing/test_keys.py` refuses a key literal elsewhere).
- `connections.py`: Redis clients per role, with explicit timeouts, and the strings and stored
  documents they hand back, read.
- `queue.py`: RQ's `stepwise` queue: queueing a task by name, finding an abandoned one,
  queueing it again; `leases.py`: leases with their heartbeat, short locks, repository and
  installation slots.
- `redis_store.py`: the job records (a step reads its record once and leaves out a closing save
  that would write nothing new), with `idle_index.py` (the jobs a reconciler pass looks at,
  kept by every save); `campaign_store.py`: a campaign's record (a hash of a header, one field
  per repository, the running counters).
- `worker_beats.py` (the workers' heartbeats: who is alive, idle or busy),
  `suspension_marks.py` (a suspended installation's mark), `pruned.py` (what is left of a job
  retention removed), `trigger_labels.py` (the labels a worker last read from the config, for
  the web app).

Contract: no GitHub call and no job logic here, only how things are kept in Redis.
"""
