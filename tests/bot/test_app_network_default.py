"""The default network allowlist and a refused host through the App: signed webhooks, a real
Redis and RQ worker, the loopback fake GitHub, real bubblewrap and the real egress proxy (with
loopback stand-ins for registries: tests/kit/registries.py).

A repository of Python files alone with its own `pip.conf` naming a mirror: setup reaches PyPI's
host and the mirror, and the plan comment names each and why. A setup that needs a host off the
list: the plan comment, the gate and `/stepwise status` name the host first with the fix, and a
`network: true` validation refused mid-job names it at the failure gate on the PR's card.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.environments.record import environment_of
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit.registries import PROBE, isolate_operator, route_registries

pytestmark = pytest.mark.skipif(not bubblewrap_available() and not os.environ.get("CI"),
                                reason="needs bubblewrap")

ISSUE = """```stepwise
recipe: replace
paths: ["src/*.py"]
find: ['\\bOLD\\b']
replace: 'NEW'
```
"""
REFUSED = "downloads.example.net"
WHAT = f"setup could not reach {REFUSED}:443 (not on `network_allow`)"
FIX = "add it to `network_allow` in .github/stepwise.yml"


@pytest.fixture(autouse=True)
def _operator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    isolate_operator(monkeypatch, tmp_path / "operator")


def python_files(setup: str, *, validate: str = "python check.py", network: object = "setup",
                 extra: dict[str, str] | None = None) -> dict[str, str | bytes]:
    config = {"setup": [setup], "validate": [validate], "allow_commands": ["python"],
              "network": network, "batches_per_milestone": 10, "batch_size": 1}
    return {".github/stepwise.yml": yaml.safe_dump(config), "probe.py": PROBE,
            "check.py": "import src.one\n", "src/__init__.py": "", "src/one.py": "OLD = 1\n",
            "src/two.py": "OLD = 2\n", **(extra or {})}


def start(world: World, number: int = 2) -> None:
    world.gh.add_issue(REPO, "Rename OLD", ISSUE, user="maria")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()


def test_pypi_and_the_repositorys_own_index_are_admitted_and_named(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    files = python_files("python probe.py https://pypi.org/simple/x/ "
                         "https://mirror.example/simple/x/",
                         extra={"pip.conf": "[global]\nindex-url = https://mirror.example/simple\n"
                                            "extra-index-url = http://plain.example/simple\n"})
    with route_registries(monkeypatch, "pypi.org", "mirror.example") as registries, \
            open_world(tmp_path, redis_url, files=files) as world:
        start(world)
        job = world.job(2)
        assert job.gate is not None and job.gate.kind is Gate.PLAN, (job.gate, job.error)
        assert job.baseline_ok is True
        assert environment_of(job) is not None
        assert environment_of(job).setup[0].egress == ["pypi.org:443 allowed",
                                                   "mirror.example:443 allowed"]
        plan = next(body for body in world.bodies(2) if "Plan for" in body)
        assert ("- Network: setup only, through Stepwise's egress proxy, to `pypi.org`: Python "
                "files; `files.pythonhosted.org`: Python files; `mirror.example`: `pip.conf` "
                "\\[global\\] index-url (the default: `network_allow` is empty)") in plan, plan
        assert ("- Not admitted: `plain.example` (`pip.conf` \\[global\\] extra-index-url): "
                "plain HTTP: the egress proxy tunnels HTTPS only") in plan, plan
        assert [s.accepted for s in registries.values()] == [1, 1]


def test_a_refused_host_is_named_first_in_the_plan_comment_and_status(
        tmp_path: Path, redis_url: str) -> None:
    files = python_files(f"python probe.py https://{REFUSED}/pkg.tar.gz")
    with open_world(tmp_path, redis_url, files=files) as world:
        start(world)
        job = world.job(2)
        assert job.gate is not None and job.gate.kind is Gate.PLAN
        assert job.gate.reason.startswith(f"the plan is ready, but {WHAT}; {FIX}")
        plan = next(body for body in world.bodies(2) if "Plan for" in body)
        assert f"FAILS — {WHAT}; {FIX}" in plan, plan
        assert "program missing from" not in plan and "a fix to the code" not in plan
        assert f"environment not built: {WHAT}" in plan
        world.comment("/stepwise status", by="maria", on=2)
        world.work()
        status = world.bodies(2)[-1]
        assert f"the plan is ready, but {WHAT}; {FIX}" in status, status
        # Reloading the same config runs it again, and the plan says it failed before.
        world.comment("/stepwise reload-config", by="maria", on=2)
        world.work()
        replanned = [body for body in world.bodies(2) if "Plan for" in body][-1]
        assert f"The last build of this environment failed, in job issue-2: {WHAT}" in \
            replanned, replanned


def test_a_validation_refused_mid_job_is_named_at_the_failure_gate(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`network: true`: the baseline reaches PyPI; batch 2's validation wants a host off the
    list (its file asks for it), and the failure gate on the PR's card names it."""
    check = ("import pathlib, subprocess, sys\n"
             "urls = ['https://pypi.org/x'] + (['https://" + REFUSED + "/x'] "
             "if 'NEW = 2' in pathlib.Path('src/two.py').read_text() else [])\n"
             "sys.exit(subprocess.call([sys.executable, 'probe.py', *urls]))\n")
    files = python_files("python -c pass", validate="python check.py", network=True)
    files["check.py"] = check
    with route_registries(monkeypatch, "pypi.org"), \
            open_world(tmp_path, redis_url, files=files, split_batches=False) as world:
        start(world)
        world.comment("/stepwise approve", by="maria", on=2)
        world.work()
        job = world.job(2)
        assert job.status is JobStatus.AWAITING_HUMAN
        assert job.gate is not None and job.gate.kind is Gate.FAILURE, (job.gate, job.error)
        failed = job.batches[1].attempts[-1]
        assert failed.error is not None
        assert failed.error.message.startswith(
            f"validation could not reach {REFUSED}:443 (not on `network_allow`)")
        assert failed.error.hint.startswith(FIX)
        pull = world.gh.pull_for(world.repo, job.branch)
        assert pull is not None  # batch 1 was committed: the PR's body is the card
        assert f"validation could not reach {REFUSED}:443 (not on `network_allow`)" in \
            pull.body, pull.body
