"""The previous release's source tree, for the tests that run it beside this one (the rolling
upgrade, records it wrote): its `bot/` and `jobs/` from `git archive` of PREVIOUS_RELEASE, and
the command that runs its `stepwise` from that tree."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

# The last commit of 0.1.0: main when 0.2.0 began. Move it to the previous release's last
# commit at each release.
PREVIOUS_RELEASE = "ba4a086"
ROOT = Path(__file__).resolve().parents[2]
# Its `stepwise`, run with the tree as the working directory and first on PYTHONPATH.
OLD_STEPWISE = [sys.executable, "-c", "import sys; from bot.cli.main import app; "
                "sys.argv[0] = 'stepwise'; app()"]


def previous_release_tree(target: Path) -> Path:
    """Unpack the previous release's `bot/` and `jobs/` into `target`."""
    archived = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS_RELEASE,
                               "bot", "jobs"], capture_output=True, check=False)
    assert archived.returncode == 0, (
        f"the previous release's commit {PREVIOUS_RELEASE} is not in this clone "
        f"({archived.stderr.decode()[:200]}); fetch the full history (git fetch --unshallow)")
    with tarfile.open(fileobj=io.BytesIO(archived.stdout)) as tar:
        tar.extractall(target, filter="data")
    return target
