"""Redaction: what it replaces, what it leaves alone, the log filter, and where it is applied."""

from __future__ import annotations

import io
import logging
import logging.config
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.github.app import GitHubApp
from bot.github.forge import GitHubForge
from bot.observability.logs import install_filter, setup_logging, uvicorn_log_config
from bot.settings import Settings
from jobs.adapters.sandbox import CommandResult
from jobs.basics.redact import REDACTED, RedactingFilter, clear_secrets, redact, register_secret
from jobs.kernel.records import command_evidence
from tests.kit.github import FakeGitHub

TOKEN = "ghs_" + "A1b2C3d4E5" * 3 + "F6g7H8"  # ghs_ and 36 characters
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAsecretKeyLine1\nsecretKeyLine2==\n"
       "-----END RSA PRIVATE KEY-----")


@pytest.fixture(autouse=True)
def _no_registered_secrets() -> Iterator[None]:
    clear_secrets()
    yield
    clear_secrets()


@pytest.mark.parametrize(("text", "expected"), [
    (f"token {TOKEN} end", f"token {REDACTED} end"),
    (f"GITHUB_TOKEN={TOKEN}", f"GITHUB_TOKEN={REDACTED}"),
    ("ghp_" + "x" * 40, REDACTED),
    ("gho_" + "Z9" * 18, REDACTED),
    ("ghu_" + "a" * 36 + " ghr_" + "b" * 36, f"{REDACTED} {REDACTED}"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH", REDACTED),
    ("https://x-access-token:v1.abc123@github.com/o/r.git",
     f"https://{REDACTED}@github.com/o/r.git"),
    ("remote: https://user:hunter2@example.com/x", f"remote: https://{REDACTED}@example.com/x"),
    ("-c http.extraHeader=Authorization: Basic eC1hY2Nlc3M6dG9r=", f"-c http.extraHeader="
     f"Authorization: Basic {REDACTED}"),
    ('{"authorization": "Bearer abc.def-ghi"}', f'{{"authorization": "Bearer {REDACTED}"}}'),
    ("Authorization: token 0123456789abcdef", f"Authorization: token {REDACTED}"),
    (f"before\n{PEM}\nafter", f"before\n{REDACTED}\nafter"),
    ("-----BEGIN PRIVATE KEY-----\nMIIE cut by the tail", REDACTED),  # no END: to the end
    ("MIIEcutAtTheStart\nabc==\n-----END EC PRIVATE KEY-----\nok", f"{REDACTED}\nok"),
])
def test_secrets_are_replaced(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "ghs_tooShort123", "see https://github.com/o/r/pull/1", "Authorization required",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "git@github.com:o/r.git",
    "http://localhost:8000/path@v1", "a plain sentence: with colons", "",
])
def test_near_misses_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_configured_secrets_are_replaced_exactly_and_short_ones_ignored() -> None:
    register_secret("webhook-s3cret")
    register_secret("abc")  # shorter than 6: would redact ordinary words
    register_secret(PEM)  # each line of a multi-line secret counts on its own
    text = "x webhook-s3cret abc secretKeyLine2== y"
    assert redact(text) == f"x {REDACTED} abc {REDACTED} y"
    assert redact("only-here-123", secrets=["only-here-123"]) == REDACTED
    clear_secrets()
    assert redact("x webhook-s3cret") == "x webhook-s3cret"


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(before=st.text(max_size=50), after=st.text(max_size=50),
       body=st.text(alphabet="abcdefXYZ0189", min_size=36, max_size=60),
       prefix=st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]))
def test_a_token_never_survives_and_redaction_is_idempotent(before: str, after: str, body: str,
                                                            prefix: str) -> None:
    token = prefix + body
    once = redact(f"{before} {token} {after}")
    assert token not in once
    assert redact(once) == once


def test_redaction_is_fast_on_large_output() -> None:
    register_secret("a-configured-secret")
    text = ("ordinary build output line with https://example.com/x and numbers 12345\n" * 15_000
            + TOKEN)  # about 1 MB
    started = time.perf_counter()
    cleaned = redact(text)
    assert time.perf_counter() - started < 1.0
    assert cleaned.endswith(REDACTED)


# -- where it is applied ---------------------------------------------------------------------
def test_command_evidence_redacts_the_output_tail() -> None:
    result = CommandResult(("python", "-c", "x"), 1, 0.1, f"oops {TOKEN}\n{PEM}", 5, False, True)
    evidence = command_evidence(result)
    assert TOKEN not in evidence.output_tail and "secretKeyLine" not in evidence.output_tail
    assert evidence.output_tail.startswith(f"oops {REDACTED}")


def test_comments_and_pull_bodies_sent_to_github_are_redacted(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        issue = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        forge = GitHubForge(client, "octo/widgets")
        forge.reply(None, issue, "", f"a reply quoting {TOKEN}")
        bodies = [c.body for c in gh.comments_on("octo/widgets", issue)]
    assert bodies == [f"a reply quoting {REDACTED}"]


# -- the log filter --------------------------------------------------------------------------
def capture(logger_name: str) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s %(job)s"))
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger(logger_name)
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, stream


def test_the_filter_redacts_messages_args_extras_and_tracebacks() -> None:
    logger, stream = capture("stepwise.test.redact")
    logger.info("pushing with %s", f"Authorization: Bearer {TOKEN}", extra={"job": TOKEN})
    try:
        raise RuntimeError(f"git failed: https://x-access-token:{TOKEN}@github.com/o/r")
    except RuntimeError:
        logger.exception("step failed", extra={"job": "j1"})
    text = stream.getvalue()
    assert TOKEN not in text
    assert f"pushing with Authorization: Bearer {REDACTED} {REDACTED}" in text
    assert "RuntimeError: git failed: https://[redacted]@github.com/o/r" in text


def test_the_filter_keeps_args_for_formatters_that_read_them() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                               '%s - "%s %s HTTP/%s" %d', ("127.0.0.1", "GET",
                               f"/x?token={TOKEN}", "1.1", 200), None)
    assert RedactingFilter().filter(record)
    assert isinstance(record.args, tuple) and record.args[2] == f"/x?token={REDACTED}"
    clean = logging.LogRecord("x", logging.INFO, __file__, 1, "nothing %s", ("here",), None)
    RedactingFilter().filter(clean)
    assert clean.args == ("here",) and clean.msg == "nothing %s"


@pytest.fixture
def root_logging() -> Iterator[logging.Logger]:
    """Restore the root logger's handlers, their filters and its level afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), {h: list(h.filters) for h in root.handlers}, root.level)
    yield root
    for handler in root.handlers:
        if handler not in saved[0]:
            root.removeHandler(handler)
        else:
            handler.filters = saved[1][handler]
    root.setLevel(saved[2])


def test_setup_logging_registers_the_settings_secrets_and_filters_every_root_handler(
    root_logging: logging.Logger, tmp_path: Path,
) -> None:
    key = tmp_path / "app.pem"
    key.write_text(PEM + "\n")
    stream = io.StringIO()
    root_logging.addHandler(logging.StreamHandler(stream))
    settings = Settings(app_id=1, private_key_path=key, webhook_secret="the-webhook-secret",
                        llm_api_key="sk-llm-secret-key", dashboard_token="dash-token-123")
    setup_logging(settings)
    assert all(any(isinstance(f, RedactingFilter) for f in h.filters)
               for h in root_logging.handlers)
    logging.getLogger("stepwise.test.root").warning(
        "leak the-webhook-secret sk-llm-secret-key dash-token-123 secretKeyLine2==")
    assert stream.getvalue().strip() == " ".join(["leak", *[REDACTED] * 4])
    install_filter()  # idempotent: still one filter per handler
    assert all(sum(isinstance(f, RedactingFilter) for f in h.filters) == 1
               for h in root_logging.handlers)


def test_uvicorn_handlers_get_the_filter() -> None:
    config = uvicorn_log_config()
    assert config["filters"]["redact"]["()"] is RedactingFilter
    assert all("redact" in handler["filters"] for handler in config["handlers"].values())
    logging.config.dictConfig(config)
    for name in ("uvicorn.error", "uvicorn.access"):
        handlers = logging.getLogger(name).handlers or logging.getLogger("uvicorn").handlers
        assert all(any(isinstance(f, RedactingFilter) for f in h.filters) for h in handlers)
