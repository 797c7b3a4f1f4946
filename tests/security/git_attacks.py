"""Attacks on Stepwise's own git calls and editors (issue 11): the payloads and their checks.

Sandboxed code (a validation command, `setup`, or a codemod named only in the issue) plants git
metadata in the worktree for Stepwise's next git call: a `.git` gitfile redirected to a gitdir
of its own whose config sets `core.fsmonitor` or `core.hooksPath` (borrowing the real object
store through `objects/info/alternates`, so commits would still land), or `.git` replaced by
such a directory. Tracked symlinks put a file outside the worktree, the repository's own
`.git/config` or the App's key in a batch. Every payload, if it ever ran outside the sandbox,
writes a marker (with copies of the key and of another installation's secret) into `markers`,
a directory the sandbox cannot write: the tests assert it stays empty.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus

MODES = ("gitfile-fsmonitor", "gitfile-hooks", "dotgit-dir")
HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
         "post-merge", "pre-merge-commit", "post-index-change", "reference-transaction",
         "pre-auto-gc", "post-rewrite", "pre-push", "pre-rebase", "post-update", "push-to-checkout")
# What stands in the relative link: from <worktree>/src/ up to the git directory holding the
# worktrees (`.git` in local mode, the bare clone in server mode), i.e. its `config`.
RELATIVE_CONFIG = "../../../../config"

PLANT = r'''
import os, sys
from pathlib import Path

T = __TARGETS__
SCRIPT = "#!/bin/sh\n" + "\n".join([
    f"touch {T['markers']}/ran-$(basename $0)",
    f"cat {T['key']} > {T['markers']}/key-copy 2>/dev/null",
    f"cat {T['other']} > {T['markers']}/other-copy 2>/dev/null",
    "exit 0"]) + "\n"


def objects_dir(worktree):
    """The real object store: through the old layout's gitfile if there is one, else known."""
    dotgit = worktree / ".git"
    try:
        admin = Path(dotgit.read_text().split("gitdir:", 1)[1].strip())
        common = admin / (admin / "commondir").read_text().strip()
        return str((common / "objects").resolve())
    except (OSError, IndexError):
        return T["objects"]


def remove(path):
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        for child in sorted(path.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        path.rmdir()


def plant(mode):
    worktree = Path.cwd()
    objects = objects_dir(worktree)
    dotgit = worktree / ".git"
    # `src/.git` sits in a tracked directory: git never lists it, so nothing planted is staged.
    gitdir = dotgit if mode == "dotgit-dir" else worktree / "src" / ".git"
    remove(dotgit)
    (gitdir / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (gitdir / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    (gitdir / "objects" / "info" / "alternates").write_text(objects + "\n")
    payload = gitdir / "payload.sh"
    payload.write_text(SCRIPT)
    payload.chmod(0o755)
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    if mode in ("gitfile-fsmonitor", "dotgit-dir"):
        config += f"\tfsmonitor = {payload}\n"
    if mode in ("gitfile-hooks", "dotgit-dir"):
        hooks = gitdir / "hooks"
        hooks.mkdir(exist_ok=True)
        for name in T["hooks"]:
            (hooks / name).write_text(SCRIPT)
            (hooks / name).chmod(0o755)
        config += f"\thooksPath = {hooks}\n"
    (gitdir / "config").write_text(config)
    if gitdir != dotgit:
        dotgit.write_text(f"gitdir: {gitdir}\n")
    print(f"PLANTED {mode} at {gitdir} borrowing {objects}", flush=True)


def report():
    dotgit = Path.cwd() / ".git"
    kind = "dir" if dotgit.is_dir() else "file" if dotgit.exists() else "absent"
    print(f"SEEN .git {kind}", flush=True)
'''


@dataclass(frozen=True)
class Targets:
    """Where the payloads aim and where a successful one would leave its marker."""

    markers: Path  # stays empty unless a payload ran outside the sandbox
    key: Path  # the App key (or a stand-in)
    other: Path  # another installation's secret
    objects: Path  # the real object store, for objects/info/alternates

    def as_json(self) -> str:
        return json.dumps({"markers": str(self.markers), "key": str(self.key),
                           "other": str(self.other), "objects": str(self.objects),
                           "hooks": list(HOOKS)})


def plant_module(targets: Targets) -> str:
    """tools/plant.py: `python tools/plant.py MODE` plants, `... report` says what it sees."""
    return (PLANT.replace("__TARGETS__", targets.as_json())
            + "\nreport() if sys.argv[1] == 'report' else plant(sys.argv[1])\n")


def issue_codemod(targets: Targets, mode: str) -> str:
    """A codemod that exists only in the issue text: plants, then renames in its files."""
    source = PLANT.replace("__TARGETS__", targets.as_json()) + f"""
plant({mode!r})
for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("OLD_NAME", "NEW_NAME"))
"""
    return f"python -c \"exec(bytes.fromhex('{source.encode().hex()}').decode())\" {{files}}"


def config_yaml(**keys: object) -> str:
    config: dict[str, object] = {"validate": ["python -c pass"], "allow_commands": ["python"]}
    config.update(keys)
    return yaml.safe_dump(config, sort_keys=False)


def issue_block(**spec: object) -> str:
    return f"Hostile request.\n\n```stepwise\n{yaml.safe_dump(spec, sort_keys=False)}```\n"


@dataclass(frozen=True)
class Scenario:
    """One attack: the repository's config, the issue's spec, and the symlinks it tracks."""

    name: str
    config: Mapping[str, object]
    spec: Mapping[str, object]
    links: Mapping[str, str]  # path -> link text (filled in per layout)


def metadata_scenarios(targets: Targets) -> list[Scenario]:
    """The planted-metadata attacks: from validation, from setup, from an issue's codemod."""
    rename = {"recipe": "replace", "paths": ["src/*.py"], "find": ["OLD_NAME"],
              "replace": "NEW_NAME"}
    return [
        Scenario("validation-gitfile-fsmonitor",
                 {"validate": ["python tools/plant.py gitfile-fsmonitor"]}, rename, {}),
        Scenario("validation-gitfile-hooks",
                 {"validate": ["python tools/plant.py gitfile-hooks"]}, rename, {}),
        Scenario("setup-dotgit-dir", {"setup": ["python tools/plant.py dotgit-dir"],
                                      "validate": ["python tools/plant.py report"]}, rename, {}),
        Scenario("issue-codemod-gitfile",
                 {}, {"recipe": "command", "paths": ["src/*.py"], "find": ["OLD_NAME"],
                      "run": issue_codemod(targets, "gitfile-fsmonitor")}, {}),
        Scenario("issue-codemod-dotgit-dir",
                 {}, {"recipe": "command", "paths": ["src/*.py"], "find": ["OLD_NAME"],
                      "run": issue_codemod(targets, "dotgit-dir")}, {}),
    ]


def link_scenarios(outside_file: Path, key: Path, marker_config: str) -> list[Scenario]:
    """Tracked symlinks in scope beside a regular file: an absolute link to a file outside
    (named so the link text matches `find`), a relative one to the repository's `.git/config`,
    one to the App key. Whether the plan leaves links out or an editor refuses them, the
    regular file keeps the job meaningful."""
    absolute = {"src/abs_link.py": str(outside_file)}
    relative = {"src/rel_link.py": RELATIVE_CONFIG}
    # No literal for `git grep` to pre-select with (it never greps a link): every file is read.
    rename = {"find": ["(?i)old_name"], "replace": "NEW_NAME"}
    # Old Stepwise followed the link and inserted this before `[core]` in .git/config.
    # The replacement holds `[core]` itself: what it leaves matching is a leftover, not a failure.
    fsmonitor = {"find": [r"config$|^\[core\]$|OLD_NAME"], "replace": marker_config,
                 "done_when": "checks_pass"}
    rename_cmd = {"recipe": "command", "find": ["(?i)old_name"],
                  "run": "python tools/rename.py {files}"}
    return [
        Scenario("replace-absolute", {}, {"recipe": "replace",
                                          "paths": ["src/app.py", "src/abs_link.py"], **rename},
                 absolute),
        Scenario("replace-relative-config", {}, {"recipe": "replace",
                                                 "paths": ["src/app.py", "src/rel_link.py"],
                                                 **fsmonitor}, relative),
        Scenario("command-absolute", {}, {**rename_cmd,
                                          "paths": ["src/app.py", "src/abs_link.py"]}, absolute),
        Scenario("command-relative-config", {}, {**rename_cmd, "find": ["(?i)config|old_name"],
                                                 "paths": ["src/app.py", "src/rel_link.py"]},
                 relative),
        Scenario("llm-links", {}, {"recipe": "llm", "paths": ["src/app.py", "src/*_link.py"],
                                   "instructions": "Rename OLD_NAME to NEW_NAME."},
                 {"src/key_link.py": str(key), **relative}),
    ]


def rename_answer() -> str:
    """A model's answer renaming OLD_NAME in src/app.py (used only if links are left out)."""
    diff = ("--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-OLD_NAME = 1\n"
            "+NEW_NAME = 1\n")
    return f"Here is the change.\n\n```diff\n{diff}```\nSUMMARY src/app.py: renamed\n"


RENAME_TOOL = '''import sys
from pathlib import Path
for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("OLD_NAME", "NEW_NAME").replace("config", "[core]"))
'''


def repo_files(targets: Targets, scenario: Scenario) -> dict[str, str | bytes]:
    return {
        ".gitignore": "__pycache__/\n",
        ".github/stepwise.yml": config_yaml(**scenario.config),
        "src/__init__.py": "",
        "src/app.py": "OLD_NAME = 1\n",
        "tools/plant.py": plant_module(targets),
        "tools/rename.py": RENAME_TOOL,
    }


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_no_marker(targets: Targets) -> None:
    left = sorted(os.listdir(targets.markers))
    assert left == [], f"a payload ran outside the sandbox and left {left}"


def assert_completed_or_refused(job: Job, links: Mapping[str, str]) -> None:
    """The job completed (the links left out at plan time, untouched), or stopped with a
    security error naming one."""
    if job.status is JobStatus.COMPLETED:
        left_out = {item.path: item.rule for item in job.left_out}
        for path in links:
            assert path in left_out and "symlink" in left_out[path], (path, job.left_out)
        return
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate is not None, (job.status, job.error)
    report = job.gate.report
    assert report is not None, job.gate
    assert report.code == "unsafe_path", report
    assert any(f"`{path}`" in report.message for path in links), report.message
    assert "Traceback" not in report.message and report.hint
