"""Language-model settings (`STEPWISE_LLM_*`): endpoint, model, key, timeout, budget and limits."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from jobs.basics.errors import BadInputError
from jobs.basics.redact import register_secret
from jobs.inputs.llm_config import EditFormat, LlmConfig

ENV_PREFIX = "STEPWISE_LLM_"
NO_KEY = "no-key"  # sent when no key is set: local servers (ollama, vllm, llama.cpp) ignore it


class LlmSettings(BaseSettings):
    """How to reach the model and how much a job may spend; the key is a SecretStr, never shown."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    base_url: str | None = Field(default=None, pattern=r"^https?://")
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    token_budget: int = Field(default=200_000, ge=1)  # tokens in + out per job, per grant
    max_rounds: int = Field(default=3, ge=1, le=10)  # model answers tried per attempt
    max_output_tokens: int = Field(default=4096, ge=64)
    context_tokens: int = Field(default=16_000, ge=500)  # what the batch's files may take
    temperature: float | None = Field(default=None, ge=0, le=2)  # None: the server's default
    max_retries: int = Field(default=2, ge=0, le=10)  # the client's own retries of 5xx/timeouts
    transcript_ttl_days: float | None = Field(default=None, gt=0)  # server: prune older ones
    # How the model edits: function calls (`tools`; a server refusing them falls back to
    # `search_replace`), search/replace blocks, whole files, or a unified diff.
    edit_format: EditFormat = "tools"
    max_turns: int = Field(default=40, ge=2, le=400)  # model calls per tool-using attempt
    max_checks: int = Field(default=6, ge=1, le=50)  # `run_checks` calls per attempt
    restate_every: int = Field(default=8, ge=0)  # turns between restatements (0: never)
    compact_at_tokens: int = Field(default=24_000, ge=2_000)  # conversation size to compact at
    whole_max_lines: int = Field(default=600, ge=10)  # `whole` sends files up to this size

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)

    def missing(self) -> list[str]:
        return [f"{ENV_PREFIX}{name.upper()}" for name in ("base_url", "model")
                if not getattr(self, name)]

    def key(self) -> str:
        return self.api_key.get_secret_value() if self.api_key else NO_KEY

    def secrets(self) -> tuple[str, ...]:
        return (self.api_key.get_secret_value(),) if self.api_key else ()

    def for_repository(self, config: LlmConfig | None) -> LlmSettings:
        """These settings with what the repository's `llm:` block sets."""
        overrides = config.overrides() if config is not None else {}
        return self.model_copy(update=overrides) if overrides else self

    def require(self) -> LlmSettings:
        """These settings, or BadInputError naming what is missing (the CLI exits 2)."""
        missing = self.missing()
        if missing:
            raise BadInputError(
                f"recipe `llm` needs a model endpoint: {', '.join(missing)} not set",
                hint="set STEPWISE_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for ollama) and "
                     "STEPWISE_LLM_MODEL, or pass --llm-base-url and --llm-model; the key comes "
                     "from STEPWISE_LLM_API_KEY",
                code="llm_not_configured",
            )
        for secret in self.secrets():
            register_secret(secret)  # redacted from every log record and output tail from now on
        return self


def load_llm_settings(**overrides: Any) -> LlmSettings:
    """The environment's `STEPWISE_LLM_*`, with explicit (CLI) values taking precedence."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        settings = LlmSettings(**given)
    except ValidationError as exc:
        problems = [f"{ENV_PREFIX}{'.'.join(map(str, e['loc'])).upper()}: {e['msg']}"
                    for e in exc.errors()]
        raise BadInputError("language-model settings are malformed: " + "; ".join(problems),
                            hint="fix the named STEPWISE_LLM_* variable or --llm-* option",
                            code="invalid_settings") from None
    for secret in settings.secrets():
        register_secret(secret)
    return settings
