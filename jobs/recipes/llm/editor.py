"""The `llm` recipe's editor: a tool-using conversation (edit format `tools`), or rounds of
answers in a text format (`search_replace`, `whole`, `diff`) that the engine parses, applies,
guards and validates."""

from __future__ import annotations

from typing import cast

from jobs.adapters.safe_paths import read_regular
from jobs.recipes.base import EditError, EditHooks, EditRequest, EditResult
from jobs.recipes.llm.client import ChatClient, ModelError, OpenAIChat
from jobs.recipes.llm.rounds import Rounds
from jobs.recipes.llm.tools.loop import ToolAttempt, ToolClient, ToolsIgnoredError
from jobs.recipes.llm_settings import LlmSettings

REFUSED_TOOLS = "llm_request_refused"  # what a server without function calling answers (400)


class LlmEditor:
    """Works one batch in the configured edit format; `tools` falls back to `search_replace`
    (once, for the rest of the job) when the server refuses function calling."""

    name = "llm"

    def __init__(self, settings: LlmSettings, client: ChatClient | None = None) -> None:
        self.settings = settings
        self._client = client
        self.tools_refused = False

    @property
    def client(self) -> ChatClient:
        if self._client is None:
            self._client = OpenAIChat(self.settings)
        return self._client

    def edit_format(self, settings: LlmSettings) -> str:
        if settings.edit_format == "tools" and self.tools_refused:
            return "search_replace"
        return settings.edit_format

    def apply(self, request: EditRequest) -> EditResult:
        hooks = request.hooks
        if hooks is None:
            raise EditError("the llm editor needs the attempt runner's hooks (check, restore)",
                            hint="this is a bug in Stepwise", code="llm_no_hooks")
        settings = self.settings.for_repository(hooks.llm_config)
        edit_format = self.edit_format(settings)
        if edit_format == "tools" and hasattr(self.client, "converse"):
            attempt = ToolAttempt(request, hooks, settings, cast(ToolClient, self.client))
            try:
                return attempt.run()
            except ModelError as exc:
                if exc.code != REFUSED_TOOLS or attempt.calls:
                    raise EditError(exc.message, hint=exc.hint, code=exc.code,
                                    retry_class=exc.retry_class) from None
                self.tools_refused = True
                hooks.notify("the model server refused function calling: using the "
                             "search_replace edit format for this job")
                edit_format = "search_replace"
            except ToolsIgnoredError:
                self.tools_refused = True
                hooks.notify("the model answered without calling a tool: using the "
                             "search_replace edit format for this job")
                edit_format = "search_replace"
        if edit_format == "tools" or (edit_format == "whole" and self.too_large_for_whole(
                request, hooks, settings)):
            edit_format = "search_replace"
        return Rounds(request, hooks, settings, self.client, edit_format=edit_format).run()

    def too_large_for_whole(self, request: EditRequest, hooks: EditHooks,
                            settings: LlmSettings) -> bool:
        """`whole` sends whole files back: a batch with a file over the limit uses blocks."""
        limit = settings.whole_max_lines
        for path in request.files:
            if read_regular(request.worktree, path).count(b"\n") > limit:
                hooks.notify(f"{path} has more than {limit} lines: using search_replace blocks "
                             "instead of whole files for this batch")
                return True
        return False
