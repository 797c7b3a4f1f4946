"""Starting llm jobs (wiring.py calls these for llm jobs only): the endpoint check before
anything runs (`llm_settings`), the edit format the plan names (`planned`); jobs whose spec a
model drafted: draft.py."""

from __future__ import annotations

import contextlib

from jobs.basics.errors import BadInputError
from jobs.engine.context import JobContext, Services
from jobs.features.llm.usage import usage
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings


def llm_settings(services: Services) -> LlmSettings:
    """The settings an llm job runs with; BadInputError (exit 2) naming what is missing."""
    return (services.llm or load_llm_settings()).require()


def planned(engine: JobContext) -> None:
    """Record the edit format the job's model will use, for the plan to name it; without an
    endpoint the first model attempt says so."""
    job = engine.job
    with contextlib.suppress(BadInputError):
        settings = llm_settings(engine.services)
        usage(job).edit_format = settings.for_repository(job.config.llm).edit_format


def llm_enabled(services: Services) -> bool:
    """Whether a model endpoint is configured (so an issue without a block can be drafted)."""
    return (services.llm or load_llm_settings()).configured
