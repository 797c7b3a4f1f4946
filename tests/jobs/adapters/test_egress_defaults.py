"""The default allowlist: the ecosystems a repository holds, and the package indexes configured
in it or where Stepwise runs; and what the real egress proxy decides with it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from jobs.adapters.allowlist_cache import admitted
from jobs.adapters.egress_defaults import (
    ecosystem_hosts,
    index_variables,
    operator_indexes,
    repository_index_files,
    repository_indexes,
)
from jobs.kernel.records import NetworkHost
from tests.kit.registries import EchoServer, isolate_operator, routed_proxy

PYPI = [NetworkHost(host="pypi.org", why="Python files"),
        NetworkHost(host="files.pythonhosted.org", why="Python files")]


@pytest.mark.parametrize("files", [["src/app.py"], ["scripts/tool.py", "README.md"],
                                   ["stubs/mod.pyi"], ["requirements.txt"], ["pyproject.toml"]])
def test_python_files_alone_admit_pypi(files: list[str]) -> None:
    assert ecosystem_hosts(files) == PYPI


def test_package_json_admits_npm_and_nothing_else_admits_anything() -> None:
    assert ecosystem_hosts(["web/package.json"]) == [
        NetworkHost(host="registry.npmjs.org", why="package.json")]
    assert ecosystem_hosts(["README.md", "src/main.rs", "docs/py.txt"]) == []
    both = {h.host for h in ecosystem_hosts(["a.py", "package-lock.json"])}
    assert both == {"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}


REPOSITORY_FILES = {
    "pip.conf": "[global]\nindex-url = https://devpi.example.com/root/pypi/+simple/\n"
                "extra_index_url =\n    https://extra.example.com/simple\n",
    "uv.toml": 'index-url = "https://uv.example.com/simple"\n'
               '[[index]]\nurl = "https://uv-index.example.com:8443/simple"\n',
    "pyproject.toml": '[tool.uv]\nextra-index-url = ["https://pyproject-uv.example.com/simple"]\n'
                      '[[tool.poetry.source]]\nname = "corp"\nurl = "https://poetry.example.com/simple"\n',
    "Pipfile": '[[source]]\nurl = "https://pipenv.example.com/simple"\nname = "x"\n',
    "web/.npmrc": "registry=https://npm.example.com/\n@corp:registry = https://scoped.example.com/\n"
                  "//npm.example.com/:_authToken=${NPM_TOKEN}\n",
    "requirements-dev.txt": "--index-url https://req.example.com/simple\n-i https://req.example.com/x\n"
                            "--extra-index-url=http://plain.example.com/simple\npytest\n",
    ".npmrc": "registry=https://10.0.0.5/\n; registry=https://commented.example.com/\n",
}


def test_every_kind_of_repository_index_is_found_with_where_it_is_set() -> None:
    assert repository_index_files([*REPOSITORY_FILES, "src/a.py", "sub/pip.conf"]) == sorted(
        REPOSITORY_FILES)
    hosts = {h.host: h for h in repository_indexes(
        REPOSITORY_FILES, {"PIP_EXTRA_INDEX_URL": "https://from-env.example.com/simple"})}
    assert hosts["devpi.example.com"].why == "`pip.conf` [global] index-url"
    assert hosts["extra.example.com"].why == "`pip.conf` [global] extra_index_url"
    assert hosts["uv.example.com"].why == "`uv.toml` index-url"
    assert hosts["uv-index.example.com:8443"].why == "`uv.toml` [[index]] url"
    assert hosts["pyproject-uv.example.com"].why == "`pyproject.toml` [tool.uv] extra-index-url"
    assert hosts["poetry.example.com"].why == "`pyproject.toml` [[tool.poetry.source]] url"
    assert hosts["pipenv.example.com"].why == "`Pipfile` [[source]] url"
    assert hosts["npm.example.com"].why == "`web/.npmrc` registry="
    assert hosts["scoped.example.com"].why == "`web/.npmrc` @corp:registry="
    assert hosts["req.example.com"].why == "`requirements-dev.txt` --index-url"
    assert hosts["from-env.example.com"].why == \
        "`env` PIP_EXTRA_INDEX_URL in .github/stepwise.yml"
    assert "commented.example.com" not in hosts
    # What the proxy would never tunnel or reach is named, with why, and not admitted.
    assert hosts["plain.example.com"].left_out == "plain HTTP: the egress proxy tunnels HTTPS only"
    assert "10.0.0.0/8" in hosts["10.0.0.5"].left_out
    assert "plain.example.com" not in admitted(list(hosts.values()))
    assert "10.0.0.5" not in admitted(list(hosts.values()))


@pytest.mark.parametrize("url", ["https://127.0.0.1:6379/", "https://localhost/simple",
                                 "https://169.254.169.254/latest/", "https://192.168.1.2/",
                                 "https://[::1]:3141/", "https://[::ffff:10.1.2.3]/"])
def test_a_repository_index_at_an_address_never_reached_is_left_out(url: str) -> None:
    (host,) = repository_indexes({".npmrc": f"registry={url}\n"}, {})
    assert host.left_out and admitted([host]) == []


def test_the_operator_indexes_come_from_variables_and_config_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolate_operator(monkeypatch, tmp_path)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/pip.conf").write_text("[global]\nindex-url = https://global.example/simple\n")
    (home / ".config/pip").mkdir(parents=True)
    (home / ".config/pip/pip.conf").write_text("[install]\nextra-index-url = https://user.example/s\n")
    (home / ".config/uv").mkdir(parents=True)
    (home / ".config/uv/uv.toml").write_text('[[index]]\nurl = "https://uv-user.example/simple"\n')
    (home / ".npmrc").write_text("registry=https://npm-user.example/\n")
    environ = {"PIP_INDEX_URL": "https://mirror.example/simple",
               "PIP_EXTRA_INDEX_URL": "https://a.example/s https://b.example:8443/s",
               "UV_INDEX": "corp=https://uv-env.example/simple",
               "npm_config_registry": "https://npm-env.example/", "HOME": str(home)}
    hosts = {h.host: h.why for h in operator_indexes(environ)}
    assert hosts == {
        "mirror.example": "PIP_INDEX_URL", "a.example": "PIP_EXTRA_INDEX_URL",
        "b.example:8443": "PIP_EXTRA_INDEX_URL", "uv-env.example": "UV_INDEX",
        "npm-env.example": "npm_config_registry",
        "global.example": f"{tmp_path}/etc/pip.conf [global] index-url",
        "user.example": f"{home}/.config/pip/pip.conf [install] extra-index-url",
        "uv-user.example": f"{home}/.config/uv/uv.toml [[index]] url",
        "npm-user.example": f"{home}/.npmrc registry=",
    }


def test_index_variables_with_credentials_are_not_passed_to_commands() -> None:
    environ = {"PIP_INDEX_URL": "https://mirror.example/simple",
               "PIP_EXTRA_INDEX_URL": "https://user:secret@corp.example/simple",
               "npm_config_registry": "https://npm.example/", "OTHER": "x"}
    assert index_variables(environ) == {"PIP_INDEX_URL": "https://mirror.example/simple",
                                        "npm_config_registry": "https://npm.example/"}


def connect(socket_path: Path, target: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(socket_path))
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        head = sock.recv(4096)
        if head.startswith(b"HTTP/1.1 200"):
            sock.sendall(b"ping")
            return head + sock.recv(4096)
        return head


def test_the_proxy_admits_pypi_for_a_repository_of_python_files_only() -> None:
    """The real proxy's decision with the default of a repository holding only `.py` files:
    PyPI's hosts are tunnelled (to loopback stand-ins, after the allowlist admitted them);
    anything else, loopback, private ranges and cloud metadata are refused."""
    allow = admitted(ecosystem_hosts(["pkg/__init__.py", "pkg/core.py", "tests/test_core.py"]))
    registries = {name: EchoServer(name) for name in ("pypi.org", "files.pythonhosted.org")}
    proxy_type = routed_proxy({name: s.port for name, s in registries.items()})
    try:
        with proxy_type(allow) as proxy:
            for name in registries:
                answer = connect(proxy.socket_path, f"{name}:443")
                assert answer.startswith(b"HTTP/1.1 200"), answer
                assert answer.endswith(f"registry {name}: ping".encode()), answer
            for target in ("registry.npmjs.org:443", "pypi.org:80", "127.0.0.1:443",
                           "169.254.169.254:443", "10.0.0.1:443", "localhost:443"):
                assert connect(proxy.socket_path, target).startswith(b"HTTP/1.1 403"), target
        records = [f"{r.host}:{r.port} {'allowed' if r.allowed else r.reason}"
                   for r in proxy.records]
        assert records[:2] == ["pypi.org:443 allowed", "files.pythonhosted.org:443 allowed"]
        assert all("is not on network_allow" in line for line in records[2:]), records
    finally:
        for server in registries.values():
            server.close()


def test_a_configured_index_is_admitted_but_never_at_a_refused_address() -> None:
    """An index named by the repository is on its sandbox's allowlist; the proxy still applies
    its address rules to it (here the name is on the list but resolves to loopback)."""
    hosts = repository_indexes({".npmrc": "registry=https://localhost.:6379/\n",
                                "pip.conf": "[global]\nindex-url = https://mirror.example/s\n"}, {})
    assert admitted(hosts) == ["mirror.example"]  # `localhost.` is left out by name
    echo = EchoServer("mirror.example")
    try:
        with routed_proxy({"mirror.example": echo.port})([*admitted(hosts), "localhost:6379"]) \
                as proxy:
            assert connect(proxy.socket_path, "mirror.example:443").endswith(
                b"registry mirror.example: ping")
            refused = connect(proxy.socket_path, "localhost:6379")
        assert refused.startswith(b"HTTP/1.1 403"), refused
        assert b"127.0.0.0/8" in refused or b"::1" in refused, refused
    finally:
        echo.close()
