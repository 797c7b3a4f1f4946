"""Jobs whose spec the model drafted from the issue's text (an issue without a spec block, when a
model endpoint is configured)."""

from __future__ import annotations

from jobs.engine.context import Base, Services
from jobs.engine.start import create_job, local_base
from jobs.features.llm.usage import record_usage
from jobs.kernel.job import Job
from jobs.recipes.llm.accounting import ARTIFACTS, Transcript
from jobs.recipes.llm.client import OpenAIChat
from jobs.recipes.llm.draft import Draft, draft_comment, draft_spec
from jobs.recipes.llm_settings import load_llm_settings


def draft_job(title: str, body: str, number: int, services: Services, *, base: Base | None = None,
              repo_name: str | None = None) -> tuple[Job, Draft]:
    """A job whose spec the model drafted from the issue text and the repository's files.

    It is marked `untrusted_spec`, so it plans and waits at the `plan` gate whatever the config
    says; the caller shows `draft_comment(draft)` to the people who approve it.
    """
    settings = (services.llm or load_llm_settings()).require()
    repo = services.repository
    base = base or local_base(repo)
    draft = draft_spec(title=title, body=body, files=repo.tracked_files(base.sha),
                       client=OpenAIChat(settings), max_tokens=settings.max_output_tokens)
    job = create_job(draft.task, number, services, base=base, repo_name=repo_name)
    job.untrusted_spec = True
    for call in draft.calls:
        record_usage(job, call)
    path = repo.state_dir / ARTIFACTS / f"issue-{number}" / "draft-spec.md"
    transcript = Transcript(path, title=f"Stepwise #{number} — {title} — drafting the spec",
                            secrets=settings.secrets(), ttl_days=settings.transcript_ttl_days)
    answers = [i for i, m in enumerate(draft.transcript) if m["role"] == "assistant"]
    start = 0
    for call, index in zip(draft.calls, answers, strict=True):
        transcript.add(call, draft.transcript[start:index], draft.transcript[index]["content"])
        start = index + 1
    return job, draft


def drafted(services: Services, title: str, body: str, number: int, /, *,
            base: Base | None = None, repo_name: str | None = None) -> tuple[Job, str]:
    """The feature's draft hook: the drafted job and the comment that shows its spec."""
    job, draft = draft_job(title, body, number, services, base=base, repo_name=repo_name)
    return job, draft_comment(draft, approve=services.voice.command("approve"))
