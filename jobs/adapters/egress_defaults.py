"""What the egress proxy admits when `network_allow` is empty, and why (README "Network").

Two parts, each host with the reason the plan shows (`pypi.org: Python files`,
`mirror.example: PIP_INDEX_URL`):
- the registries of the ecosystems the repository holds, judged by its tracked files (PyPI for
  any Python file, manifest or not; the npm registry for `package.json`);
- the package indexes configured where Stepwise runs (`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`,
  uv's and npm's variables, pip's, uv's and npm's config files) and in the repository (its
  `pip.conf`, `uv.toml`, `pyproject.toml` [tool.uv] and poetry sources, `Pipfile` sources,
  `.npmrc` `registry=`, requirements files' `--index-url`, the config's `env`).
Only `https://` indexes count (the proxy tunnels HTTPS only). A repository's files are untrusted:
a host they name is admitted for that repository's own sandbox only, under the proxy's rules for
every host (never loopback, link-local, private ranges or Stepwise's own services: an index
written as such an address is left out here, with the reason, and a name that resolves to one is
refused by the proxy), so they gain nothing `network_allow` in the same repository would not.
"""

from __future__ import annotations

import configparser
import contextlib
import ipaddress
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from jobs.adapters.egress import denied_address
from jobs.inputs.globs import glob_match
from jobs.kernel.records import NetworkHost


@dataclass(frozen=True)
class Ecosystem:
    why: str  # what the plan says admitted its hosts
    markers: tuple[str, ...]  # file name globs that show the repository uses it
    hosts: tuple[str, ...]


ECOSYSTEMS = (
    Ecosystem("Python files", ("*.py", "*.pyi", "*.pyx", "pyproject.toml", "setup.py",
                               "setup.cfg", "requirements*.txt", "Pipfile", "tox.ini", "uv.lock",
                               "poetry.lock"), ("pypi.org", "files.pythonhosted.org")),
    Ecosystem("package.json", ("package.json", "package-lock.json", "npm-shrinkwrap.json"),
              ("registry.npmjs.org",)),
)
# Variables naming package indexes (values: URLs separated by spaces; uv's UV_INDEX entries may
# be `name=URL`).
INDEX_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
                   "UV_DEFAULT_INDEX", "UV_INDEX", "npm_config_registry", "NPM_CONFIG_REGISTRY")
# The repository's files that may name a package index (read at the job's base).
REPOSITORY_INDEX_FILES = ("pip.conf", "pip.ini", "uv.toml", "pyproject.toml", "Pipfile",
                          ".npmrc", "requirements*.txt")
PLAIN_HTTP = "plain HTTP: the egress proxy tunnels HTTPS only"
SYSTEM_ROOT = Path("/")  # where the global config files are (/etc/pip.conf, ...)


def ecosystem_hosts(tracked_files: Iterable[str]) -> list[NetworkHost]:
    """The registries of the ecosystems a repository uses, judged by its tracked files."""
    names = {path.rsplit("/", 1)[-1] for path in tracked_files}
    return [NetworkHost(host=host, why=ecosystem.why) for ecosystem in ECOSYSTEMS
            if any(glob_match(name, marker) for marker in ecosystem.markers for name in names)
            for host in ecosystem.hosts]


def repository_index_files(tracked_files: Iterable[str]) -> list[str]:
    """The tracked files that may configure a package index (`.npmrc` at any depth, the rest
    at the top)."""
    return sorted(path for path in tracked_files
                  if path.rsplit("/", 1)[-1] == ".npmrc"
                  or ("/" not in path and any(glob_match(path, name)
                                              for name in REPOSITORY_INDEX_FILES)))


def repository_indexes(files: Mapping[str, str | None],
                       env: Mapping[str, str]) -> list[NetworkHost]:
    """The package indexes the repository configures: in `files` (path -> text, from
    `repository_index_files`) and in the config's `env`."""
    found: list[tuple[str, str]] = []
    for path, text in sorted(files.items()):
        if text:
            found += [(url, f"`{path}` {what}") for url, what in _indexes_in(path, text)]
    found += [(url, f"`env` {name} in .github/stepwise.yml") for name, url in _variables(env)]
    return _hosts(found)


def operator_indexes(environ: Mapping[str, str] = os.environ, *,
                     home: Path | None = None) -> list[NetworkHost]:
    """The package indexes configured where Stepwise runs: its environment and pip's, uv's and
    npm's config files (global, user, site; `PIP_CONFIG_FILE`, `UV_CONFIG_FILE`,
    `NPM_CONFIG_USERCONFIG`)."""
    found = [(url, name) for name, url in _variables(environ)]
    for path in _operator_files(environ, home or Path(environ.get("HOME") or Path.home())):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = path.read_text(encoding="utf-8")
            found += [(url, f"{path} {what}") for url, what in _indexes_in(path.name, text)]
    return _hosts(found)


def index_variables(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The index variables where Stepwise runs that a command may be given: set, without
    credentials in any URL (a token in the sandbox's environment would be readable by the
    repository's code)."""
    return {name: environ[name] for name in INDEX_VARIABLES
            if environ.get(name, "").strip()
            and not any(_credentials(url) for url in _urls(name, environ[name]))}


def _operator_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    etc = SYSTEM_ROOT / "etc"
    config_dirs = [Path(d) for d in (environ.get("XDG_CONFIG_DIRS") or "").split(":") if d] \
        or [etc / "xdg"]
    pip = [etc / "pip.conf", *(d / "pip" / "pip.conf" for d in config_dirs),
           home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf",
           Path(sys.prefix) / "pip.conf"]
    uv = [etc / "uv" / "uv.toml", *(d / "uv" / "uv.toml" for d in config_dirs),
          config_home / "uv" / "uv.toml"]
    npm = [etc / "npmrc", Path(environ.get("NPM_CONFIG_USERCONFIG") or home / ".npmrc")]
    named = [Path(environ[name]) for name in ("PIP_CONFIG_FILE", "UV_CONFIG_FILE")
             if environ.get(name)]
    return list(dict.fromkeys([*pip, *uv, *npm, *named]))


def _variables(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    for name in INDEX_VARIABLES:
        for url in _urls(name, environ.get(name, "")):
            yield name, url


def _urls(name: str, value: str) -> list[str]:
    words = value.split()
    if name == "UV_INDEX":  # `name=URL` or URL
        words = [word.split("=", 1)[1] if "=" in word.split("://", 1)[0] else word
                 for word in words]
    return words


def _indexes_in(name: str, text: str) -> list[tuple[str, str]]:
    """(URL, where in the file) for each package index a config file of kind `name` names."""
    readers: dict[str, Callable[[str], list[tuple[str, str]]]] = {
        "pip.conf": _pip_config, "pip.ini": _pip_config, "uv.toml": _uv_config,
        "pyproject.toml": _pyproject, "Pipfile": _pipfile}
    base = name.rsplit("/", 1)[-1]
    if base in readers:
        return readers[base](text)
    if base in (".npmrc", "npmrc"):
        return _npmrc(text)
    if glob_match(base, "requirements*.txt"):
        return _requirements(text)
    return []


def _pip_config(text: str) -> list[tuple[str, str]]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    with contextlib.suppress(configparser.Error):
        parser.read_string(text)
    return [(url, f"[{section}] {key}") for section in parser.sections()
            for key, value in parser.items(section)
            if key.replace("_", "-") in ("index-url", "extra-index-url", "find-links")
            for url in value.split()]


def _toml(text: str) -> dict[str, object]:
    with contextlib.suppress(tomllib.TOMLDecodeError):
        return tomllib.loads(text)
    return {}


def _uv_settings(table: object, where: str) -> list[tuple[str, str]]:
    if not isinstance(table, dict):
        return []
    found: list[tuple[str, str]] = []
    for key in ("index-url", "extra-index-url", "find-links"):
        value = table.get(key)
        for url in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(url, str):
                found.append((url, f"{where}{key}"))
    for index in table.get("index", []) if isinstance(table.get("index"), list) else []:
        if isinstance(index, dict) and isinstance(index.get("url"), str):
            found.append((index["url"], f"{where}[[index]] url"))
    return found


def _uv_config(text: str) -> list[tuple[str, str]]:
    return _uv_settings(_toml(text), "")


def _pyproject(text: str) -> list[tuple[str, str]]:
    tool = _toml(text).get("tool")
    if not isinstance(tool, dict):
        return []
    found = _uv_settings(tool.get("uv"), "[tool.uv] ")
    poetry = tool.get("poetry")
    sources = poetry.get("source", []) if isinstance(poetry, dict) else []
    found += [(source["url"], "[[tool.poetry.source]] url") for source in
              (sources if isinstance(sources, list) else [])
              if isinstance(source, dict) and isinstance(source.get("url"), str)]
    return found


def _pipfile(text: str) -> list[tuple[str, str]]:
    sources = _toml(text).get("source", [])
    return [(source["url"], "[[source]] url") for source in
            (sources if isinstance(sources, list) else [])
            if isinstance(source, dict) and isinstance(source.get("url"), str)]


_NPM_REGISTRY = re.compile(r"\s*((?:@[\w.-]+:)?registry)\s*=\s*(\S+)\s*$")


def _npmrc(text: str) -> list[tuple[str, str]]:
    return [(match.group(2).strip("\"'"), f"{match.group(1)}=")
            for line in text.splitlines() if (match := _NPM_REGISTRY.match(line))]


_REQUIREMENT_INDEX = re.compile(
    r"\s*(--index-url|--extra-index-url|--find-links|-i|-f)(?:\s*=\s*|\s+)(\S+)")


def _requirements(text: str) -> list[tuple[str, str]]:
    return [(match.group(2), match.group(1))
            for line in text.splitlines() if (match := _REQUIREMENT_INDEX.match(line))]


def _credentials(url: str) -> bool:
    with contextlib.suppress(ValueError):
        parts = urlsplit(url)
        return bool(parts.username or parts.password)
    return True


def _hosts(found: Sequence[tuple[str, str]]) -> list[NetworkHost]:
    """Each URL's allowlist entry (`host`, or `host:port` off 443) once, with its first
    source; what the proxy would never reach or tunnel is kept with the reason it is not."""
    hosts: dict[str, NetworkHost] = {}
    for url, why in found:
        if "${" in url or "://" not in url or url.startswith("file:"):
            continue  # a local path or an unexpanded variable: no host to admit
        try:
            parts = urlsplit(url)
            host, port = (parts.hostname or "").rstrip("."), parts.port
        except ValueError:
            continue
        if not host:
            continue
        entry = host if port in (None, 443) else f"{host}:{port}"
        if entry in hosts:
            continue
        hosts[entry] = NetworkHost(host=entry, why=why, left_out=_left_out(parts.scheme, host))
    return list(hosts.values())


def _left_out(scheme: str, host: str) -> str:
    if scheme.lower() != "https":
        return PLAIN_HTTP
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return "loopback, which sandboxed commands never reach"
    with contextlib.suppress(ValueError):
        reason = denied_address(str(ipaddress.ip_address(host.strip("[]"))))
        if reason is not None:
            return reason
    return ""
