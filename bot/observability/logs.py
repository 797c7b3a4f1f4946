"""Process logging: standard handlers, each with the redaction filter, and the secrets registered."""

from __future__ import annotations

import contextlib
import copy
import logging
import sys
from typing import TYPE_CHECKING, Any

from bot.observability.jsonlog import json_uvicorn_config, use_json_lines
from bot.observability.outages import RepeatFilter, StderrToLog
from jobs.basics.redact import RedactingFilter, register_secret

if TYPE_CHECKING:  # the CLI logs before (and often without) reading the App's settings
    from bot.settings import Settings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_FILTER = RedactingFilter()
_REPEATS = RepeatFilter()


def register_settings_secrets(settings: Settings) -> None:
    """Every secret setting (webhook secret, App key, LLM key, dashboard token) is redacted."""
    if settings.private_key is not None or settings.private_key_path is not None:
        with contextlib.suppress(OSError):  # a key file that vanished fails start-up elsewhere
            register_secret(settings.app_private_key())
    for secret in (settings.webhook_secret, settings.webhook_secret_previous, settings.llm_api_key,
                   settings.dashboard_token):
        if secret is not None:
            register_secret(secret.get_secret_value())


def install_filter(logger: logging.Logger | None = None) -> None:
    """Attach the redaction filter to every handler of `logger` (default: the root logger)."""
    for handler in (logger or logging.getLogger()).handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)


def setup_logging(settings: Settings | None = None, *, level: int = logging.INFO,
                  capture_stderr: bool = False) -> None:
    """Standard logging to stderr with every handler of every logger redacting and repeated
    warnings held back (bot/observability/outages.py); idempotent. With `capture_stderr` (a
    worker writing JSON), what bypasses logging on stderr is logged too."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(format=LOG_FORMAT)
    root.setLevel(level)
    if settings is not None:
        register_settings_secrets(settings)
        if settings.log_format == "json":
            use_json_lines(root)
            if capture_stderr and not isinstance(sys.stderr, StderrToLog):
                sys.stderr = StderrToLog(logging.getLogger("stderr"))  # handlers keep the real one
    install_filter(root)
    for handler in root.handlers:
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(_REPEATS)
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and logger.handlers:
            install_filter(logger)


def uvicorn_log_config(*, json_lines: bool = False) -> dict[str, Any]:
    """uvicorn's own logging config with the redaction filter on each of its handlers."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact"] = {"()": RedactingFilter}
    for handler in config.get("handlers", {}).values():
        handler["filters"] = [*handler.get("filters", []), "redact"]
    return json_uvicorn_config(config) if json_lines else config


__all__ = ["install_filter", "register_settings_secrets", "setup_logging", "uvicorn_log_config"]
