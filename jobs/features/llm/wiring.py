"""The llm recipe's ties to the loop as a feature: its entry in the features' tuple
(jobs/composition.py)."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.basics.errors import ErrorInfo
from jobs.decisions.ci import CiVerdict
from jobs.engine.attempt import AttemptOutcome
from jobs.engine.context import Drafting, Feature, JobContext, Services
from jobs.features.llm import edit_hooks, start
from jobs.features.llm.budget import BUDGET_GATE, settle_budget_gate
from jobs.features.llm.draft import drafted
from jobs.features.llm.note import MODEL_EDITS, MODEL_USAGE
from jobs.features.llm.statistics import llm_statistics
from jobs.features.llm.usage import FORMER_FIELDS, LlmUsage, usage_figures
from jobs.inputs.config import RepoConfig
from jobs.inputs.spec import Recipe, TaskSpec
from jobs.kernel.feature_parts import FeatureParts
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt
from jobs.ports import CiFailure


class BudgetHooks:
    """The `budget` gate's part of a batch's step: an approval grants one more budget before
    the batch runs again. It never takes a step over."""

    def before_batch(self, engine: JobContext, batch: Batch) -> bool:
        settle_budget_gate(engine.job)
        return False

    def batch_failed(self, engine: JobContext, batch: Batch, attempt: Attempt,
                     outcome: AttemptOutcome) -> bool:
        return False

    def batch_failed_ci(self, engine: JobContext, batch: Batch, sha: str,
                        failures: Sequence[CiFailure], error: ErrorInfo) -> bool:
        return False

    def candidate_checked(self, engine: JobContext, batch: Batch, sha: str,
                          verdict: CiVerdict) -> bool:
        return False


def uses_llm(spec: TaskSpec) -> bool:
    """Whether a job of `spec` calls the model: recipe `llm`, or a command's `llm` fallback."""
    return spec.recipe is Recipe.LLM or spec.fallback == "llm"


def active(job: Job) -> bool:
    """A job whose recipe is `llm`, or a command with the `llm` fallback."""
    return uses_llm(job.spec)


def start_check(services: Services, spec: TaskSpec) -> None:
    """Refuse (exit 2, naming what is missing) an llm job without a model endpoint."""
    if uses_llm(spec):
        start.llm_settings(services)


def drafts_on_server(config: RepoConfig) -> bool:
    """Server mode drafts a spec for an issue without a block when the config's `llm_drafts` asks."""
    return config.llm_drafts


FEATURE = Feature(
    name="llm", active=active, batch=BudgetHooks(), planned=start.planned,
    start_check=start_check, edit=edit_hooks.edit,
    parts=FeatureParts("llm", gates=(BUDGET_GATE,), note_sections=(MODEL_USAGE,),
                       card_sections=(MODEL_EDITS,), config_keys=("llm", "llm_drafts"),
                       job_part=LlmUsage, former_fields=FORMER_FIELDS, figures=usage_figures),
    # local mode drafts whenever a model endpoint is configured
    draft=Drafting(local=start.llm_enabled, server=drafts_on_server, draft=drafted),
    report=llm_statistics,  # `stepwise llm-report`
)
