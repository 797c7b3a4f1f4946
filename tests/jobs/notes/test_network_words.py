"""The plan's network line (each admitted host and why) and the network named first as the cause
of a failed command (jobs/decisions/network_failure.py, jobs/notes/note_parts.py)."""

from __future__ import annotations

import pytest

from jobs.decisions.network_failure import network_cause
from jobs.inputs.config import RepoConfig
from jobs.kernel.job import Batch
from jobs.kernel.records import Attempt, CommandEvidence, NetworkHost
from jobs.notes.change_note import render_note
from jobs.notes.note_parts import baseline_failure
from jobs.notes.progress import network_lines
from tests.kit.records import T0, make_job


def test_the_plan_names_each_default_host_and_why() -> None:
    job = make_job()
    job.config = RepoConfig(network="setup")
    job.network_hosts = [NetworkHost(host="pypi.org", why="Python files"),
                         NetworkHost(host="mirror.example", why="PIP_INDEX_URL"),
                         NetworkHost(host="plain.example", why="`.npmrc` registry=",
                                     left_out="plain HTTP: the egress proxy tunnels HTTPS only")]
    assert network_lines(job) == [
        "- Network: setup only, through Stepwise's egress proxy, to `pypi.org`: Python files; "
        "`mirror.example`: PIP_INDEX_URL (the default: `network_allow` is empty)",
        "- Not admitted: `plain.example` (`.npmrc` registry=): plain HTTP: the egress proxy "
        "tunnels HTTPS only"]
    job.config = RepoConfig(network=True, network_allow=["corp.example"])
    assert network_lines(job) == ["- Network: every command, through Stepwise's egress proxy, "
                                  "to `corp.example` (`network_allow`)"]


def failed(*egress: str, tail: str = "") -> CommandEvidence:
    return CommandEvidence(argv=["python", "-m", "pip", "install", "inflection"], exit_code=1,
                           duration_s=1.0, egress=list(egress), output_tail=tail)


@pytest.mark.parametrize(("egress", "tail", "what", "fix"), [
    (["pypi.org:443 refused: pypi.org:443 is not on network_allow"], "",
     "setup could not reach pypi.org:443 (not on `network_allow`)",
     "add it to `network_allow` in .github/stepwise.yml"),
    (["mirror.example:443 refused: mirror.example does not resolve: [Errno -2] Name or service "
      "not known"], "",
     "setup could not reach mirror.example:443: the name mirror.example does not resolve where "
     "Stepwise runs ([Errno -2] Name or service not known)", "check the host name"),
    (["10.0.0.5:443 refused: 10.0.0.5 is in 10.0.0.0/8, which sandboxed commands never reach"],
     "", "setup could not reach 10.0.0.5:443: 10.0.0.5 is in 10.0.0.0/8", "public address"),
    (["slow.example:443 refused: slow.example:443 could not be connected to: timed out"], "",
     "setup could not reach slow.example:443: timed out", "firewall"),
    (["pypi.org:443 allowed"], "SSLError(SSLCertVerificationError(1, '[SSL: "
     "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in "
     "certificate chain (_ssl.c:1006)'))",
     "setup reached pypi.org:443 through Stepwise's egress proxy but did not trust the "
     "certificate it was shown (a TLS-inspecting proxy", "`SSL_CERT_FILE`"),
    (["registry.npmjs.org:443 allowed"], "npm error code SELF_SIGNED_CERT_IN_CHAIN",
     "setup reached registry.npmjs.org:443", "`NODE_EXTRA_CA_CERTS`"),
])
def test_the_network_cause_is_named_with_its_fix(egress: list[str], tail: str, what: str,
                                                 fix: str) -> None:
    cause = network_cause(failed(*egress, tail=tail), who="setup")
    assert cause is not None
    assert cause.what.startswith(what), cause.what
    assert fix in cause.fix, cause.fix


def test_a_refusal_before_others_is_named_first_and_the_rest_listed() -> None:
    cause = network_cause(failed(
        "localhost:6379 refused: localhost resolves to 127.0.0.1, and 127.0.0.1 is in "
        "127.0.0.0/8, which sandboxed commands never reach",
        "pypi.org:443 allowed",
        "downloads.example.net:443 refused: downloads.example.net:443 is not on network_allow"),
        who="validation")
    assert cause is not None
    assert cause.what == ("validation could not reach downloads.example.net:443 (not on "
                          "`network_allow`) (also refused: localhost:6379)")


def test_no_network_cause_without_a_refusal_or_for_a_passing_command() -> None:
    assert network_cause(failed("pypi.org:443 allowed", tail="AssertionError"), who="setup") \
        is None
    passing = failed("x.example:443 refused: x.example:443 is not on network_allow")
    assert network_cause(passing.model_copy(update={"exit_code": 0}), who="setup") is None


def test_the_baseline_failure_names_the_refused_host_first() -> None:
    job = make_job()
    job.config = RepoConfig(setup=["python -m pip install --target deps inflection"],
                            allow_commands=["python"], validate=["python -m pytest"],
                            network="setup")
    job.baseline = [failed("pypi.org:443 refused: pypi.org:443 is not on network_allow")
                    .model_copy(update={"argv": ["python", "-m", "pip", "install", "--target",
                                                 "deps", "inflection"]})]
    job.baseline_sha = "abc1234def"
    assert baseline_failure(job) == (
        "setup could not reach pypi.org:443 (not on `network_allow`); add it to "
        "`network_allow` in .github/stepwise.yml (which then replaces the default: list the "
        "registries too), or configure it as a package index (`PIP_INDEX_URL`, `pip.conf`, "
        "`uv.toml`, `.npmrc` `registry=`). So the baseline validation fails on `abc1234` "
        "(`python -m pip install --target deps inflection` → exit 1)")


def test_the_change_note_names_the_refusal_first() -> None:
    job = make_job()
    job.config = RepoConfig(setup=["pip install x"], allow_commands=["pip", "python", "ruff"],
                            network=True)
    job.baseline = [failed("pypi.org:443 refused: pypi.org:443 is not on network_allow")
                    .model_copy(update={"argv": ["pip", "install", "x"]})]
    job.baseline_ok = False
    job.batches = [Batch(number=1, milestone=1, files=["src/a.py"])]
    job.batches[0].attempts = [Attempt(number=1, started_at=T0, commands=[failed(
        "corp.example:443 refused: corp.example:443 is not on network_allow")])]
    note = render_note(job, now=T0)
    assert ("Baseline validation on `aaaaaaa`: FAILS — setup could not reach pypi.org:443 (not on "
            "`network_allow`); add it to `network_allow`") in note, note
    assert ("validation could not reach corp.example:443 (not on `network_allow`): "
            "`python -m pip install inflection` → exit 1") in note, note
