"""The record of commits by people (jobs/kernel/human_commits.py): GitHub logins read from
noreply addresses, records written before the field existed still load, and the note's section
keeps a hostile subject literal."""

from __future__ import annotations

from jobs.kernel.human_commits import HumanCommit, commits_by_people_lines, login_from_email
from jobs.kernel.job import Job
from tests.kit.records import make_job


def test_login_comes_only_from_githubs_noreply_addresses() -> None:
    assert login_from_email("12345+ada-l@users.noreply.github.com") == "ada-l"
    assert login_from_email("ada@users.noreply.github.com") == "ada"
    assert login_from_email("ada@example.com") == ""
    assert login_from_email("12345+ada@users.noreply.github.com.evil.io") == ""


def test_an_older_record_without_the_field_still_loads() -> None:
    stored = make_job().model_dump(mode="json")
    stored.pop("human_commits")
    assert Job.model_validate(stored).human_commits == []
    with_one = make_job()
    with_one.human_commits.append(HumanCommit(sha="a" * 40, subject="x", files=["f"]))
    again = Job.model_validate(with_one.model_dump(mode="json"))
    assert again.human_commits == with_one.human_commits


def test_the_note_section_keeps_a_hostile_subject_literal() -> None:
    commit = HumanCommit(sha="b" * 40, author="Mallory", subject="@org/team see #1 <b>x</b>",
                         files=[f"f{i}" for i in range(25)])
    [_, title, _, line] = commits_by_people_lines([commit])
    assert title == "## Commits by people" and line.startswith("- `bbbbbbb` ")
    assert "<b>" not in line and "@org/team" not in line  # escaped, mentions neutralised
    assert "and 5 more" in line and "by Mallory" in line
    kept = HumanCommit(sha="b" * 40, files=["a"], more_files=300)  # the rest counted, not kept
    assert commits_by_people_lines([kept])[-1].endswith("files: `a` and 300 more")
    assert commits_by_people_lines([]) == []
    assert HumanCommit(sha="c" * 40).by == "unknown"
    assert HumanCommit(sha="c" * 40, login="ada").by == "@ada"
