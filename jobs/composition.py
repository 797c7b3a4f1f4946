"""What every mode builds the engine with: the recipes and the features, one line each (the
features in the order their hooks run), and `install`, which the composition roots
(jobs/local.py, bot/server/context.py, the CLI) call before a record or a spec is read. Nothing
is registered by importing a module.

A new feature is a folder under jobs/features/ with a `wiring.py` giving its `Feature`, plus
one line below.

The modes (jobs/local.py, bot/cli, bot/server) reach a feature only through this module: the
helpers at the end ask the features' hooks (`drafting`, `resume_notices`, `report`) and never
name a feature; an import contract (pyproject.toml) holds that they import no feature.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from jobs.basics.errors import BadInputError
from jobs.engine import branch_sync
from jobs.engine.context import Drafting, Feature, JobContext
from jobs.features.base_moves.wiring import FEATURE as BASE_MOVES
from jobs.features.bisect.wiring import bisect_feature
from jobs.features.check_runs.wiring import FEATURE as CHECK_RUNS
from jobs.features.ci.wiring import CANDIDATES as CI_CANDIDATES
from jobs.features.ci.wiring import FEATURE as CI
from jobs.features.environments.wiring import FEATURE as ENVIRONMENTS
from jobs.features.evidence.wiring import FEATURE as EVIDENCE
from jobs.features.llm.wiring import FEATURE as LLM
from jobs.kernel.feature_parts import install_parts
from jobs.kernel.job import Job
from jobs.recipes import RecipeDefinition, command, install_recipes, replace
from jobs.recipes.llm import recipe as llm

BUILT_IN: tuple[RecipeDefinition, ...] = (  # the recipes, one line each (jobs/recipes/)
    replace.RECIPE,
    command.RECIPE,
    llm.RECIPE,
)

# Their sections go in the same order: bisect's words on a batch's card line come before CI's.
FEATURES: tuple[Feature, ...] = (
    bisect_feature(ci=CI_CANDIDATES),  # split a failed batch to find its culprit; `batch_size: auto`
    CI,  # CI as a verifier: wait for its verdict (`ci.wait`), the `ci_failed` gate
    Feature("branch", safe_point=branch_sync.sync),  # the branch read again: people's commits
    BASE_MOVES,  # the moved base merged in (the `conflict` gate, the note's base merges)
    LLM,  # recipe llm's ties to the loop: endpoint, editor's extras, `budget` gate, model usage
    ENVIRONMENTS,  # `setup` builds the job's environment, cached
    EVIDENCE,  # what a batch's tests ran of its changes, its edit shapes, the plan's forecast
)
# The server's (bot/server/context.py): the same, and what only GitHub shows.
SERVER_FEATURES: tuple[Feature, ...] = (
    *FEATURES,
    CHECK_RUNS,  # Stepwise's own check runs on the batch commits and the branch head
)


def install(features: Iterable[Feature] = FEATURES,
            recipes: Iterable[RecipeDefinition] = BUILT_IN) -> None:
    """Install the recipes and the features' pure parts (gate rows, note sections)."""
    install_recipes(recipes)
    install_parts(f.parts for f in features if f.parts is not None)


def with_feature(features: tuple[Feature, ...], feature: Feature) -> tuple[Feature, ...]:
    """`features` with `feature` in place of the one of the same name (appended if none)."""
    if any(f.name == feature.name for f in features):
        return tuple(feature if f.name == feature.name else f for f in features)
    return (*features, feature)


def drafting(features: Iterable[Feature] = FEATURES) -> Drafting | None:
    """The feature that drafts specs from an issue without a spec block, if one is composed."""
    return next((f.draft for f in features if f.draft is not None), None)


def resume_notices(engine: JobContext) -> list[str]:
    """Local mode: what the features say before a waiting job shows its gate again."""
    return [said for f in engine.services.features if f.resume_notice is not None
            if (said := f.resume_notice(engine)) is not None]


def report(name: str, job: Job, features: Iterable[Feature] = FEATURES) -> str:
    """The named feature's report of `job` (`stepwise llm-report`); BadInputError without it."""
    for feature in features:
        if feature.name == name and feature.report is not None:
            return feature.report(job)
    raise BadInputError(f"this Stepwise has no {name} report (the feature is not installed)",
                        hint="list what a job did with `stepwise status`", code="no_report")


def base_pushed(job: Job, at: datetime, features: Iterable[Feature] = FEATURES) -> None:
    """Server mode: a push to `job`'s base branch was seen while the job waits: each feature
    that follows the base marks it (the job looks when it resumes)."""
    for feature in features:
        if feature.base_pushed is not None:
            feature.base_pushed(job, at)
