"""Every command Stepwise prints runs as printed (issue 41.3): at an 80-column terminal, from a
checkout whose path holds a space and is longer than the line, the gate's commands are neither
wrapped nor cut, quoted for a POSIX shell, and pasting them into a shell runs them."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.kit.local_e2e import NUMBER, STEPWISE, build_sample, cli, write_issue


def test_the_gate_commands_paste_at_80_columns(tmp_path: Path) -> None:
    deep = tmp_path / "a checkout whose path is longer than an eighty-column line" / "work"
    repo = build_sample(deep / "repo")
    issue = write_issue(tmp_path / "issue.md")
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER),
               env={"COLUMNS": "80"})
    assert done.code == 3, done.text

    quoted = f"'{repo}'"
    approve = f"stepwise approve --repo {quoted} --number {NUMBER}"
    cancel = f"stepwise cancel --repo {quoted} --number {NUMBER}"
    lines = done.out.splitlines()
    assert any(approve in line for line in lines), done.out  # on one line, whole
    assert any(cancel in line for line in lines), done.out

    # Pasted into a shell as printed: `status` first (changes nothing), then `approve`.
    shell_env = {**os.environ, "PATH": f"{STEPWISE.parent}{os.pathsep}{os.environ['PATH']}",
                 "COLUMNS": "80"}
    status = re.sub(r"\bapprove\b", "status", approve, count=1)
    for command, expected in ((status, 3), (approve, 3)):  # both end at a gate (exit 3)
        ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                             env=shell_env, check=False, timeout=120, cwd=tmp_path)
        assert ran.returncode == expected, (command, ran.stdout, ran.stderr)
    assert "batch 1/3 (attempt 1)" in ran.stdout  # the approve ran the first batch
