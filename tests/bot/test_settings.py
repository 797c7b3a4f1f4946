"""Server settings: a missing or malformed one stops start-up with its name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)

from bot.settings import SettingsError, load_settings

STEPWISE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "stepwise"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for key in list(os.environ):
        if key.startswith("STEPWISE_"):
            monkeypatch.delenv(key)
    return monkeypatch


def test_missing_settings_are_named(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "STEPWISE_APP_ID" in caught.value.message
    assert "STEPWISE_WEBHOOK_SECRET" in caught.value.message


def test_malformed_values_are_named(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("STEPWISE_APP_ID", "twelve")
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "s")
    clean_env.setenv("STEPWISE_PRIVATE_KEY_PATH", str(tmp_path / "missing.pem"))
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "STEPWISE_APP_ID" in caught.value.message


def test_a_key_path_that_is_not_a_file_is_refused(clean_env: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    clean_env.setenv("STEPWISE_APP_ID", "12")
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "s")
    clean_env.setenv("STEPWISE_PRIVATE_KEY_PATH", str(tmp_path / "missing.pem"))
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "STEPWISE_PRIVATE_KEY_PATH" in caught.value.message


def test_valid_settings_load_and_hide_secrets(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STEPWISE_APP_ID", "12")
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "very-secret")
    clean_env.setenv("STEPWISE_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----")
    clean_env.setenv("STEPWISE_GITHUB_API_URL", "https://ghe.example/api/v3")
    settings = load_settings()
    assert settings.app_id == 12 and settings.github_api_url == "https://ghe.example/api/v3"
    assert "very-secret" not in repr(settings) and "very-secret" not in str(settings)


@pytest.mark.parametrize(("command", "needed", "not_needed"), [
    ("worker", ("STEPWISE_APP_ID", "STEPWISE_PRIVATE_KEY"), "STEPWISE_WEBHOOK_SECRET"),
    ("serve", ("STEPWISE_WEBHOOK_SECRET",), "STEPWISE_PRIVATE_KEY"),
])
def test_server_commands_exit_2_naming_the_missing_setting(
        command: str, needed: tuple[str, ...], not_needed: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPWISE_")}
    done = subprocess.run([str(STEPWISE), command], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    for name in needed:
        assert name in done.stderr
    assert not_needed not in done.stderr  # each role asks only for what it uses


def test_the_web_app_needs_no_app_key_and_workers_no_webhook_secret(
        clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "s3cret")
    web = load_settings("web")
    assert web.webhook_secrets() == ("s3cret",)
    with pytest.raises(SettingsError) as caught:
        web.app_credentials()  # nothing in the web app asks for it
    assert "STEPWISE_APP_ID" in caught.value.message
    clean_env.delenv("STEPWISE_WEBHOOK_SECRET")
    clean_env.setenv("STEPWISE_APP_ID", "7")
    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        Encoding.PEM, PrivateFormat.TraditionalOpenSSL, NoEncryption()).decode()
    clean_env.setenv("STEPWISE_PRIVATE_KEY", pem)
    worker = load_settings("worker")  # a worker's key must be a PEM key (checked at start)
    assert worker.app_credentials() == (7, pem)
    with pytest.raises(SettingsError) as caught:
        load_settings("web")
    assert "STEPWISE_WEBHOOK_SECRET" in caught.value.message
    assert "STEPWISE_APP_ID" not in caught.value.message


def test_a_previous_webhook_secret_is_accepted_after_the_current_one(
        clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "new-secret")
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET_PREVIOUS", "old-secret")
    settings = load_settings("web")
    assert settings.webhook_secrets() == ("new-secret", "old-secret")
    assert "old-secret" not in repr(settings)


def test_redis_timeouts_and_the_dequeue_timeout_are_settings(clean_env: pytest.MonkeyPatch) -> None:
    from bot.plumbing.connections import dequeue_redis, web_redis, worker_redis

    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "s")
    clean_env.setenv("STEPWISE_REDIS_SOCKET_TIMEOUT_S", "2.5")
    clean_env.setenv("STEPWISE_WEB_REDIS_DEADLINE_S", "1.5")
    clean_env.setenv("STEPWISE_DEQUEUE_TIMEOUT_S", "60")
    settings = load_settings("web")
    web = web_redis(settings).connection_pool.connection_kwargs
    own = worker_redis(settings).connection_pool.connection_kwargs
    blocking = dequeue_redis(settings).connection_pool.connection_kwargs
    # The web app's calls fit in its request deadline, connecting included, and are not retried.
    assert web["socket_timeout"] == 1.5 and web["socket_connect_timeout"] == 1.5
    assert web["retry"].get_retries() == 0
    assert own["socket_timeout"] == 2.5 and own["socket_connect_timeout"] == 5.0
    assert blocking["socket_timeout"] > 60  # the blocking wait never trips its own timeout
    clean_env.setenv("STEPWISE_DEQUEUE_TIMEOUT_S", "0")
    with pytest.raises(SettingsError) as caught:
        load_settings("web")
    assert "STEPWISE_DEQUEUE_TIMEOUT_S" in caught.value.message


def test_the_github_api_version_defaults_to_the_one_ghes_serves(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STEPWISE_APP_ID", "1")
    clean_env.setenv("STEPWISE_WEBHOOK_SECRET", "s")
    clean_env.setenv("STEPWISE_PRIVATE_KEY", "pem")
    assert load_settings().github_api_version == "2022-11-28"
    clean_env.setenv("STEPWISE_GITHUB_API_VERSION", "2026-03-10")
    assert load_settings().github_api_version == "2026-03-10"
    clean_env.setenv("STEPWISE_GITHUB_API_VERSION", "2024-01-01")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "STEPWISE_GITHUB_API_VERSION" in caught.value.message and "2022-11-28" in caught.value.message
