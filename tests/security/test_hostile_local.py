"""The hostile repository through the real engine and bubblewrap (local mode, server-like layout).

The repository lives under a `workdir` that is hidden like STEPWISE_WORKDIR in server mode,
next to another job's clone; a fake App key file outside it is hidden too.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from jobs.adapters.sandbox import BubblewrapSandbox
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.local_e2e import Recorder, session, show
from tests.kit.repos import git, make_repo
from tests.security import hostile

pytestmark = hostile.needs_bwrap
FAKE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAhostileTestKeyMaterial0123456789\n"
            "-----END RSA PRIVATE KEY-----\n")


@dataclass
class Layout:
    workdir: Path
    repo: Path
    key: Path
    targets: hostile.Targets


@pytest.fixture
def layout(outside_tmp: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    token, marker = hostile.new_token(), f"env-marker-{uuid.uuid4().hex}"
    # Secrets in the engine's own environment must not reach the commands either.
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("STEPWISE_WEBHOOK_SECRET", marker)
    workdir = outside_tmp / "work"
    repo = workdir / "repos" / "octo" / "hostile"
    other = workdir / "repos" / "octo" / "other"
    key = outside_tmp / "keys" / "app.pem"
    key.parent.mkdir()
    key.write_text(FAKE_KEY)
    (outside_tmp / "checkout").mkdir()
    tag = f"hostile-daemon-{uuid.uuid4().hex}"
    home_file = Path.home() / f"pwned-{tag}"
    try:
        with hostile.victim_process(marker, token) as victim:
            targets = hostile.Targets(
                key_path=str(key), other_clone=str(other),
                other_secret=str(hostile.make_other_clone(other, marker)),
                git_config=str(repo / ".git" / "config"),
                redis_port=int(urlsplit(redis_url).port or 6379), outside_host="10.255.255.1",
                victim_pid=victim, env_marker=marker, token=token,
                pem_body=hostile.FAKE_PEM_BODY,
                checkout_file=str(outside_tmp / "checkout" / f"pwned-{tag}"),
                home_file=str(home_file), clone_file=str(repo / f"pwned-{tag}"), daemon_tag=tag,
            )
            make_repo(repo, hostile.repo_files(targets))
            # Worst case: a credential left in the clone's git config must stay unreadable.
            git(repo, "remote", "add", "origin",
                f"https://x-access-token:{token}@github.com/octo/hostile.git")
            yield Layout(workdir, repo, key, targets)
    finally:
        hostile.kill_all(hostile.processes_with(tag))
        home_file.unlink(missing_ok=True)


def test_every_attack_of_the_hostile_repository_fails_and_the_record_shows_it(
    layout: Layout,
) -> None:
    sink = Recorder()
    local = session(layout.repo, hostile.NUMBER, sink)
    local.services.sandbox = BubblewrapSandbox()
    local.services.hidden_paths = (layout.workdir, layout.key)
    outcome = local.run(parse_issue_file(hostile.issue_markdown()), yes=True)
    job = local.load()
    assert outcome.exit_code == 0 and job.status is JobStatus.COMPLETED, outcome.message

    # The record holds the evidence: the baseline's validation, the codemod and the validation.
    batch = job.batches[0]
    assert batch.status is BatchStatus.COMPLETED and batch.commit
    codemod, validation = batch.attempts[-1].commands
    key_digest = hashlib.sha256(layout.key.read_bytes()).hexdigest()[:16]
    hostile.assert_evidence(job.baseline[0], codemod, validation, layout.targets,
                            key_digest=key_digest)

    # The token never reached the record, the publications or the change note.
    token = layout.targets.token
    state = (layout.repo / ".git" / "stepwise" / f"issue-{hostile.NUMBER}.json").read_text()
    assert token not in state and hostile.FAKE_PEM_BODY not in state
    assert all(token not in text for _, text in sink.seen)
    assert token not in show(layout.repo, job.branch, job.note_path)
    # The edit itself went through: what was validated was committed.
    assert "NEW_NAME" in show(layout.repo, job.branch, "src/app.py")
