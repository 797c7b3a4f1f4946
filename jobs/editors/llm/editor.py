"""The `llm` recipe: a language model proposes a diff; the engine parses, applies, guards and validates it."""

from __future__ import annotations

from jobs.editors.base import EditError, EditRequest, EditResult
from jobs.editors.llm.client import ChatClient, OpenAIChat
from jobs.editors.llm.rounds import Rounds
from jobs.editors.llm.settings import LlmSettings


class LlmEditor:
    """Sends the batch's goal, rules, targets and numbered files; works the answer in rounds."""

    name = "llm"

    def __init__(self, settings: LlmSettings, client: ChatClient | None = None) -> None:
        self.settings = settings
        self._client = client

    @property
    def client(self) -> ChatClient:
        if self._client is None:
            self._client = OpenAIChat(self.settings)
        return self._client

    def apply(self, request: EditRequest) -> EditResult:
        if request.hooks is None:
            raise EditError("the llm editor needs the attempt runner's hooks (check, restore)",
                            hint="this is a bug in Stepwise", code="llm_no_hooks")
        return Rounds(request, request.hooks, self.settings, self.client).run()
