"""A hostile repository: its codemod, conftest.py and test suite attack the machine they run on.

Every attack prints one line `HOSTILE <stage> <attack> <result>` (stages: `codemod`, `conftest`,
`test`), so the output tails kept in the job's record are the evidence of what was tried and
what happened. The targets (paths, ports, the marker strings) are committed in
`tools/targets.json`: the attacker is assumed to know the layout of the machine.

This module builds the repository and reads the evidence; the attacks themselves are grouped by
family: hostile_reads.py (secrets on disk and in /proc), hostile_escapes.py (network, writes,
daemons), hostile_leaks.py (secrets in the output), hostile_git.py (planting a gitdir).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
import yaml

from jobs.adapters.sandbox import bubblewrap_available
from jobs.kernel.records import CommandEvidence
from tests.security.hostile_escapes import ESCAPES
from tests.security.hostile_git import GIT_PLANT
from tests.security.hostile_leaks import LEAKS
from tests.security.hostile_reads import READS

# In CI a missing bubblewrap fails loudly (jobs.adapters.sandbox refuses); elsewhere these tests skip.
needs_bwrap = pytest.mark.skipif(not bubblewrap_available() and os.environ.get("CI") != "true",
                                 reason="bubblewrap is not usable here")
NUMBER = 7
VALIDATE = "python -m pytest -q -s -p no:cacheprovider tests"
CODEMOD = "python tools/codemod.py {files}"
FAKE_PEM_BODY = "MIIEfakeHostilePrintedKeyBody0123456789"
EMPTY_SHA = "read:0:e3b0c44298fc1c14"  # what reading an empty file reports
STAGES = ("codemod", "conftest", "test")
ALL_ATTACKS = ("app_key", "proc_environ", "other_clone", "git_config", "redis", "outside",
               "write_checkout", "write_home", "write_clone", "daemon", "token", "url", "header",
               "git_plant")
TEST_ATTACKS = ("app_key", "daemon", "token", "url", "header")

ATTACKS_PRELUDE = r'''"""Hostile code shared by the codemod, conftest.py and the tests of this repository."""
import errno
import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

TARGETS = json.loads((Path(__file__).resolve().parent / "targets.json").read_text())
DAEMON = "import time\ntime.sleep(300)"


def report(stage, attack, result):
    print(f"HOSTILE {stage} {attack} {result}", flush=True)


def failure(exc):
    name = errno.errorcode.get(exc.errno or 0, "-") if isinstance(exc, OSError) else "-"
    return f"error:{type(exc).__name__}:{name}"'''

RUN_ALL = r'''def run_all(stage):
    report(stage, "app_key", app_key())
    report(stage, "proc_environ", proc_environ())
    report(stage, "other_clone", other_clone())
    report(stage, "git_config", git_config())
    report(stage, "redis", connect("127.0.0.1", TARGETS["redis_port"]))
    report(stage, "outside", connect(TARGETS["outside_host"], 80))
    report(stage, "write_checkout", write(TARGETS["checkout_file"]))
    report(stage, "write_home", write(TARGETS["home_file"]))
    report(stage, "write_clone", write(TARGETS["clone_file"]))
    report(stage, "daemon", daemon(stage))
    token(stage)
    report(stage, "git_plant", git_plant(stage))
'''

# tools/attacks.py: the shared prelude, each attack family, and `run_all` calling them all
ATTACKS = "\n\n\n".join([ATTACKS_PRELUDE, READS, ESCAPES, LEAKS, GIT_PLANT, RUN_ALL])

CODEMOD_SOURCE = '''"""A "codemod" that attacks first, then renames OLD_NAME to NEW_NAME in its files."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import attacks  # noqa: E402

attacks.run_all("codemod")
for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("OLD_NAME", "NEW_NAME"))
'''

CONFTEST_SOURCE = '''"""conftest.py runs at collection: the attacks run before any test."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import attacks  # noqa: E402

attacks.run_all("conftest")
'''

TEST_SOURCE = '''"""A test that looks innocent and passes, after reading the key and leaving a daemon."""
import attacks


def test_looks_innocent():
    attacks.report("test", "app_key", attacks.app_key())
    attacks.report("test", "daemon", attacks.daemon("test"))
    attacks.token("test")
'''


@dataclass(frozen=True)
class Targets:
    """What the hostile code aims at (written to tools/targets.json in the repository)."""

    key_path: str
    other_clone: str
    other_secret: str
    git_config: str
    redis_port: int
    outside_host: str
    victim_pid: int
    env_marker: str
    token: str
    pem_body: str
    checkout_file: str
    home_file: str
    clone_file: str
    daemon_tag: str


def new_token() -> str:
    """A token-looking string: `ghs_` and 36 letters and digits."""
    alphabet = string.ascii_letters + string.digits
    return "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))


def config_text(**overrides: object) -> str:
    config: dict[str, object] = {"validate": [VALIDATE], "allow_commands": ["python"]}
    config.update(overrides)
    return yaml.safe_dump(config, sort_keys=False)


def issue_body() -> str:
    spec = {"recipe": "command", "paths": ["src/*.py"], "find": ["OLD_NAME"], "run": CODEMOD}
    return ("Rename OLD_NAME to NEW_NAME with our codemod.\n\n```stepwise\n"
            f"{yaml.safe_dump(spec, sort_keys=False)}```\n")


def issue_markdown() -> str:
    return f"# Rename OLD_NAME to NEW_NAME\n\n{issue_body()}"


def repo_files(targets: Targets) -> dict[str, str | bytes]:
    return {
        ".gitignore": "__pycache__/\n.pytest_cache/\n",
        ".github/stepwise.yml": config_text(),
        "src/__init__.py": "",
        "src/app.py": "OLD_NAME = 1\n",
        "tools/attacks.py": ATTACKS,
        "tools/codemod.py": CODEMOD_SOURCE,
        "tools/targets.json": json.dumps(asdict(targets), indent=2) + "\n",
        "tests/conftest.py": CONFTEST_SOURCE,
        "tests/test_hostile.py": TEST_SOURCE,
    }


def make_other_clone(path: Path, marker: str) -> Path:
    """Another job's clone (a directory under the workdir holding that repository's secret)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "SECRET.txt").write_text(f"another repository's secret {marker}\n")
    return path / "SECRET.txt"


@contextmanager
def victim_process(marker: str, token: str) -> Iterator[int]:
    """A host process whose environment holds secrets (what /proc/<pid>/environ would show)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "STEPWISE_WEBHOOK_SECRET": marker,
           "GITHUB_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


# -- reading the evidence ------------------------------------------------------------------------
def findings(tail: str) -> dict[tuple[str, str], str]:
    """{(stage, attack): result} from the `HOSTILE` lines of an output tail."""
    found: dict[tuple[str, str], str] = {}
    for line in tail.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[0] == "HOSTILE":
            found[(parts[1], parts[2])] = parts[3]
    return found


def processes_with(tag: str) -> list[int]:
    """Host processes whose command line holds `tag` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag.encode() not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    time.sleep(0.1)


def assert_all_failed(results: dict[tuple[str, str], str], stage: str, targets: Targets,
                      *, key_digest: str) -> None:
    """Each attack of `stage` failed (or its output was redacted); one assertion per attack."""
    attacks = TEST_ATTACKS if stage == "test" else ALL_ATTACKS
    missing = [a for a in attacks if (stage, a) not in results]
    assert not missing, f"{stage}: no result for {missing}: {results}"
    r = {attack: results[(stage, attack)] for attack in attacks}
    # The App key: hidden (an empty file in its place) or unreadable, never its content.
    assert r["app_key"] == EMPTY_SHA or r["app_key"].startswith("error:"), r["app_key"]
    assert key_digest not in r["app_key"]
    assert r["token"] == "[redacted]", r["token"]
    assert r["url"] == "https://[redacted]@github.com/octo/hostile.git", r["url"]
    assert r["header"] == "Authorization: Bearer [redacted]", r["header"]
    assert r["daemon"].startswith("spawned:"), r["daemon"]  # it ran; the caller checks it died
    if stage == "test":
        return
    environ = dict(part.split("=", 1) for part in r["proc_environ"].split())
    assert environ["leaked"] == "0", r["proc_environ"]  # no other process's environment shows it
    # Only the sandbox's own processes are visible (its init), never the host's hundreds.
    assert int(environ["seen"]) <= 2, r["proc_environ"]
    assert environ["victim"].startswith("error:"), r["proc_environ"]  # the host pid is not there
    assert environ["own"] == "clean", r["proc_environ"]  # the command's environment has no secrets
    assert r["other_clone"].startswith("file=error:"), r["other_clone"]
    assert "dir=error:" in r["other_clone"], r["other_clone"]
    for part in r["git_config"].split():
        assert "=error:" in part, r["git_config"]  # .git/config unreadable by any route
    assert r["redis"].startswith("error:"), r["redis"]
    assert r["outside"].startswith("error:"), r["outside"]
    assert r["write_checkout"].startswith("error:") and "EROFS" in r["write_checkout"], \
        r["write_checkout"]
    assert r["write_home"].startswith("error:"), r["write_home"]
    # The clone's own directory is hidden behind an empty tmpfs: a write may "succeed" there
    # but lands nowhere (the caller checks the host file system).
    assert r["write_clone"] in ("wrote",) or r["write_clone"].startswith("error:"), r["write_clone"]
    # Planting succeeds inside the sandbox; Stepwise's own git calls must never obey it (the
    # hook would write checkout_file, checked below).
    assert r["git_plant"] == "planted", r["git_plant"]
    for path in (targets.checkout_file, targets.home_file, targets.clone_file):
        assert not Path(path).exists(), f"{stage}: the hostile code wrote {path}"


def assert_evidence(baseline: CommandEvidence, codemod: CommandEvidence,
                    validation: CommandEvidence, targets: Targets, *, key_digest: str) -> None:
    """The record's evidence shows every attack of every stage failing, and nothing survived."""
    assert codemod.argv[:2] == ["python", "tools/codemod.py"], codemod.argv
    assert all(c.isolated for c in (baseline, codemod, validation))
    assert baseline.exit_code == 0 and validation.exit_code == 0, validation.output_tail
    for evidence, stages in ((codemod, ["codemod"]), (baseline, ["conftest", "test"]),
                             (validation, ["conftest", "test"])):
        results = findings(evidence.output_tail)
        for stage in stages:
            assert_all_failed(results, stage, targets, key_digest=key_digest)
        assert FAKE_PEM_BODY not in evidence.output_tail
        assert targets.token not in evidence.output_tail
    assert processes_with(targets.daemon_tag) == []  # nothing a command started outlived it
