"""Attacks on the overlay that keeps a validation's writes apart from the job's worktree
(jobs/adapters/scratch.py), as the repository's own code would make them: real bubblewrap,
real overlayfs in a user namespace, real git. The invariant under attack: nothing a sandboxed
command does survives into the next batch or a commit, or steers what Stepwise runs outside
the sandbox (docs/security.md, "Git calls, attributes and links").

Everything lives under /var/tmp (the sandbox's private /tmp would hide /tmp by itself), in a
server-like layout: the clone and the job's worktree under a workdir that the sandbox hides.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters import sandbox_view, scratch
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from jobs.adapters.workspace import Repository
from jobs.adapters.worktree import Worktree
from jobs.features.evidence.integrity_hooks import RunReports, load_run
from jobs.inputs.spec import TaskSpec
from jobs.kernel.records import CommandEvidence
from jobs.recipes.base import EditError, EditRequest
from jobs.recipes.replace import ReplaceEditor
from tests.jobs.adapters.sandbox_kit import ATTEMPT, needs_overlay
from tests.jobs.adapters.test_worktree_reset import manifest
from tests.jobs.features.evidence.test_integrity_reports import JUNIT
from tests.kit.repos import git, make_repo
from tests.security import hostile

pytestmark = [hostile.needs_bwrap, needs_overlay]

FILES: dict[str, str | bytes] = {
    "README.md": "# demo\n",
    ".gitignore": "build/\n",
    "src/app.py": "print('hi')\n",
    "src/deep/mod.py": "VALUE = 1\n",
    "src/deep/other.py": "OTHER = 2\n",
    "tool.sh": "#!/bin/sh\necho tool\n",
}


@dataclass
class Job:
    """A clone and a job's worktree under a hidden workdir, and a host folder (`outside`) that
    only a program running outside the sandbox could write: the evidence of an escape."""

    origin: Path
    worktree: Worktree
    workdir: Path
    outside: Path

    @property
    def head(self) -> str:
        return git(self.origin, "rev-parse", "HEAD")

    def policy(self, *, writes_through: bool = False) -> SandboxPolicy:
        return SandboxPolicy(allow_commands=("python3",), timeout=60,
                             hidden_paths=(self.workdir,), writes_through=writes_through)

    def run(self, code: str, *args: str, writes_through: bool = False) -> str:
        """`code` run by python3 in the sandbox over the job's worktree; its output."""
        result = BubblewrapSandbox().run(["python3", "-c", code, *args], cwd=self.worktree.path,
                                         policy=self.policy(writes_through=writes_through))
        assert result.exit_code == 0, result.output_tail
        return result.output_tail

    def fresh(self, sha: str) -> dict[str, tuple[str, int, bytes]]:
        """The files of a worktree checked out at `sha` from nothing."""
        other = Repository(self.origin).open_worktree(self.workdir / "fresh" / "wt", sha)
        try:
            return manifest(other.path)
        finally:
            other.remove()


def make_job(root: Path, files: dict[str, str | bytes] = FILES,
             executable: tuple[str, ...] = ("tool.sh",)) -> Job:
    workdir = root / "workdir"
    origin = make_repo(workdir / "clone", files)
    git(origin, "update-index", "--chmod=+x", *executable)
    git(origin, "commit", "-q", "-m", "executable files")
    worktree = Repository(origin).open_worktree(workdir / "worktrees" / "issue-1",
                                                git(origin, "rev-parse", "HEAD"))
    outside = root / "outside"
    outside.mkdir()
    return Job(origin, worktree, workdir, outside)


@pytest.fixture
def job(outside_tmp: Path) -> Iterator[Job]:
    made = make_job(outside_tmp)
    yield made
    made.worktree.remove()


def escape_program(outside: Path, name: str) -> str:
    """A stand-in for `name` that leaves a mark in `outside`, then does the real thing."""
    return f'#!/bin/sh\necho "{name} ran outside the sandbox" > {outside}/{name}\n' \
           f'exec /usr/bin/{name} "$@"\n'


# -- the launcher: unshare and mount run outside the sandbox, as the worker --------------------
@pytest.mark.parametrize("where", ["sandbox-path", "relative-path-entry"])
def test_no_program_of_the_launcher_is_found_where_others_can_put_one(
        outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The overlay is mounted by a shell outside the sandbox, in the worktree, with every file
    of the host writable. Its `mount` was found on the command's PATH, whose first entries are
    the sandbox's own places (/tmp/stepwise/repo/.venv/bin, ...: on the host, in a /tmp any
    local user may write), and a relative entry in the worker's PATH (`bin`, or an empty one)
    named the repository's own files: either ran a planted `mount` on the host."""
    programs = ("mount", "unshare")
    if where == "relative-path-entry":  # the repository's own, tracked and executable
        job = make_job(outside_tmp, FILES | {f"bin/{name}": escape_program(
            outside_tmp / "outside", name) for name in programs},
            executable=("tool.sh", *(f"bin/{name}" for name in programs)))
        monkeypatch.setenv("PATH", f"bin{os.pathsep}{os.environ['PATH']}")
    else:  # the sandbox's /tmp/stepwise/repo/.venv/bin, as the host sees it
        job = make_job(outside_tmp)
        mount_point = outside_tmp / "host-tmp" / "stepwise" / "repo"
        planted = mount_point / ".venv" / "bin"
        planted.mkdir(parents=True)
        monkeypatch.setattr(sandbox_view, "REPO_MOUNT", mount_point)
        for name in programs:
            (planted / name).write_text(escape_program(job.outside, name))
            (planted / name).chmod(0o755)
    sb.reset_sandbox_caches()
    try:
        said = job.run("open('made.txt', 'w').write('x'); print('ran')")
        assert said.strip() == "ran"
        assert sorted(os.listdir(job.outside)) == []  # no planted program ran on the host
        assert not (job.worktree.path / "made.txt").exists()  # ... and the write stayed apart
    finally:
        job.worktree.remove()


# -- what the command can reach: nothing of the real worktree or its private directory ---------
# Reads the overlay's layers from /proc/self/mountinfo and tries every way to the real files.
REACH = ATTEMPT + r"""
import re
worktree, private = sys.argv[1], sys.argv[2]
info = open("/proc/self/mountinfo").read()
found = dict(re.findall(r"(lowerdir|upperdir|workdir)=([^,\s]+)", info))
targets = {"lower": found.get("lowerdir", worktree), "upper": found.get("upperdir", ""),
           "work": found.get("workdir", ""), "worktree": worktree, "private": private,
           "merged": os.path.join(private, "scratch", "merged")}
for name, where in sorted(targets.items()):
    attempt(f"write-{name}", lambda: open(os.path.join(where, "planted.txt"), "w").write("x"))
attempt("tracked", lambda: open(os.path.join(worktree, "src/app.py"), "a").write("#\n"))
attempt("index", lambda: open(os.path.join(private, "index"), "ab").write(b"x"))
attempt("record", lambda: open(os.path.join(private, "written"), "w").write("written\nx"))
attempt("head", lambda: open(os.path.join(private, "HEAD"), "w").write("0" * 40))
attempt("link", lambda: os.link(os.path.join(worktree, "README.md"), "hard-link"))
attempt("rename-out", lambda: os.rename("README.md", "/tmp/README.md"))
attempt("cwd", lambda: open("/proc/self/cwd/via-cwd.txt", "w").write("c"))
attempt("root", lambda: open(f"/proc/self/root{worktree}/via-root.txt", "w").write("r"))
"""


@pytest.mark.parametrize("hidden", [True, False], ids=["workdir-hidden", "nothing-hidden"])
def test_the_real_worktree_and_its_private_directory_are_out_of_reach(job: Job,
                                                                      hidden: bool) -> None:
    """Even with nothing hidden (the worktree and its private directory then visible at their
    host paths), every way to them is read-only or missing; the overlay's own directories named
    in /proc/self/mountinfo included."""
    where, private = job.worktree.path, job.worktree.private
    (where / "src/app.py").write_text("print('edit')\n")
    job.worktree.stage_files(["src/app.py"])
    before, record = manifest(job.workdir), scratch.read(private)
    index = (private / "index").read_bytes()
    policy = job.policy() if hidden else SandboxPolicy(allow_commands=("python3",), timeout=60)
    result = BubblewrapSandbox().run(["python3", "-c", REACH, str(where), str(private)],
                                     cwd=where, policy=policy)
    assert result.exit_code == 0, result.output_tail
    said = dict(line.split(" ", 1) for line in result.output_tail.splitlines() if " " in line)
    assert said["cwd"] == "done"  # /proc/self/cwd is the overlay's view, kept apart
    for name in ("write-lower", "write-upper", "write-work", "write-worktree", "write-private",
                 "write-merged",
                 "tracked", "index", "record", "head", "link", "rename-out", "root"):
        assert said[name].startswith("refused"), (name, result.output_tail)
    after = manifest(job.workdir)
    scratch_entries = {rel for rel in after if "/scratch" in rel}
    assert {rel: v for rel, v in after.items() if rel not in scratch_entries} == before
    assert (private / "index").read_bytes() == index and scratch.read(private) == record
    job.worktree.reset(job.head)
    assert manifest(where) == job.fresh(job.head)


# -- a batch: nothing the validation writes reaches the guard, the commit or the next batch ----
# Every kind of write over the files it is shown, and git metadata that would run a program
# (`core.fsmonitor`, hooks) if any of Stepwise's git calls outside the sandbox read it.
WRITES = r"""
import os, shutil, sys
mark = sys.argv[1]
program = f"#!/bin/sh\necho ran > {mark}/$(basename $0)\n"
open("src/app.py", "w").write("print('validated, not committed')\n")
os.chmod("tool.sh", 0o644)
os.unlink("src/deep/other.py")
os.unlink("README.md"); os.symlink("/etc/passwd", "README.md")
os.makedirs("build/out"); open("build/out/x.o", "w").write("o")
open("notes.txt", "w").write("n")
shutil.rmtree("src/deep"); os.mkdir("src/deep"); open("src/deep/new.py", "w").write("n")
os.makedirs(".git/hooks")
for hook in ("pre-commit", "post-index-change", "reference-transaction"):
    open(f".git/hooks/{hook}", "w").write(program); os.chmod(f".git/hooks/{hook}", 0o755)
open(".git/config", "w").write(f"[core]\n\tfsmonitor = {mark}/fsmonitor.sh\n\thooksPath = .git/hooks\n")
open(".git/HEAD", "w").write("ref: refs/heads/main\n")
open(".gitattributes", "w").write("* filter=evil\n")
open(".gitignore", "w").write("*\n")
os.makedirs("src/sub/.git"); open("src/sub/.git/config", "w").write("[core]\n\tbare = false\n")
print("wrote everything")
"""
LOOK = ("import hashlib, os\n"
        "for d, dirs, files in sorted(os.walk('.')):\n"
        "    for f in sorted(files):\n"
        "        p = os.path.join(d, f)\n"
        "        kind = 'link' if os.path.islink(p) else oct(os.stat(p).st_mode & 0o111)\n"
        "        data = b'' if os.path.islink(p) else open(p, 'rb').read()\n"
        "        print(p[2:], kind, hashlib.sha1(data).hexdigest()[:12])\n")


def test_a_validations_writes_reach_neither_the_guard_the_commit_nor_the_next_batch(
        job: Job) -> None:
    worktree, where = job.worktree, job.worktree.path
    (job.outside / "fsmonitor.sh").write_text(f"#!/bin/sh\necho ran > {job.outside}/fsm\n")
    (job.outside / "fsmonitor.sh").chmod(0o755)
    expected = job.fresh(job.head)
    (where / "src/deep/mod.py").write_text("VALUE = 2\n")  # the batch's edit, by Stepwise
    worktree.stage_files(["src/deep/mod.py"])
    before = manifest(where)
    assert job.run(WRITES, str(job.outside)).strip() == "wrote everything"
    assert manifest(where) == before  # nothing reached the files, even before a reset
    worktree.stage_files(["src/deep/mod.py"])  # as a failure check or the llm stage again
    assert worktree.staged_paths() == ["src/deep/mod.py"]  # what the guard reads
    assert "+VALUE = 2" in worktree.staged_diff() and "validated" not in worktree.staged_diff()
    tree = worktree.write_tree()
    commit = worktree.commit_tree(tree, job.head, "batch 1")
    changed = git(job.origin, "diff-tree", "-r", "--name-status", job.head, commit)
    assert changed.split() == ["M", "src/deep/mod.py"]
    worktree.reset(commit)
    assert manifest(where) == expected | {"src/deep/mod.py": ("file", 0, b"VALUE = 2\n")}
    # The next batch: its edit, then what its validation is shown is exactly that tree.
    (where / "src/app.py").write_text("print('batch 2')\n")
    worktree.stage_files(["src/app.py"])
    seen = job.run(LOOK)
    listed = {line.split(" ")[0] for line in seen.splitlines()}
    assert listed == {rel for rel, (kind, _, _) in expected.items() if kind != "dir"}
    assert "tool.sh 0o111" in seen and "README.md link" not in seen
    worktree.stage_all()  # a whole-tree status, then every reset kind, all outside the sandbox
    worktree.reset(job.head)
    worktree.restore_everything(job.head)
    assert os.listdir(job.outside) == ["fsmonitor.sh"]  # no hook, no fsmonitor ever ran
    assert git(job.origin, "config", "--get", "core.fsmonitor", check=False) == ""


# -- lifetime: nothing a command starts outlives it ---------------------------------------------
# A double-forked, setsid daemon that holds descriptors on the repository's directory and keeps
# writing through them, its cwd and /proc/self/root for a few seconds.
DAEMON = r"""
import os, sys, time
tag = sys.argv[1]
if os.fork():
    for _ in range(200):  # until the daemon runs, so that it is there to outlive us
        if os.path.exists("started"):
            break
        time.sleep(0.05)
    print("parent exits", os.path.exists("started")); sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.set_inheritable(fd, True)
os.execv(sys.executable, [sys.executable, "-c", '''
import os, sys, time
fd = int(sys.argv[1])
os.close(os.open("started", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
for n in range(60):
    for where in (lambda: os.open(f"late-{n}.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd),
                  lambda: os.open(f"/proc/self/cwd/cwd-{n}.txt", os.O_CREAT | os.O_WRONLY),
                  lambda: os.open(f"/proc/self/root/{os.getcwd()}/root-{n}.txt",
                                  os.O_CREAT | os.O_WRONLY)):
        try:
            os.close(where())
        except OSError:
            pass
    time.sleep(0.05)
''', str(fd), tag])
"""


@pytest.mark.parametrize("through", [False, True], ids=["validation", "codemod"])
def test_a_daemon_left_behind_is_gone_with_the_command_and_writes_nothing_later(
        job: Job, through: bool) -> None:
    tag = f"stepwise-overlay-daemon-{os.getpid()}-{int(through)}"
    result = BubblewrapSandbox().run(["python3", "-c", DAEMON, tag], cwd=job.worktree.path,
                                     policy=job.policy(writes_through=through))
    assert "parent exits True" in result.output_tail, result.output_tail  # it was running
    assert hostile.processes_with(tag) == []  # killed with the sandbox's PID namespace
    job.worktree.reset(job.head)
    expected = job.fresh(job.head)
    time.sleep(1)  # what a survivor would write in its next second of the three
    assert manifest(job.worktree.path) == expected


def test_a_command_killed_at_its_timeout_takes_its_daemon_and_its_overlay_with_it(
        job: Job) -> None:
    tag = f"stepwise-overlay-timeout-{os.getpid()}"
    stalls = DAEMON.replace('print("parent exits", os.path.exists("started")); sys.exit(0)',
                            'print("stalling", os.path.exists("started"), flush=True); '
                            'time.sleep(600)')
    policy = SandboxPolicy(allow_commands=("python3",), timeout=3, hidden_paths=(job.workdir,))
    result = BubblewrapSandbox().run(["python3", "-c", stalls, tag], cwd=job.worktree.path,
                                     policy=policy)
    assert result.timed_out and "stalling True" in result.output_tail, result.output_tail
    assert hostile.processes_with(tag) == []
    assert manifest(job.worktree.path) == job.fresh(job.head)  # before any reset, too
    job.worktree.reset(job.head)
    assert not (job.worktree.private / scratch.SCRATCH).exists()


# -- the overlay assumed, the mount failing: nothing runs ---------------------------------------
def test_when_the_mount_fails_at_run_time_the_command_never_runs(job: Job) -> None:
    """The probe said the overlay works; this mount fails (a work directory on another file
    system than the upper one, which overlayfs refuses). The command must not run at all: run
    without the overlay it would write into the files the record vouches for."""
    where = job.worktree.path
    _upper, work, _merged = scratch.layers(job.worktree.private)
    other = Path(tempfile.mkdtemp(prefix="stepwise-overlay-", dir="/dev/shm"))
    try:
        work.rmdir()
        work.symlink_to(other)
        result = BubblewrapSandbox().run(
            ["python3", "-c", "open('ran.txt', 'w').write('x'); open('src/app.py', 'w')"],
            cwd=where, policy=job.policy())
    finally:
        shutil.rmtree(other, ignore_errors=True)
    assert result.exit_code == 125, result.output_tail
    assert not (where / "ran.txt").exists()
    assert (where / "src/app.py").read_text() == "print('hi')\n"
    job.worktree.reset(job.head)
    assert manifest(where) == job.fresh(job.head)


# -- a tree deeper than a path or Python's stack ------------------------------------------------
DEEP = ("import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\n"
        "open('bottom.txt', 'w').write('x')\nprint('deep')")


@pytest.mark.parametrize("through", [False, True], ids=["validation", "codemod"])
def test_a_tree_deeper_than_a_path_is_dropped_and_never_seen_again(job: Job,
                                                                   through: bool) -> None:
    """shutil.rmtree (recursive in Python 3.11) raised RecursionError on the overlay's upper
    directory, and the path-string walk of the whole-tree reset ENAMETOOLONG: each reset then
    failed, and the next command was shown the chain again (its upper directory was kept)."""
    assert job.run(DEEP, writes_through=through).strip() == "deep"
    job.worktree.reset(job.head)
    assert not (job.worktree.path / "d").exists()
    assert not (job.worktree.private / scratch.SCRATCH).exists()
    assert job.run("import os; print(os.path.exists('d'))").strip() == "False"
    assert manifest(job.worktree.path) == job.fresh(job.head)
    assert job.run(DEEP, writes_through=through).strip() == "deep"
    job.worktree.remove()  # the fixture's removal, at the chain's depth
    assert not job.worktree.path.exists() and not job.worktree.private.exists()


# -- the kernel's surface, under the overlay's user namespace -----------------------------------
SURFACE = ("import ctypes, os\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "for name, call in (('user', lambda: libc.unshare(0x10000000)),\n"
           "                   ('mount-ns', lambda: libc.unshare(0x00020000)),\n"
           "                   ('remount', lambda: libc.mount(b'none', b'/tmp/stepwise/repo', None,"
           " 0x20 | 0x1000, None)),\n"
           "                   ('umount', lambda: libc.umount2(b'/tmp/stepwise/repo', 2))):\n"
           "    print(name, call())\n"
           "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('Cap')])\n")


def test_under_the_overlay_the_command_holds_no_capability_and_makes_no_namespace(
        job: Job) -> None:
    """The launcher is root in a user namespace of its own (to mount the overlay); bubblewrap,
    started by it, must still give the command no capability, no namespace and no mount."""
    said = job.run(SURFACE)
    for name in ("user", "mount-ns", "remount", "umount"):
        assert f"{name} -1" in said, said
    assert "['0000000000000000', '0000000000000000', '0000000000000000', '0000000000000000'," \
        in said, said


# -- Stepwise's record of its own writes: where it is wrong, the whole tree is proven ----------
def test_after_a_crash_the_kept_worktree_shows_no_command_what_an_earlier_one_wrote(
        job: Job) -> None:
    """A worker that died leaves the scratch and the record on disk: here a batch was staged
    and validated, reset, and the next attempt's editor had written a file when the process
    died, before staging it. The next process opens the kept worktree: no command may be shown
    the validation's writes, and the undeclared edit must go (nothing was declared since the
    last reset, so the whole tree is proven)."""
    (job.worktree.path / "src/app.py").write_text("print('batch')\n")
    job.worktree.stage_files(["src/app.py"])
    job.run("open('README.md', 'w').write('validation'); open('left.txt', 'w').write('l')")
    job.worktree.reset(job.head)  # the batch failed
    job.run("open('README.md', 'w').write('again'); open('left.txt', 'w').write('l')")
    (job.worktree.path / "src/deep/other.py").write_text("OTHER = 'undeclared'\n")
    # ... the process dies here; another opens the same worktree, kept:
    again = Repository(job.origin).open_worktree(job.worktree.path, job.head, keep=True)
    seen = BubblewrapSandbox().run(
        ["python3", "-c", "import os; print(open('README.md').read(), os.path.exists('left.txt'))"],
        cwd=again.path, policy=job.policy())
    assert seen.output_tail.split() == ["#", "demo", "False"], seen.output_tail
    assert manifest(again.path) == job.fresh(job.head)


def test_an_edit_that_failed_halfway_is_undone_by_the_next_reset(outside_tmp: Path) -> None:
    """`replace` writes a file, then fails on the next one (not UTF-8) before anything is
    staged: nothing was declared since the last reset, so that reset proves the whole tree."""
    job = make_job(outside_tmp, FILES | {"src/deep/mod.py": b"VALUE = '\xff'\n"})
    where = job.worktree.path
    spec = TaskSpec(recipe="replace", paths=["src/**"], find=["print"], replace="log")
    with pytest.raises(EditError, match="UTF-8"):
        ReplaceEditor().apply(EditRequest(worktree=where, files=("src/app.py", "src/deep/mod.py"),
                                          spec=spec, goal="g"))
    assert (where / "src/app.py").read_text() == "log('hi')\n"  # written before the failure
    job.worktree.reset(job.head)
    assert manifest(where) == job.fresh(job.head)
    job.worktree.remove()


def test_a_staging_that_fails_halfway_still_has_its_paths_put_back(
        job: Job, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record names the paths before they are staged: a staging that fails on the way (the
    disk full when its blob is written) leaves them to the next reset."""
    where = job.worktree.path
    (where / "src/app.py").write_text("print('new bytes, a new blob')\n")

    def disk_full(changes: object) -> dict[str, str]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(job.worktree, "_write_blobs", disk_full)
    with pytest.raises(OSError):
        job.worktree.stage_files(["src/app.py"])
    monkeypatch.undo()
    job.worktree.reset(job.head)
    assert manifest(where) == job.fresh(job.head)


def test_a_codemod_after_a_validation_sees_none_of_its_writes_and_the_reset_proves_all(
        job: Job) -> None:
    where = job.worktree.path
    job.run("open('src/app.py', 'w').write('poisoned'); open('left.txt', 'w').write('l')")
    codemod = job.run("import os; print(open('src/app.py').read().strip(), "
                      "os.path.exists('left.txt')); open('made.txt', 'w').write('m')",
                      writes_through=True)
    assert codemod.split() == ["print('hi')", "False"]
    assert (where / "made.txt").exists() and scratch.read(job.worktree.private) is None
    job.worktree.stage_files(["src/app.py"])  # cannot vouch for the codemod's writes
    job.run("open('after.txt', 'w').write('a')")
    job.worktree.reset(job.head)
    assert manifest(where) == job.fresh(job.head)


# -- what Stepwise reads of a command's output in the repository --------------------------------
COMMITTED_REPORT = (b'<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="9">'
                    + b'<testcase classname="t" name="fake"/>' * 9 + b"</testsuite></testsuites>")
LEAVES = {"written": "open('out/junit.xml', 'wb').write(bytes.fromhex({report!r}))",
          "removed": "import os; os.unlink('out/junit.xml')",
          "hidden": "import os, shutil; shutil.rmtree('out'); os.mkdir('out')"}


@pytest.mark.parametrize("left", sorted(LEAVES))
def test_a_report_the_repository_names_is_read_as_the_command_left_it(outside_tmp: Path,
                                                                      left: str) -> None:
    """`pytest --junitxml=out/junit.xml` writes its report apart, in the overlay: the evidence
    must read that one (or none, when the command removed or hid it), never the committed
    file with its own figures."""
    job = make_job(outside_tmp, FILES | {"out/junit.xml": COMMITTED_REPORT})
    reports = RunReports(outside_tmp / "runs", "t1", job.worktree.path)
    argv = ["pytest", "--junitxml=out/junit.xml"]
    assert reports.argv(0, argv) == argv  # the repository's own report, in the repository
    job.run(LEAVES[left].format(report=JUNIT.hex()))
    reports.finish([CommandEvidence(argv=argv, exit_code=0, duration_s=0.1, output_tail="")])
    run = load_run(outside_tmp / "runs", "t1")
    assert run is not None
    figures = (run.collected, run.passed)
    assert figures == ((4, 2) if left == "written" else (0, 0)), run
    job.worktree.remove()
