"""The default network allowlist and a refused host, end to end in local mode (real bubblewrap,
the real egress proxy, the real `stepwise` command).

The repository of the issue's report: Python files and tests, no `pyproject.toml` or
requirements file, `network: setup` and an empty `network_allow`. Its setup reaches PyPI's host
and the index configured where Stepwise runs (PIP_INDEX_URL), stood in for by loopback echo
servers behind the real proxy's allowlist (tests/kit/registries.py), and the plan names each
host and why. A setup that needs a host off the list fails, and `stepwise run`, `stepwise
status` and the plan name that host first with the fix; the environment is not cached, and the
next job's plan says what failed last time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.environments.record import environment_of
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.job import Job
from jobs.kernel.model import Gate
from jobs.local import LocalSession
from jobs.ports import Publication
from tests.kit.local_e2e import Recorder, cli
from tests.kit.registries import FETCH, PROBE, SelfSignedServer, isolate_operator, route_registries
from tests.kit.repos import git, make_repo

pytestmark = pytest.mark.skipif(not bubblewrap_available() and not os.environ.get("CI"),
                                reason="needs bubblewrap")

ISSUE = """# Rename OLD to NEW

```stepwise
recipe: replace
paths: ["src/*.py"]
find: ['\\bOLD\\b']
replace: 'NEW'
```
"""
REFUSED = "downloads.example.net"
REFUSAL = (f"setup could not reach {REFUSED}:443 (not on `network_allow`); add it to "
           "`network_allow` in .github/stepwise.yml")


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def python_only_repo(root: Path, *urls: str) -> Path:
    """Python files and a test, nothing else: no manifest, no requirements file."""
    config = {"setup": ["python probe.py " + " ".join(urls)], "validate": ["python check.py"],
              "allow_commands": ["python"], "network": "setup", "batches_per_milestone": 10}
    return make_repo(root, {".github/stepwise.yml": yaml.safe_dump(config), "probe.py": PROBE,
                            "check.py": "import src.one\n", "src/__init__.py": "",
                            "src/one.py": "OLD = 1\n", "tests/test_one.py": "def test(): pass\n"})


def short_base(repo: Path) -> str:
    return git(repo, "rev-parse", "--short=7", "HEAD").strip()


def run(repo: Path, number: int) -> tuple[int, Job, Recorder]:
    sink = Recorder()
    session = LocalSession(repo, number, sink=sink)
    outcome = session.run(parse_issue_file(ISSUE), yes=True)
    job = session.store.load(number)
    assert job is not None
    return outcome.exit_code, job, sink


def test_pypi_and_the_configured_index_are_admitted_and_named_in_the_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_operator(monkeypatch, tmp_path / "operator")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    repo = python_only_repo(tmp_path / "repo", "https://pypi.org/simple/inflection/",
                            "https://files.pythonhosted.org/packages/x",
                            "https://mirror.example/simple/inflection/")
    with route_registries(monkeypatch, "pypi.org", "files.pythonhosted.org",
                          "mirror.example") as registries:
        code, job, sink = run(repo, 1)
    assert code == 0, (job.gate, job.error)
    assert environment_of(job) is not None and not environment_of(job).failed
    (setup,) = environment_of(job).setup
    assert setup.egress == ["pypi.org:443 allowed", "files.pythonhosted.org:443 allowed",
                            "mirror.example:443 allowed"]
    assert "reached mirror.example registry mirror.example: ping" in setup.output_tail
    assert "PIP_INDEX_URL https://mirror.example/simple" in setup.output_tail  # passed on
    assert all(server.accepted == 1 for server in registries.values())
    plan = sink.texts(Publication.PLAN)[0]
    assert ("- Network: setup only, through Stepwise's egress proxy, to `pypi.org`: Python "
            "files; `files.pythonhosted.org`: Python files; `mirror.example`: PIP_INDEX_URL "
            "(the default: `network_allow` is empty)") in plan


def test_a_refused_host_is_named_first_by_run_and_status_and_not_cached(tmp_path: Path) -> None:
    """Through the real `stepwise` command: the operator's settings are an empty home."""
    repo = python_only_repo(tmp_path / "repo", f"https://{REFUSED}/pkg.tar.gz")
    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE)
    env = {"HOME": str(tmp_path / "home"), "PIP_INDEX_URL": "", "npm_config_registry": ""}
    started = cli("run", "--repo", repo, "--issue", issue, "--number", "1", "--yes", env=env)
    assert started.code == 3, started.text
    shown = REFUSAL.replace("`", "")  # the terminal shows code spans without their backticks
    gate_line = next(line for line in started.out.splitlines() if "Waiting at gate" in line)
    assert f"Waiting at gate plan (plan-1): the plan is ready, but {shown}" in gate_line, \
        started.out
    assert "PATH" not in started.out and "a fix to the code" not in started.out
    assert f"Baseline on {short_base(repo)}: FAILS — {shown}" in started.out  # the plan
    status = cli("status", "--repo", repo, "--number", "1", env=env)
    assert status.code == 3, status.text
    assert f"Waiting at gate plan (plan-1): the plan is ready, but {shown}" in status.out, \
        status.text
    # Nothing was cached as good; what failed is kept for the next job.
    envs = repo / ".git" / "stepwise" / "envs"
    assert [p.name for p in envs.iterdir() if not p.name.startswith(".")] == []
    # The next job on the same repository says what failed last time, and fails the same way.
    again = cli("run", "--repo", repo, "--issue", issue, "--number", "2", "--yes", env=env)
    assert again.code == 3, again.text
    assert (f"The last build of this environment failed, in job issue-1: "
            f"{shown.split(';')[0]}" in again.out), again.out


def test_the_refusal_record_and_the_gate_report_in_the_job(tmp_path: Path) -> None:
    repo = python_only_repo(tmp_path / "repo", f"https://{REFUSED}/pkg.tar.gz")
    code, job, _ = run(repo, 3)
    assert code == 3
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.gate.reason.startswith(f"the plan is ready, but {REFUSAL}")
    report = job.gate.report
    assert report is not None and report.message.startswith(REFUSAL.split(";")[0])
    assert report.hint.startswith("add it to `network_allow` in .github/stepwise.yml")
    assert environment_of(job) is not None
    assert environment_of(job).failed == REFUSAL.split(";")[0]
    assert f"{REFUSED}:443 refused: {REFUSED}:443 is not on network_allow" in \
        environment_of(job).setup[0].egress


def test_a_name_that_does_not_resolve_is_named_at_the_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's index is admitted by default, but its name does not resolve where the
    proxy runs: the gate says so, not 'not on network_allow'."""
    isolate_operator(monkeypatch, tmp_path / "operator")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.invalid/simple")
    repo = python_only_repo(tmp_path / "repo", "https://mirror.invalid/simple/x/")
    code, job, _ = run(repo, 4)
    assert code == 3 and job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.gate.reason.startswith(
        "the plan is ready, but setup could not reach mirror.invalid:443: the name "
        "mirror.invalid does not resolve where Stepwise runs ("), job.gate.reason
    assert "check the host name (in `network_allow` or the package index that names it)" in \
        job.gate.reason
    assert job.network_hosts[-1].host == "mirror.invalid"


def test_a_tls_inspecting_proxy_is_named_at_the_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyPI's host is admitted and the tunnel opens, but what answers shows a certificate no
    trust store holds (as a TLS-inspecting gateway does): the gate names the certificate and
    the trust store variables Stepwise passes on."""
    isolate_operator(monkeypatch, tmp_path / "operator")
    repo = python_only_repo(tmp_path / "repo", "https://pypi.org/simple/x/")
    config = yaml.safe_load((repo / ".github/stepwise.yml").read_text())
    config["setup"] = ["python fetch.py https://pypi.org/simple/x/"]
    (repo / ".github/stepwise.yml").write_text(yaml.safe_dump(config))
    (repo / "fetch.py").write_text(FETCH)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "fetch with urllib")
    inspecting = SelfSignedServer("pypi.org", tmp_path / "certs")
    with route_registries(monkeypatch, servers={"pypi.org": inspecting}):
        code, job, _ = run(repo, 5)
    assert code == 3 and job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.gate.reason.startswith(
        "the plan is ready, but setup reached pypi.org:443 through Stepwise's egress proxy but "
        "did not trust the certificate it was shown (a TLS-inspecting proxy between Stepwise "
        "and the registry?); set `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `PIP_CERT` or "
        "`NODE_EXTRA_CA_CERTS` where Stepwise runs"), job.gate.reason
    assert job.baseline[0].egress == ["pypi.org:443 allowed"]
