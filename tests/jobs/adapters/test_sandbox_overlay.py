"""Sandboxed writes kept apart from a job's worktree (jobs/adapters/scratch.py), with real
bubblewrap, a real overlay and real git: nothing a validation command writes reaches the
files, even while it runs, and the reset after it checks only what Stepwise wrote; a codemod's
writes go through and the reset then proves the whole tree."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters import scratch
from jobs.adapters.sandbox import BubblewrapSandbox, PlainSandbox, SandboxPolicy
from jobs.adapters.workspace import Repository
from jobs.adapters.worktree import Worktree
from tests.conftest import RepoFactory
from tests.jobs.adapters.sandbox_kit import ATTEMPT, needs_bwrap, needs_overlay, py
from tests.jobs.adapters.test_worktree_reset import FILES, fresh, head, manifest
from tests.kit.repos import git

pytestmark = needs_bwrap


# Everything a hostile validation command may try on the files it is shown; each line prints
# what happened, so a failure says which write got through.
HOSTILE = ATTEMPT + r"""
host = sys.argv[1]
def keep_mtime():
    before = os.stat("src/app.py")
    open("src/app.py", "w").write("print('HI')\n")
    os.utime("src/app.py", ns=(before.st_atime_ns, before.st_mtime_ns))
attempt("tracked", keep_mtime)
attempt("mode", lambda: os.chmod("tool.sh", 0o644))
attempt("delete", lambda: os.unlink("src/deep/other.py"))
def swap():
    os.unlink("README.md")
    os.symlink("/etc/passwd", "README.md")
attempt("link", swap)
attempt("ignored", lambda: (os.makedirs("build/out"), open("build/out/x.o", "w").write("o")))
attempt("untracked", lambda: open("notes.txt", "w").write("n"))
attempt("planted", lambda: (os.makedirs("src/deep/.git"),
                            open("src/deep/.git/config", "w").write("[core]\n")))
attempt("hook", lambda: (os.makedirs(".git/hooks"), open(".git/hooks/pre-commit", "w").write("x")))
attempt("fifo", lambda: os.mkfifo("src/pipe"))
attempt("cwd", lambda: open("/proc/self/cwd/via-proc.txt", "w").write("p"))
attempt("host", lambda: open(os.path.join(host, "via-host.txt"), "w").write("h"))
attempt("private", lambda: open(host + ".git/hooks-planted", "w").write("h"))
attempt("umount", lambda: os.system("umount -l /tmp/stepwise/repo 2>/dev/null") and None)
attempt("after", lambda: open("after-umount.txt", "w").write("a"))
attempt("rmtree", lambda: __import__("shutil").rmtree("src"))  # a tracked directory, whole
"""


@pytest.fixture
def repo_path(repo_factory: RepoFactory) -> Path:
    path = repo_factory(FILES)
    git(path, "update-index", "--chmod=+x", "tool.sh")
    git(path, "commit", "-q", "-m", "executable tool")
    return path


@pytest.fixture
def kept(repo_path: Path, tmp_path: Path) -> Iterator[Worktree]:
    worktree = Repository(repo_path).open_worktree(tmp_path / "wt" / "issue-1", head(repo_path))
    yield worktree
    worktree.remove()


def policy(**kwargs: object) -> SandboxPolicy:
    return SandboxPolicy(allow_commands=("python3",), **kwargs)  # type: ignore[arg-type]


class GitCalls:
    """The git subcommands a worktree ran (its real `_process`, watched)."""

    def __init__(self, worktree: Worktree, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[str] = []
        real = worktree._process

        def watched(args, stdin=None, env=None):  # type: ignore[no-untyped-def]
            self.seen.extend(a for a in args if a in ("status", "checkout-index", "ls-tree"))
            return real(args, stdin, env)

        monkeypatch.setattr(worktree, "_process", watched)


@needs_overlay
def test_a_validation_command_writes_apart_and_the_reset_checks_only_what_stepwise_wrote(
        kept: Worktree, repo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where, sha = kept.path, head(repo_path)
    (where / "src/deep/mod.py").write_text("VALUE = 2\n")  # the edit, in Stepwise's process
    kept.stage_files(["src/deep/mod.py"])
    before = manifest(where)
    result = BubblewrapSandbox().run(py(HOSTILE, str(where)), cwd=where, policy=policy())
    assert result.exit_code == 0, result.output_tail
    said = dict(line.split(" ", 1) for line in result.output_tail.splitlines() if " " in line)
    for name in ("tracked", "mode", "delete", "link", "ignored", "untracked", "planted", "hook",
                 "fifo", "cwd", "rmtree"):
        assert said[name] == "done", (name, result.output_tail)  # the command saw its writes
    assert said["host"].startswith("refused") and said["private"].startswith("refused")
    assert manifest(where) == before  # ... and none reached the worktree, even before the reset
    again = BubblewrapSandbox().run(py("import os; print(open('notes.txt').read(), "
                                       "os.path.islink('README.md'))"), cwd=where, policy=policy())
    assert again.output_tail.split() == ["n", "True"]  # later commands of the batch see them
    assert scratch.read(kept.private) == {"src/deep/mod.py"}
    calls = GitCalls(kept, monkeypatch)
    kept.reset(sha)
    assert "status" not in calls.seen and "checkout-index" in calls.seen
    assert manifest(where) == fresh(Repository(repo_path), sha, tmp_path / "fresh")
    assert not (kept.private / scratch.SCRATCH).exists()
    assert git(repo_path, f"--git-dir={kept.private}", f"--work-tree={where}",
               "status", "--porcelain") == ""


@needs_overlay
def test_the_reset_after_a_batch_leaves_every_untouched_file_unread(
        kept: Worktree, repo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's own file is still the one Stepwise staged into its commit (the same stat
    data): no git at all, no checkout, no index write; the index's stat data of every other
    file stays valid, so git compares them by stat alone."""
    where, sha = kept.path, head(repo_path)
    (where / "src/app.py").write_text("print('changed')\n")
    kept.stage_files(["src/app.py"])
    commit = kept.commit_tree(kept.write_tree(), sha, "batch")
    index = kept.private / "index"
    stamp = index.stat().st_mtime_ns
    calls = GitCalls(kept, monkeypatch)
    kept.reset(commit)
    assert calls.seen == [] and index.stat().st_mtime_ns == stamp
    private = [f"--git-dir={kept.private}", f"--work-tree={where}"]
    assert git(repo_path, *private, "diff-files", "--name-only") in ("", "src/app.py")
    assert git(repo_path, *private, "status", "--porcelain") == ""


@needs_overlay
@pytest.mark.parametrize("behind_its_back", ["rewritten", "mode", "removed", "replaced"])
def test_a_staged_file_changed_after_staging_is_put_back_by_the_reset(
        kept: Worktree, repo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        behind_its_back: str) -> None:
    """The staged file's stat data vouches for it only while it is the file Stepwise read: one
    changed in any way since (same size, another mode, gone, another file in its place) is
    checked against the commit and checked out again."""
    where, sha = kept.path, head(repo_path)
    target = where / "src/app.py"
    target.write_text("print('changed')\n")
    kept.stage_files(["src/app.py"])
    commit = kept.commit_tree(kept.write_tree(), sha, "batch")
    if behind_its_back == "rewritten":
        target.write_text("print('CHANGED')\n")  # the same size
    elif behind_its_back == "mode":
        target.chmod(0o755)
    elif behind_its_back == "removed":
        target.unlink()
    else:
        target.unlink()
        target.write_text("print('changed')\n")  # the same bytes, another file
    calls = GitCalls(kept, monkeypatch)
    kept.reset(commit)
    assert calls.seen[:1] == ["ls-tree"]
    assert target.read_text() == "print('changed')\n" and not target.stat().st_mode & 0o111
    assert manifest(where) == fresh(Repository(repo_path), commit, tmp_path / "fresh")


@needs_overlay
def test_a_codemod_writes_through_and_the_reset_proves_the_whole_tree(
        kept: Worktree, repo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where, sha = kept.path, head(repo_path)
    codemod = policy(writes_through=True)
    script = "import os; open('src/app.py','a').write('#\\n'); os.makedirs('build'); " \
             "open('build/x','w').write('x'); os.chmod('tool.sh', 0o644)"
    result = BubblewrapSandbox().run(py(script), cwd=where, policy=codemod)
    assert result.exit_code == 0, result.output_tail
    assert (where / "build/x").exists() and (where / "src/app.py").read_text().endswith("#\n")
    assert scratch.read(kept.private) is None and not (kept.private / "written").exists()
    kept.stage_files(["src/app.py"])  # a later declaration cannot vouch for the codemod's writes
    assert scratch.read(kept.private) is None
    calls = GitCalls(kept, monkeypatch)
    kept.reset(sha)
    assert "status" in calls.seen
    assert manifest(where) == fresh(Repository(repo_path), sha, tmp_path / "fresh")


@needs_overlay
def test_a_writable_bind_inside_the_worktree_makes_the_command_write_through(
        kept: Worktree) -> None:
    where = kept.path
    inside = where / "reports"
    inside.mkdir()
    result = BubblewrapSandbox().run(py("open('notes.txt','w').write('n')"), cwd=where,
                                     policy=policy(), writable=[inside])
    assert result.exit_code == 0, result.output_tail
    assert (where / "notes.txt").exists() and scratch.read(kept.private) is None


def test_without_bubblewrap_commands_write_through_and_the_record_is_dropped(
        kept: Worktree, repo_path: Path, tmp_path: Path) -> None:
    where, sha = kept.path, head(repo_path)
    (where / "src/app.py").write_text("print('edit')\n")
    kept.stage_files(["src/app.py"])
    assert scratch.read(kept.private) == {"src/app.py"}
    PlainSandbox().run(py("open('build.txt','w').write('b')"), cwd=where, policy=policy())
    assert (where / "build.txt").exists() and scratch.read(kept.private) is None
    kept.reset(sha)
    assert manifest(where) == fresh(Repository(repo_path), sha, tmp_path / "fresh")


@needs_overlay
def test_staging_drops_what_commands_wrote_and_counts_as_a_reset_for_setup(
        kept: Worktree) -> None:
    where = kept.path
    BubblewrapSandbox().run(py("open('made-by-setup','w').write('s')"), cwd=where,
                            policy=policy())
    resets = kept.resets
    (where / "src/app.py").write_text("print('edit')\n")
    kept.stage_all()  # the llm's rounds: edit, stage, validate, edit again
    assert kept.resets == resets + 1  # a setup's outputs went with the scratch: it runs again
    assert scratch.read(kept.private) is None  # stage_all vouches for nothing
    seen = BubblewrapSandbox().run(py("import os; print(os.path.exists('made-by-setup'))"),
                                   cwd=where, policy=policy())
    assert seen.output_tail.strip() == "False"


@needs_overlay
def test_a_directory_a_command_left_unwritable_is_dropped(kept: Worktree,
                                                          repo_path: Path) -> None:
    where = kept.path
    script = "import os; os.makedirs('locked/inner'); open('locked/inner/f','w').write('f'); " \
             "os.chmod('locked/inner', 0); os.chmod('locked', 0)"
    BubblewrapSandbox().run(py(script), cwd=where, policy=policy())
    upper = kept.private / scratch.SCRATCH / "upper" / "locked"
    assert stat.S_IMODE(upper.lstat().st_mode) == 0
    kept.reset(head(repo_path))
    assert not (kept.private / scratch.SCRATCH).exists() and not (where / "locked").exists()


@needs_overlay
def test_a_command_that_wrote_nothing_leaves_its_layers_to_the_next_one(
        kept: Worktree, repo_path: Path) -> None:
    where, layers = kept.path, kept.private / scratch.SCRATCH
    assert BubblewrapSandbox().run(py("open('README.md').read()"), cwd=where,
                                   policy=policy()).exit_code == 0
    made = {name: (layers / name).lstat().st_ino for name in ("upper", "work", "merged")}
    resets = kept.resets
    (where / "src/app.py").write_text("print('edit')\n")
    kept.stage_files(["src/app.py"])
    assert kept.resets == resets  # nothing was written apart: a setup's outputs are not lost
    assert {name: (layers / name).lstat().st_ino for name in made} == made  # kept, not remade
    result = BubblewrapSandbox().run(py("open('later.txt','w').write('l')"), cwd=where,
                                     policy=policy())
    assert result.exit_code == 0 and not (where / "later.txt").exists()  # still apart
    kept.reset(head(repo_path))
    assert not layers.exists() and not (where / "later.txt").exists()


@needs_overlay
@pytest.mark.parametrize("left", ["os.chmod('.', 0o700)",
                                  "open('new', 'w').write('n'); os.remove('new')"])
def test_layers_a_command_changed_without_leaving_an_entry_are_dropped(
        kept: Worktree, repo_path: Path, left: str) -> None:
    """The repository root's mode lives on the upper directory itself, and a file made and
    removed leaves none: neither may reach the next command."""
    where, layers = kept.path, kept.private / scratch.SCRATCH
    mode = stat.S_IMODE(where.stat().st_mode)
    assert BubblewrapSandbox().run(py(f"import os; {left}"), cwd=where,
                                   policy=policy()).exit_code == 0
    kept.reset(head(repo_path))
    if "chmod" in left:
        assert not layers.exists()
    seen = BubblewrapSandbox().run(
        py("import os, stat; print(oct(stat.S_IMODE(os.stat('.').st_mode)), "
           "os.path.exists('new'))"), cwd=where, policy=policy())
    assert seen.output_tail.split() == [oct(mode), "False"]


def test_a_directory_that_is_no_job_worktree_has_no_record(tmp_path: Path) -> None:
    assert scratch.private_of(tmp_path) is None
    assert not scratch.carried(Path("/srv/a,b")) and scratch.carried(tmp_path)


@needs_overlay
def test_where_the_overlay_cannot_be_used_commands_write_through_and_it_is_said_once(
        repo_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sb.reset_sandbox_caches()
    odd = Repository(repo_path).open_worktree(tmp_path / "a,b" / "job", head(repo_path))
    (odd.path / "src/app.py").write_text("print('edit')\n")
    odd.stage_files(["src/app.py"])
    for name in ("one", "two"):
        result = BubblewrapSandbox().run(py(f"open('{name}.txt','w').write('x')"), cwd=odd.path,
                                         policy=policy())
        assert result.exit_code == 0, result.output_tail
    assert (odd.path / "one.txt").exists() and scratch.read(odd.private) is None
    said = [r.getMessage() for r in caplog.records if "write into the job's worktree" in r.message]
    assert len(said) == 1 and "an overlay cannot take the worktree's path" in said[0]
    odd.reset(head(repo_path))
    assert not (odd.path / "one.txt").exists()
