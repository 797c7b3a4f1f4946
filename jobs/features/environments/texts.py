"""What the plan says of the job's environment (pure): the `setup` commands, whether the
environment was built for this job or reused from the cache, and why it was rebuilt."""

from __future__ import annotations

from jobs.basics import markdown_safe as md
from jobs.features.environments.record import environment_of
from jobs.kernel.job import Job


def setup_lines(job: Job) -> list[str]:
    """The plan's lines on `setup` (none without it)."""
    if not job.config.setup:
        return []
    env = environment_of(job)
    if env is not None and env.failed:
        how = f"not built: {md.message(env.failed)}"
    else:
        how = ("reused from the cache" if env.from_cache else "built for this job") \
            if env is not None else "not built yet"
    lines = [f"- Setup: {md.codes(job.config.setup)}; environment {how}"
             + (f" (key `{env.key[:12]}`)" if env is not None else "")]
    if env is not None and env.failed_before:
        lines.append("- The last build of this environment failed, in job "
                     + md.message(env.failed_before)
                     + ("" if env.failed else "; built now"))
    if env is not None and env.rebuilt_because and not env.from_cache and not env.failed:
        lines.append("- Environment rebuilt because of a change to "
                     + "; ".join(md.message(why) for why in env.rebuilt_because))
    return lines

