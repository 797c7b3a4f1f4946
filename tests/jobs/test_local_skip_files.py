"""Nothing good is lost (local mode, the real CLI): `skip --files` sets only the named files of
the paused batch aside and commits the rest; a plain `skip` names the files it leaves."""

from __future__ import annotations

from pathlib import Path

from jobs.kernel.model import BatchStatus, Gate
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    build_sample,
    cli,
    config_text,
    load_job,
    show,
    write_issue,
)


def test_skip_files_sets_the_named_files_aside_and_runs_the_rest(tmp_path: Path) -> None:
    # Every batch diff is over max_batch_lines: batch 1 (two files) waits at large_change.
    repo = build_sample(tmp_path / "repo", config=config_text(max_batch_lines=1))
    issue = write_issue(tmp_path / "issue.md")
    first = cli("run", "--repo", repo, "--issue", issue, "--yes")
    assert first.code == 3, first.text
    job = load_job(repo, 1)
    assert job.gate is not None and job.gate.kind is Gate.LARGE_CHANGE and job.gate.batch == 1
    assert job.batch(1).files == ["calc/alpha/area.py", "calc/alpha/perimeter.py"]
    total = len(job.batches)

    done = cli("skip", "--repo", repo, "--files", "calc/alpha/area.py", "kept for a later PR")
    assert done.code == 3, done.text
    assert (f"batch 1: calc/alpha/area.py skipped as batch {total + 1} (kept for a later PR); "
            "the other 1 file(s) run again") in " ".join(done.out.split())
    job = load_job(repo, 1)
    aside = job.batch(total + 1)
    assert aside.status is BatchStatus.SKIPPED and aside.files == ["calc/alpha/area.py"]
    assert "kept for a later PR (set aside from batch 1)" in aside.reason
    assert job.batch(1).files == ["calc/alpha/perimeter.py"]
    assert job.gate is not None and job.gate.batch == 1  # the rest ran again (still large)

    assert cli("approve", "--repo", repo).code == 3  # batch 1, now one file, is committed
    job = load_job(repo, 1)
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert "old_sum(" in show(repo, job.branch, "calc/alpha/area.py")
    assert "new_sum(" in show(repo, job.branch, "calc/alpha/perimeter.py")

    refused = cli("skip", "--repo", repo, "--files", "calc/nowhere.py", "why")
    assert refused.code == 2 and "names no file of the paused batch" in refused.err


def test_a_plain_skip_names_the_files_it_leaves(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", broken=True)
    issue = write_issue(tmp_path / "issue.md")
    assert cli("run", "--repo", repo, "--issue", issue, "--yes").code == 4
    paused = load_job(repo, 1).gate
    assert paused is not None and paused.batch is not None
    files = ", ".join(load_job(repo, 1).batch(paused.batch).files)
    assert BROKEN_MODULE in files
    done = cli("skip", "--repo", repo, "calc", "is", "being", "rewritten")
    assert (f"batch {paused.batch} skipped: calc is being rewritten (its files are left "
            f"unchanged: {files})") in " ".join(done.out.split()), done.text
    assert load_job(repo, 1).batch(paused.batch).status is BatchStatus.SKIPPED
