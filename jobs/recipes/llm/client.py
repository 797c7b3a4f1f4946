"""The chat client: one OpenAI-compatible `chat.completions` call, timed and counted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from jobs.basics.errors import RetryClass, StepwiseError
from jobs.basics.redact import redact
from jobs.recipes.llm_settings import LlmSettings

if TYPE_CHECKING:
    import openai

Message = dict[str, str]


def _openai() -> ModuleType:
    """The `openai` package, imported on first use: it loads some 500 modules (about 17 MB) that
    a process which never calls a model (the web app, a `replace` job, the benchmarks) need not."""
    import openai

    return openai


class ModelError(StepwiseError):
    """The model endpoint failed (unreachable, refused the key, unknown model, ...)."""

    code = "llm_error"


@dataclass(frozen=True)
class ChatReply:
    text: str
    finish_reason: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    model: str

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; `arguments` is its JSON text as sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolReply(ChatReply):
    """An answer in a tool conversation: a ChatReply and the calls it asks for."""

    calls: tuple[ToolCall, ...] = ()


class ChatClient(Protocol):
    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> ChatReply:
        """Send `messages`; return the answer, or raise ModelError."""
        ...


def estimate_tokens(text: str) -> int:
    """A rough count (4 characters a token) for servers that report no usage."""
    return max(1, len(text) // 4)


class OpenAIChat:
    """The official `openai` client pointed at any compatible base URL."""

    def __init__(self, settings: LlmSettings) -> None:
        settings.require()
        self.settings = settings
        self.model = settings.model or ""
        self._client = _openai().OpenAI(base_url=settings.base_url, api_key=settings.key(),
                                        timeout=settings.timeout_s,
                                        max_retries=settings.max_retries)

    def _create(self, messages: Sequence[Any], max_tokens: int, **extra: Any) -> Any:
        options: dict[str, Any] = {"max_tokens": max_tokens, **extra}
        if self.settings.temperature is not None:
            options["temperature"] = self.settings.temperature
        try:
            return self._client.chat.completions.create(
                model=self.model, messages=list(messages), **options,
            )
        except _openai().APIError as exc:
            raise model_error(exc, self.settings) from None

    def converse(self, messages: Sequence[dict[str, Any]], *, tools: Sequence[dict[str, Any]],
                 max_tokens: int) -> ToolReply:
        """One turn of a tool conversation (OpenAI function calling)."""
        started = time.monotonic()
        response = self._create(messages, max_tokens, tools=list(tools))
        latency = time.monotonic() - started
        choice = first_choice(response)
        text = choice.message.content or ""
        calls = tuple(ToolCall(id=c.id or f"call_{i}", name=c.function.name or "",
                               arguments=c.function.arguments or "")
                      for i, c in enumerate(choice.message.tool_calls or [])
                      if getattr(c, "function", None) is not None)
        usage = response.usage
        sent = sum(len(str(m.get("content") or "")) for m in messages)
        said = len(text) + sum(len(c.arguments) for c in calls)
        return ToolReply(
            text=text, calls=calls, finish_reason=str(choice.finish_reason or ""),
            tokens_in=usage.prompt_tokens if usage else max(1, sent // 4),
            tokens_out=usage.completion_tokens if usage else max(1, said // 4),
            latency_s=round(latency, 3), model=response.model or self.model,
        )

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> ChatReply:
        started = time.monotonic()
        response = self._create(messages, max_tokens)
        latency = time.monotonic() - started
        choice = first_choice(response)
        text = choice.message.content or ""
        usage = response.usage
        prompt = "".join(m.get("content", "") for m in messages)
        return ChatReply(
            text=text, finish_reason=str(choice.finish_reason or ""),
            tokens_in=usage.prompt_tokens if usage else estimate_tokens(prompt),
            tokens_out=usage.completion_tokens if usage else estimate_tokens(text),
            latency_s=round(latency, 3), model=response.model or self.model,
        )


def first_choice(response: Any) -> Any:
    """The answer's first choice; ModelError (retried) when the server sent none."""
    if not response.choices:
        raise ModelError("the model answered with no choices", hint="check the server's logs",
                         retry_class=RetryClass.AUTO_RETRY)
    return response.choices[0]


def model_error(exc: openai.APIError, settings: LlmSettings) -> ModelError:
    """A client error as a ModelError with a code, a retry class and a hint (key redacted)."""
    where = redact(settings.base_url or "", secrets=settings.secrets())
    detail = redact(str(exc), secrets=settings.secrets())[:300]
    status = getattr(exc, "status_code", None)
    openai = _openai()
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ModelError(f"the model server at {where} refused the API key ({status})",
                          hint="check STEPWISE_LLM_API_KEY", code="llm_auth_failed")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(f"the model server at {where} does not know model "
                          f"`{settings.model}` or the path ({status}): {detail}",
                          hint="check STEPWISE_LLM_MODEL and that STEPWISE_LLM_BASE_URL ends "
                               "in /v1", code="llm_model_not_found")
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return ModelError(f"cannot reach the model server at {where}: {detail}",
                          hint="check that the server runs and STEPWISE_LLM_BASE_URL; raise "
                               "STEPWISE_LLM_TIMEOUT_S for slow models",
                          code="llm_unreachable", retry_class=RetryClass.AUTO_RETRY)
    if isinstance(exc, openai.RateLimitError | openai.InternalServerError):
        return ModelError(f"the model server at {where} is busy or failing ({status}): {detail}",
                          hint="retry later", code="llm_unavailable",
                          retry_class=RetryClass.AUTO_RETRY)
    return ModelError(f"the model server at {where} refused the request ({status}): {detail}",
                      hint="check the model's context size and STEPWISE_LLM_MAX_OUTPUT_TOKENS",
                      code="llm_request_refused")
