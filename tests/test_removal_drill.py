"""The removal drill in CI (issue 42, "Done when"): scripts/removal_drill.py takes each loop
feature and the `command` and `llm` recipes out of a copy of the tree, one at a time, and what
is left must still type-check, keep the import contracts and pass the kernel, engine, decisions
and notes tests and the local end-to-end test; the removals known not to pass yet (its
`BLOCKED`, each with why) must still fail, so the list is kept true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_feature_and_recipe_can_be_taken_out() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "removal_drill.py")], cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=3500)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert "removal drill: " in done.stdout
