"""Redaction: GitHub tokens, credentials in URLs and headers, private keys and configured secrets.

`redact(text)` is pure apart from the process-wide registry of secrets that `register_secret`
fills at start-up (the webhook secret, the App key, the LLM key, the dashboard token); every
user-visible string (command output tails, comments, PR bodies) and every log record passes
through it. The patterns are compiled once; the registry's pattern is rebuilt only when it grows.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Iterable

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter configured values would redact ordinary words

# ghp_/gho_/ghu_/ghs_/ghr_ tokens (36+ characters after the prefix) and fine-grained PATs.
_GITHUB_TOKEN = r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"  # noqa: S105 - a pattern
# `https://x-access-token:TOKEN@host` and any other `user:password@` userinfo of a URL.
_URL_USERINFO = r"(?<=://)[^\s/@:]*:[^\s/@]+(?=@)"
# The credential after an Authorization header name (as a header, a git -c value or JSON).
_AUTH_HEADER = re.compile(
    r"(?P<keep>authorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)\s+)[A-Za-z0-9+/=._~-]+",
    re.IGNORECASE,
)
# A PEM private key: the whole block, or what is left of it when a tail cut it in two.
_PEM_BLOCK = (
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    r"|\A[A-Za-z0-9+/=\s]*-----END[A-Z0-9 ]*PRIVATE KEY-----"
)
_WHOLE = re.compile(f"(?:{_PEM_BLOCK})|(?:{_GITHUB_TOKEN})", re.DOTALL)
_USERINFO = re.compile(_URL_USERINFO)
_QUICK = re.compile(r"gh[pousr]_|github_pat_|://|PRIVATE KEY|(?i:authorization)")

_lock = threading.Lock()
_registry: set[str] = set()
_registry_pattern: re.Pattern[str] | None = None


def _secret_pattern(values: Iterable[str]) -> re.Pattern[str] | None:
    usable = frozenset(v for v in values if len(v) >= MIN_SECRET_LENGTH and v not in REDACTED)
    return _compiled(usable) if usable else None


@functools.lru_cache(maxsize=64)
def _compiled(values: frozenset[str]) -> re.Pattern[str]:
    """One alternation of the secrets (longest first, so a secret inside another loses)."""
    return re.compile("|".join(map(re.escape, sorted(values, key=len, reverse=True))))


def register_secret(value: str | None) -> None:
    """Redact `value` (and each line of a multi-line value, e.g. a PEM key) everywhere from now on."""
    global _registry_pattern
    if not value:
        return
    parts = {value.strip(), *(line.strip() for line in value.splitlines())}
    fresh = {p for p in parts if len(p) >= MIN_SECRET_LENGTH} - _registry
    if not fresh:
        return
    with _lock:
        _registry.update(fresh)
        _registry_pattern = _secret_pattern(_registry)


def clear_secrets() -> None:
    """Forget every registered secret (for tests)."""
    global _registry_pattern
    with _lock:
        _registry.clear()
        _registry_pattern = None


def redact(text: str, *, secrets: Iterable[str] = ()) -> str:
    """`text` with tokens, URL credentials, Authorization values, private keys and secrets replaced."""
    if not text:
        return text
    extra = _secret_pattern(secrets) if secrets else None
    for pattern in (_registry_pattern, extra):
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
    if _QUICK.search(text) is None:
        return text
    text = _WHOLE.sub(REDACTED, text)
    text = _AUTH_HEADER.sub(rf"\g<keep>{REDACTED}", text)
    return _USERINFO.sub(REDACTED, text) if "://" in text else text


_STANDARD_ATTRS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class RedactingFilter(logging.Filter):
    """Redacts a record's message (formatted with its args), exception text and string extras.

    A record with nothing to redact is left as it is. Otherwise its string args are redacted
    one by one, which keeps formatters that read `args` (uvicorn's access log) working; when
    that is not enough (a secret built by the format string), the message is formatted,
    redacted and the args dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        self._message(record)
        if record.exc_info:
            formatter = logging.Formatter()
            record.exc_text = redact(record.exc_text or formatter.formatException(record.exc_info))
            record.exc_info = None  # no formatter may render the raw traceback again
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD_ATTRS and isinstance(value, str):
                setattr(record, key, redact(value))
        return True

    @staticmethod
    def _message(record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is, redacted
            record.msg, record.args = redact(f"{record.msg} {record.args}"), None
            return
        cleaned = redact(message)
        if cleaned == message:
            return
        if isinstance(record.msg, str) and record.args:
            args = record.args
            if isinstance(args, tuple):
                record.args = tuple(redact(a) if isinstance(a, str) else a for a in args)
            elif isinstance(args, dict):
                record.args = {k: redact(v) if isinstance(v, str) else v for k, v in args.items()}
            record.msg = redact(record.msg)
            try:
                if redact(again := record.getMessage()) == again:
                    return
            except Exception:  # noqa: S110 - fall through to the formatted message
                pass
        record.msg, record.args = cleaned, None


__all__ = ["REDACTED", "RedactingFilter", "clear_secrets", "redact", "register_secret"]
