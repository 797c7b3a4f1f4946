"""The `Stepwise config` check run on a push that changes `.github/stepwise.yml` (to the default
branch or any other, so a pull request shows it): the file as that commit holds it, checked as a
job would read it, every problem an annotation at its line (jobs/notes/config_check.py)."""

from __future__ import annotations

from bot.events import Event
from bot.github.check_run_publish import upsert_with_annotations
from bot.server.context import ServerContext
from jobs.inputs.config import CONFIG_PATH
from jobs.notes.config_check import config_check_run

NO_COMMIT = "0" * 40  # a deleted branch's `after`


def check_config_push(ctx: ServerContext, event: Event) -> None:
    """Publish the `Stepwise config` run on the pushed head."""
    if not event.after or event.after == NO_COMMIT:
        return
    client = ctx.installation(event.installation_id)
    owner, name = event.repo.split("/", 1)
    text = client.file(owner, name, CONFIG_PATH, event.after)
    forge = ctx.forge(client, event.repo)
    details = f"{forge.web_url}/{event.repo}/blob/{event.after}/{CONFIG_PATH}"
    upsert_with_annotations(forge.ci(), config_check_run(text, event.after,
                                                       details_url=details).payload())
