"""Settings refused at start with the fix, never a traceback later: a Redis URL whose password
holds a character URLs reserve (unencoded), and an App private key that is not a PEM key. Real
`stepwise serve`, `stepwise worker` and `stepwise worker --check` processes; the encoded
password then works against a real redis-server that requires it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import STEPWISE, base_env, stepwise_serve

PASSWORD = "s3/cr#t?p@ss%w:rd"
pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def started(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The process's exit, its stderr with the terminal's line wrapping undone."""
    done = subprocess.run([str(STEPWISE), *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    done.stderr = " ".join(done.stderr.split())
    return done


@pytest.mark.parametrize("password", ["pa/ss", "pa#ss", "pa?ss", "a/b/c", PASSWORD])
def test_an_unencoded_reserved_character_in_the_redis_password_is_refused_at_start(
        tmp_path: Path, password: str) -> None:
    env = base_env(f"redis://:{password}@127.0.0.1:6379/0", tmp_path / "work",
                   STEPWISE_APP_ID="1", STEPWISE_PRIVATE_KEY="unused")
    for args in (("serve",), ("worker",), ("worker", "--check")):
        done = started(env, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "STEPWISE_REDIS_URL" in done.stderr and "percent-encode the password" in \
            done.stderr, done.stderr
        assert "Traceback" not in done.stderr and password not in done.stderr


def test_the_encoded_password_reaches_redis(tmp_path: Path) -> None:
    with running_redis(password=PASSWORD) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        encoded = f"redis://:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/0"
        with stepwise_serve(base_env(encoded, tmp_path / "work"), tmp_path / "web.log") as web:
            assert httpx.get(f"{web}/healthz", timeout=5).json()["redis"] == "ok"


@pytest.mark.parametrize("key", ["not a key", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n"
                                 "-----END RSA PRIVATE KEY-----", "cut"])
def test_a_malformed_app_key_stops_the_worker_and_fails_its_check(tmp_path: Path,
                                                                 key: str) -> None:
    with FakeGitHub(root=tmp_path / "github") as gh:
        pem = gh.private_key_pem[: len(gh.private_key_pem) // 2] if key == "cut" else key
        env = base_env("redis://127.0.0.1:6379/0", tmp_path / "work",
                       STEPWISE_APP_ID=str(gh.app_id), STEPWISE_PRIVATE_KEY=pem)
        for args in (("worker",), ("worker", "--check")):
            done = started(env, *args)
            assert done.returncode == 2, (args, done.stderr)
            assert "STEPWISE_PRIVATE_KEY: not a PEM private key" in done.stderr, done.stderr
            assert "-----BEGIN line" in done.stderr and "Traceback" not in done.stderr
        good = base_env("redis://127.0.0.1:6379/0", tmp_path / "work",
                        STEPWISE_APP_ID=str(gh.app_id), STEPWISE_PRIVATE_KEY=gh.private_key_pem)
        assert "not a PEM private key" not in started(good, "worker", "--check").stderr
