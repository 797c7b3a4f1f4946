"""Server mode's workers: the task table and the loop RQ runs, the steps they take, the events
and comments they handle, the reconciler and reaper, rebuilt records. Their Redis plumbing (keys,
the store, the queue, leases) is bot/plumbing/, shared with the web app."""
