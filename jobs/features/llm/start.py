"""Starting llm jobs: the endpoint check before anything runs (the feature's `start_check`), the
edit format the plan names (`planned`); jobs whose spec a model drafted: draft.py."""

from __future__ import annotations

import contextlib

from jobs.domain.errors import BadInputError
from jobs.domain.spec import Recipe, TaskSpec
from jobs.editors.llm_settings import LlmSettings, load_llm_settings
from jobs.engine.context import JobContext, Services


def llm_for(services: Services, spec: TaskSpec) -> LlmSettings | None:
    """The settings an llm job runs with; BadInputError (exit 2) naming what is missing."""
    if not uses_llm(spec):
        return None
    return (services.llm or load_llm_settings()).require()


def uses_llm(spec: TaskSpec) -> bool:
    """Whether a job of `spec` calls the model: recipe `llm`, or a command's `llm` fallback."""
    return spec.recipe is Recipe.LLM or spec.fallback == "llm"


def start_check(services: Services, spec: TaskSpec) -> None:
    """Refuse (exit 2, naming what is missing) an llm job without a model endpoint."""
    llm_for(services, spec)


def planned(engine: JobContext) -> None:
    """Record the edit format the job's model will use, for the plan to name it; without an
    endpoint the first model attempt says so."""
    job = engine.job
    with contextlib.suppress(BadInputError):
        settings = llm_for(engine.services, job.spec)
        if settings is not None:
            job.llm.edit_format = settings.for_repository(job.config.llm).edit_format


def llm_enabled(services: Services) -> bool:
    """Whether a model endpoint is configured (so an issue without a block can be drafted)."""
    return (services.llm or load_llm_settings()).configured
