"""Campaigns in server mode: the campaign issue of a control repository (its label starts one,
its body carries the dashboard, its `/stepwise campaign` comments steer it), the record in
Redis, and the port through which the pure rules of jobs/features/campaigns/ start, read and
steer each repository's ordinary job."""
