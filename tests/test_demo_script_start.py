"""`./scripts/demo` on a fresh clone (issue 41.2): its first line comes at once, before the
virtualenv is made, and the install says what it is doing while it runs."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_speaks_within_seconds_and_while_installing(tmp_path: Path) -> None:
    env = {**os.environ, "STEPWISE_VENV": str(tmp_path / "venv")}
    started = time.monotonic()
    demo = subprocess.Popen([str(ROOT / "scripts" / "demo")], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)
    assert demo.stdout is not None
    lines: list[str] = []
    try:
        while len(lines) < 3 and time.monotonic() - started < 60:
            ready, _, _ = select.select([demo.stdout], [], [], 1)
            if ready:
                lines.append(demo.stdout.readline().decode())
    finally:
        os.killpg(demo.pid, signal.SIGKILL)
        demo.wait()
    assert lines[0] == ("Stepwise demo: a whole job on a bundled sample repository, in local "
                        "mode.\n")
    # Said before anything slow starts: the virtualenv is made after it (no timing asserted).
    assert lines[1] == f"Creating the virtualenv {tmp_path / 'venv'} (once)...\n"
    assert lines[2].startswith(f"Installing Stepwise and its pinned dependencies into "
                               f"{tmp_path / 'venv'}")
