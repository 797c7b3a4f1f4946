"""The domain, pure and without I/O: records, statuses, gates, specs, config, plans, guard, notes."""
