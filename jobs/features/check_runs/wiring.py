"""The check runs' `Feature`: its hooks at the loop's named points."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.check_runs.publish import publish_batch_check, publish_job_check

FEATURE = Feature(name="check_runs", committed=publish_batch_check, after_steps=publish_job_check)
