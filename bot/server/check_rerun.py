""""Re-run" pressed on one of Stepwise's own check runs (`check_run.rerequested`, which GitHub
sends only to the App that made the run): GitHub expects the App to publish a new run.

The new run says again what the run said (read back from GitHub with its annotations: a batch's
validation evidence, the job's state at a gate, the config check), so a run a person re-ran never
stays "queued". The job's `Stepwise` run on a commit the branch has left says it is superseded
and points at the job's head, where the current run is. Nothing is validated again: a batch's
commit was validated before it landed, and `/stepwise retry` is how a person asks for more.
"""

from __future__ import annotations

import logging

from bot.events import Event
from bot.github.check_run_publish import republish
from bot.github.ci import JOB_CHECK_SUFFIX
from bot.server.ci_events import is_own
from bot.server.context import ServerContext

log = logging.getLogger(__name__)


def on_check_rerun(ctx: ServerContext, event: Event) -> None:
    if not is_own(ctx, event) or not event.check_run_id:
        return  # another App's run: GitHub sends its rerequest to that App
    client = ctx.installation(event.installation_id)
    forge = ctx.forge(client, event.repo)
    ci = forge.ci()
    run = client._call(lambda gh: gh.checks.get(*event.repo.split("/", 1),
                                                event.check_run_id).json())
    external = str(run.get("external_id") or "")
    superseded_by = ""
    if external.endswith(JOB_CHECK_SUFFIX):
        job = ctx.store.load_id(external.removesuffix(JOB_CHECK_SUFFIX))
        if job is not None and job.head_sha and job.head_sha != event.sha:
            superseded_by = job.head_sha
    new_id = republish(ci, event.check_run_id, superseded_by=superseded_by)
    log.info("a check run re-run on GitHub was published again", extra={
        "repo": event.repo, "check": event.check_name, "run": event.check_run_id,
        "new_run": new_id})
