"""A failed validation's evidence on a real repository in local mode: the whole output (not
only the tail the gate shows) and the attempted diff are kept under the job's artifacts,
redacted, and the failure gate, `status` and the change note name them."""

from __future__ import annotations

from pathlib import Path

from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    assert_exit,
    build_sample,
    config_text,
    issue,
    load_job,
    session,
    show,
)

TOKEN = "ghp_" + "a1B2" * 9  # what a careless test prints: never kept as is
NOISY = ("python -c \"print('START-OF-LOG " + TOKEN + "'); [print('noise', i) for i in "
         "range(2000)]; import calc.beta.total as t; t.total()\"")


def test_a_failed_attempt_keeps_its_whole_output_and_diff(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", broken=True, config=config_text(
        validate=[NOISY], batch_size=1, batches_per_milestone=6))
    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    batch = job.batch(job.gate.batch or 0)
    assert batch.files == [BROKEN_MODULE]
    attempt = batch.attempts[-1]
    folder = f".git/stepwise/artifacts/issue-7/attempts/{batch.number}-{attempt.number}"
    assert attempt.artifacts == [f"{folder}/output.log", f"{folder}/attempt.diff"]

    log = (repo / folder / "output.log").read_text()
    assert "START-OF-LOG" in log and "noise 1999" in log and "NameError" in log
    assert "START-OF-LOG" not in attempt.commands[-1].output_tail  # the tail alone lost it
    assert TOKEN not in log and "[redacted]" in log
    assert log.startswith("$ python -c ") and log.rstrip().endswith("[exit 1]")
    diff = (repo / folder / "attempt.diff").read_text()
    assert f"+++ b/{BROKEN_MODULE}" in diff and "+    return new_sum(1, 2, 3, 4)" in diff

    shown = f"Full output: `{folder}/output.log`; the attempted diff: `{folder}/attempt.diff`"
    assert shown in outcome.message  # the failure gate
    card, _ = session(repo).status()
    message = session(repo).status()[1].message
    assert shown in card + message  # status
    session(repo).verb(Verb.SKIP, reason="needs a manual import fix")
    note = show(repo, job.branch, load_job(repo).note_path)
    assert f"- batch {batch.number}, attempt {attempt.number}: `{folder}/output.log`, " \
        f"`{folder}/attempt.diff`" in note
