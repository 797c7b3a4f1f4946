"""The engine: the loop advancing a job, one batch attempt, the branch, review, reverts, recovery."""
