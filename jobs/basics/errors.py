"""The one error protocol: every failure carries a code, a retry class, a message and a hint."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class RetryClass(StrEnum):
    """What should happen after a failure."""

    AUTO_RETRY = "auto_retry"
    NEEDS_HUMAN = "needs_human"
    DO_NOT_RETRY = "do_not_retry"


class ErrorInfo(BaseModel):
    """A failure as it is recorded in the store, shown in comments and in `stepwise status`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    retry_class: RetryClass
    message: str
    hint: str
    evidence: dict[str, Any] = {}


class StepwiseError(Exception):
    """Base of every error the engine raises on purpose."""

    code = "error"
    retry_class = RetryClass.NEEDS_HUMAN

    def __init__(
        self,
        message: str,
        *,
        hint: str = "",
        code: str | None = None,
        retry_class: RetryClass | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code
        if retry_class is not None:
            self.retry_class = retry_class
        self.evidence = evidence or {}

    def info(self) -> ErrorInfo:
        return ErrorInfo(
            code=self.code,
            retry_class=self.retry_class,
            message=self.message,
            hint=self.hint,
            evidence=self.evidence,
        )

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class PlatformWait(StepwiseError):
    """The platform asks the job to wait (a rate limit, a suspended installation): no fault of
    the step's work, so no attempt counts it as failed; the worker waits or parks the job."""

    retry_class = RetryClass.AUTO_RETRY


class BadInputError(StepwiseError):
    """Input a human must fix (spec, config, arguments); the CLI exits 2."""

    code = "bad_input"
    retry_class = RetryClass.DO_NOT_RETRY


class SpecError(BadInputError):
    """The ```stepwise block of an issue is missing or invalid."""

    code = "invalid_spec"


class ConfigError(BadInputError):
    """`.github/stepwise.yml` is invalid."""

    code = "invalid_config"


class StateError(StepwiseError):
    """The recorded state is unreadable, inconsistent, or a transition is illegal."""

    code = "state_error"
    retry_class = RetryClass.DO_NOT_RETRY


class WorkspaceError(StepwiseError):
    """A git operation on the job's worktree failed."""

    code = "workspace_error"


# A WorkspaceError's code when GitHub refused a commit or a push that creates or changes workflow
# files (the App has no `workflows: write`): no retry helps, a person must act.
WORKFLOW_PERMISSION = "workflow_permission"
