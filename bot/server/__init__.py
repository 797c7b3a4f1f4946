"""Server mode's workers: RQ tasks and plumbing, the steps they run, the Redis store, rebuilt records."""
