"""Server settings: a missing or malformed one stops start-up with its name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("command", ["worker", "serve"])
def test_server_commands_exit_2_naming_the_missing_setting(command: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPWISE_")}
    done = subprocess.run([str(STEPWISE), command], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert "STEPWISE_APP_ID" in done.stderr


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
