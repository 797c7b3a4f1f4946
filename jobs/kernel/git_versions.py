"""Versions from git: the sandbox hides `.git`, so a Python package whose version comes from git
(setuptools-scm, hatch-vcs, setuptools-git-versioning, pdm-backend's scm source,
poetry-dynamic-versioning, versioneer) cannot find it during `setup` or validation. Stepwise
reads the version outside the sandbox (`git describe` of the base commit) and hands it to the
tool through the tool's own "pretend version" variable. Pure: detection from the packaging
files' text, the version from `git describe`'s output, the variables."""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from jobs.kernel.records import Record

PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")

SETUPTOOLS_SCM = "setuptools-scm"
HATCH_VCS = "hatch-vcs"
GIT_VERSIONING = "setuptools-git-versioning"
PDM_SCM = "pdm-backend (scm)"
POETRY_DYNAMIC = "poetry-dynamic-versioning"
VERSIONEER = "versioneer"

# The variable each tool reads instead of asking git (hatch-vcs is setuptools-scm underneath).
PRETEND_VARIABLES: dict[str, str] = {
    SETUPTOOLS_SCM: "SETUPTOOLS_SCM_PRETEND_VERSION",
    HATCH_VCS: "SETUPTOOLS_SCM_PRETEND_VERSION",
    GIT_VERSIONING: "SETUPTOOLS_GIT_VERSIONING_VERSION",
    PDM_SCM: "PDM_BUILD_SCM_VERSION",
    POETRY_DYNAMIC: "POETRY_DYNAMIC_VERSIONING_BYPASS",
}
NAMED_VARIABLE = "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{}"  # setuptools-scm's per-package form
VCS_VERSIONING = "VCS_VERSIONING_PRETEND_VERSION"  # setuptools-scm 10's own core reads it too
NO_VARIABLE = {VERSIONEER: "versioneer has no such variable: without `.git` it reports "
               "`0+unknown`, which builds and installs"}

_PUBLIC_VERSION = re.compile(r"\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?")
_DESCRIBE = re.compile(r"(?P<tag>.+)-(?P<distance>\d+)-g(?P<sha>[0-9a-f]{4,40})")


class GitVersion(Record):
    """What the job tells the repository's version tools, and why (shown in the plan)."""

    tools: list[str]
    version: str
    described: str  # `git describe`'s answer, or "" when no tag is reachable
    env: dict[str, str]
    notes: list[str] = Field(default_factory=list)  # detected tools that take no variable: why


def _toml(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _requires(data: dict[str, Any]) -> str:
    build = data.get("build-system")
    requires = build.get("requires", []) if isinstance(build, dict) else []
    return " ".join(str(item) for item in requires if isinstance(item, str)).lower()


def _table(data: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    node: Any = data
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def detect_tools(files: Mapping[str, str | None]) -> tuple[list[str], str | None]:
    """The git-version tools the repository's root packaging files use, and the distribution's
    name when one is written down."""
    pyproject = _toml(files.get("pyproject.toml"))
    requires = _requires(pyproject)
    setup_cfg = files.get("setup.cfg") or ""
    setup_py = files.get("setup.py") or ""
    found: list[str] = []
    hatch_source = (_table(pyproject, "tool", "hatch", "version") or {}).get("source")
    if "hatch-vcs" in requires or "hatch_vcs" in requires or hatch_source == "vcs":
        found.append(HATCH_VCS)
    elif (_table(pyproject, "tool", "setuptools_scm") is not None
          or re.search(r"setuptools[-_]scm", requires + setup_cfg.lower())
          or "use_scm_version" in setup_py):
        found.append(SETUPTOOLS_SCM)
    if (_table(pyproject, "tool", "setuptools-git-versioning") is not None
            or "setuptools-git-versioning" in requires
            or "setuptools_git_versioning" in setup_py + setup_cfg):
        found.append(GIT_VERSIONING)
    pdm_version = _table(pyproject, "tool", "pdm", "version") or {}
    if pdm_version.get("source") == "scm":
        found.append(PDM_SCM)
    if "poetry-dynamic-versioning" in requires or \
            _table(pyproject, "tool", "poetry-dynamic-versioning") is not None:
        found.append(POETRY_DYNAMIC)
    if (_table(pyproject, "tool", "versioneer") is not None or "[versioneer]" in setup_cfg
            or re.search(r"^\s*import versioneer\b", setup_py, re.M)):
        found.append(VERSIONEER)
    return found, _distribution_name(pyproject, setup_cfg, setup_py)


def _distribution_name(pyproject: dict[str, Any], setup_cfg: str, setup_py: str) -> str | None:
    name = (_table(pyproject, "project") or {}).get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(setup_cfg)
        cfg_name = parser.get("metadata", "name", fallback="").strip()
    except configparser.Error:
        cfg_name = ""
    if cfg_name:
        return cfg_name
    match = re.search(r"\bname\s*=\s*['\"]([A-Za-z0-9][A-Za-z0-9._-]*)['\"]", setup_py)
    return match[1] if match else None


def version_from_describe(described: str, sha: str) -> str:
    """A PEP 440 version for the base commit: the nearest tag (`v1.2.3` -> `1.2.3`), with
    `.postN+g<sha>` N commits after it; `0.0.0+g<sha>` without a usable tag."""
    short = sha[:7]
    match = _DESCRIBE.fullmatch(described.strip())
    if match is not None:
        tag = match["tag"].removeprefix("v").removeprefix("V")
        if _PUBLIC_VERSION.fullmatch(tag):
            distance = int(match["distance"])
            return tag if distance == 0 else f"{tag}.post{distance}+g{short}"
    return f"0.0.0+g{short}"


def named_variable(distribution: str) -> str:
    """`SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PACKAGE` for `my-package` (or `My.Package`)."""
    return NAMED_VARIABLE.format(re.sub(r"[-_.]+", "_", distribution).upper())


def git_version(files: Mapping[str, str | None], *, described: str,
                sha: str) -> GitVersion | None:
    """The variables for the tools the repository uses; None when it uses none."""
    tools, distribution = detect_tools(files)
    if not tools:
        return None
    version = version_from_describe(described, sha)
    env: dict[str, str] = {}
    for tool in tools:
        if tool in PRETEND_VARIABLES:
            env[PRETEND_VARIABLES[tool]] = version
    if env.get(PRETEND_VARIABLES[SETUPTOOLS_SCM]):
        env[VCS_VERSIONING] = version
        if distribution:
            env[named_variable(distribution)] = version
    notes = [NO_VARIABLE[tool] for tool in tools if tool in NO_VARIABLE]
    return GitVersion(tools=tools, version=version, described=described.strip(), env=env,
                      notes=notes)


def version_lines(found: GitVersion | None, *, base: str, sandboxed: bool = True) -> list[str]:
    """The plan's line: which tools, which version, from what, in which variables (`sandboxed`
    False: the commands run without a sandbox, in a worktree whose `.git` is kept elsewhere)."""
    if found is None:
        return []
    origin = f"`git describe` of `{base[:7]}`: `{found.described}`" if found.described else \
        f"no tag reaches `{base[:7]}`"
    names = ", ".join(f"`{name}`" for name in sorted(found.env)) or "no variable"
    hidden = "the sandbox hides `.git`" if sandboxed else "the worktree has no `.git`"
    line = (f"- Version from git ({', '.join(found.tools)}; {hidden}): "
            f"`{found.version}` ({origin}) in {names} for setup and validation")
    return [line + ("; " + "; ".join(found.notes) if found.notes else "")]
