"""The `llm` recipe's editor: the interface is fixed here; the model client is a later piece of work."""

from __future__ import annotations

from jobs.editors.base import EditError, EditRequest, EditResult

LLM_UNAVAILABLE = (
    "recipe `llm` is not available in this version of Stepwise: the language-model editor "
    "has not been built yet"
)


class LlmEditor:
    """Will send the batch's files, targets, instructions and feedback to a model for a diff."""

    name = "llm"

    def apply(self, request: EditRequest) -> EditResult:
        raise EditError(
            LLM_UNAVAILABLE,
            hint="use recipe `replace` or `command` for now",
            code="llm_unavailable",
        )
