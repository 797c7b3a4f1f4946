"""Local commits are the person's (issue 41.8): author and committer are the git identity `git
commit` would use (GIT_AUTHOR_*/GIT_COMMITTER_* in the environment, then the checkout's, then
the global configuration), so DCO and CLA checks accept them; the trailers stay. Without an
identity the job is refused before anything is made, naming the fix. `signoff: true` ends every
commit (batches and the note) with the committer's Signed-off-by line. Driven through the real
`stepwise run`."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import (
    NUMBER,
    branch_commits,
    build_sample,
    cli,
    config_text,
    load_job,
    state_path,
    stepwise_branches,
    write_issue,
)
from tests.kit.repos import OWNER_EMAIL, OWNER_NAME, git

IDENTITY = "%an <%ae> / %cn <%ce>"


def identities(repo: Path) -> list[str]:
    """Author and committer of every commit on the job branch (batches and the note)."""
    job = load_job(repo)
    return [git(repo, "log", "-1", f"--format={IDENTITY}", c.sha)
            for c in branch_commits(repo, job)]


def run(repo: Path, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    issue = write_issue(tmp_path / "issue.md")
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes",
               env=env)
    assert done.code == 0, done.text
    return done.out


def no_global(tmp_path: Path) -> dict[str, str]:
    """An environment in which git finds no global or system configuration."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "", "EMAIL": ""}


def test_commits_are_made_as_the_checkouts_identity(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    run(repo, tmp_path)
    me = f"{OWNER_NAME} <{OWNER_EMAIL}>"
    commits = branch_commits(repo, load_job(repo))
    assert len(commits) == 4  # three batches and the note
    assert identities(repo) == [f"{me} / {me}"] * 4
    assert all("Stepwise-Job" in c.trailers for c in commits)
    assert "stepwise-bot" not in git(repo, "log", "--format=%an%ae%cn%ce", "--all")


def test_the_environment_and_the_global_config_count_as_git_commit_counts_them(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    env = no_global(tmp_path)
    (Path(env["HOME"]) / ".gitconfig").write_text(
        "[user]\n\tname = Grace Hopper\n\temail = grace@example.org\n")
    env |= {"GIT_COMMITTER_NAME": "Build Box", "GIT_COMMITTER_EMAIL": "box@example.org"}
    run(repo, tmp_path, env)
    assert set(identities(repo)) == {"Grace Hopper <grace@example.org> / "
                                     "Build Box <box@example.org>"}


def test_without_an_identity_the_job_is_refused_naming_the_fix(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    issue = write_issue(tmp_path / "issue.md")
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes",
               env=no_global(tmp_path))
    assert done.code == 2, done.text
    said = " ".join(done.err.split())
    assert ("git has no identity to commit as here (user.name and user.email are not set); "
            "Stepwise commits as you, as `git commit` would") in said
    assert ("set it once: `git config --global user.name 'Your Name'` and "
            "`git config --global user.email you@example.com`") in said
    assert stepwise_branches(repo) == [] and not state_path(repo).exists()


def test_signoff_ends_every_commit_with_the_committers_line(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(signoff=True))
    run(repo, tmp_path)
    job = load_job(repo)
    commits = branch_commits(repo, job)
    assert len(commits) == 4
    for commit in commits:
        message = git(repo, "log", "-1", "--format=%B", commit.sha)
        assert message.splitlines()[-1] == f"Signed-off-by: {OWNER_NAME} <{OWNER_EMAIL}>"
        assert "Stepwise-Job" in commit.trailers  # the trailers stay, in the same block
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Signed-off-by)", commits[0].sha)
    assert trailers == f"Signed-off-by: {OWNER_NAME} <{OWNER_EMAIL}>"


def test_the_demo_runs_where_git_has_no_identity(tmp_path: Path) -> None:
    """`stepwise demo` makes its own sample repository: without an identity on the machine it
    gives that repository one, so a newcomer's first command works."""
    done = cli("demo", "--dir", tmp_path / "demo", env=no_global(tmp_path))
    assert done.code == 0, done.text
    repo = tmp_path / "demo" / "shelf"
    assert git(repo, "config", "user.email") == "demo@stepwise.invalid"
    branch = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/stepwise/")
    assert git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>", branch) == (
        "Stepwise demo <demo@stepwise.invalid> / Stepwise demo <demo@stepwise.invalid>")
