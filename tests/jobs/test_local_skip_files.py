"""Nothing good is lost (local mode, the real CLI): a `replace` batch whose validation fails is
not retried by itself; `skip --files` sets only the culprit aside and commits the rest of the
batch; a plain `skip` names the files it leaves."""

from __future__ import annotations

from pathlib import Path

from jobs.domain.model import BatchStatus, Gate
from tests.kit.local_e2e import BROKEN_MODULE, build_sample, cli, load_job, show, write_issue


def test_skip_files_sets_the_culprit_aside_and_commits_the_rest(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", broken=True)
    issue = write_issue(tmp_path / "issue.md")
    first = cli("run", "--repo", repo, "--issue", issue, "--yes")
    assert first.code == 4, first.text
    job = load_job(repo, 1)
    failed = job.batch(2)
    assert failed.files == ["calc/beta/score.py", BROKEN_MODULE]
    assert len(failed.attempts) == 1  # not retried: a replace edits the same way every time
    assert "would fail the same way again, so it is not retried" in first.out

    done = cli("skip", "--repo", repo, "--files", BROKEN_MODULE, "imports old_sum by name")
    assert done.code in (0, 3), done.text
    assert f"batch 2: {BROKEN_MODULE} skipped as batch 4 (imports old_sum by name)" in done.out
    job = load_job(repo, 1)
    kept, aside = job.batch(2), job.batch(4)
    assert kept.status is BatchStatus.COMPLETED and kept.files == ["calc/beta/score.py"]
    assert aside.status is BatchStatus.SKIPPED and aside.files == [BROKEN_MODULE]
    assert "imports old_sum by name (set aside from batch 2)" in aside.reason
    assert "new_sum(" in show(repo, kept.commit or "", "calc/beta/score.py")
    assert "old_sum(" in show(repo, job.branch, BROKEN_MODULE)


def test_a_plain_skip_names_the_files_it_leaves(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", broken=True)
    issue = write_issue(tmp_path / "issue.md")
    assert cli("run", "--repo", repo, "--issue", issue, "--yes").code == 4
    done = cli("skip", "--repo", repo, "calc", "is", "being", "rewritten")
    assert "batch 2 skipped: calc is being rewritten (its files are left unchanged: " \
        f"calc/beta/score.py, {BROKEN_MODULE})" in " ".join(done.out.split()), done.text
    job = load_job(repo, 1)
    assert job.batch(2).status is BatchStatus.SKIPPED
    assert job.gate is None or job.gate.kind is not Gate.FAILURE
