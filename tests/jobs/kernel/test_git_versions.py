"""Versions from git, the pure part: which tools the packaging files name, the version from
`git describe`, and the variables each tool reads (tables of real-world packaging files)."""

from __future__ import annotations

import pytest

from jobs.kernel.git_versions import (
    GIT_VERSIONING,
    HATCH_VCS,
    PDM_SCM,
    POETRY_DYNAMIC,
    SETUPTOOLS_SCM,
    VERSIONEER,
    detect_tools,
    git_version,
    named_variable,
    version_from_describe,
    version_lines,
)

SHA = "abc1234def5678900000000000000000000000000"
SCM_PYPROJECT = """[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"
[project]
name = "tablib"
dynamic = ["version"]
[tool.setuptools_scm]
write_to = "src/tablib/_version.py"
"""
HATCH_PYPROJECT = """[build-system]
requires = ["hatchling", "hatch-vcs", "hatch-fancy-pypi-readme"]
build-backend = "hatchling.build"
[project]
name = "structlog"
dynamic = ["version"]
[tool.hatch.version]
source = "vcs"
"""


@pytest.mark.parametrize(("files", "tools", "name"), [
    ({"pyproject.toml": SCM_PYPROJECT}, [SETUPTOOLS_SCM], "tablib"),
    ({"pyproject.toml": HATCH_PYPROJECT}, [HATCH_VCS], "structlog"),
    ({"pyproject.toml": '[project]\nname = "x"\n[tool.hatch.version]\nsource = "vcs"\n'},
     [HATCH_VCS], "x"),
    ({"setup.py": "from setuptools import setup\nsetup(name='old-pkg', use_scm_version=True,\n"
                  "      setup_requires=['setuptools_scm'])\n"}, [SETUPTOOLS_SCM], "old-pkg"),
    ({"setup.cfg": "[metadata]\nname = cfg.pkg\n[options]\nsetup_requires = setuptools_scm\n"},
     [SETUPTOOLS_SCM], "cfg.pkg"),
    ({"pyproject.toml": '[build-system]\nrequires = ["setuptools", '
                        '"setuptools-git-versioning>=2.0,<3"]\n'
                        "[tool.setuptools-git-versioning]\nenabled = true\n"},
     [GIT_VERSIONING], None),
    ({"pyproject.toml": '[tool.pdm.version]\nsource = "scm"\n'}, [PDM_SCM], None),
    ({"pyproject.toml": '[build-system]\nrequires = ["poetry-core", '
                        '"poetry-dynamic-versioning>=1.0.0,<2.0.0"]\n'}, [POETRY_DYNAMIC], None),
    ({"setup.cfg": "[versioneer]\nVCS = git\nstyle = pep440\n",
      "setup.py": "import versioneer\nsetup(name='dask', version=versioneer.get_version())\n"},
     [VERSIONEER], "dask"),
    ({"pyproject.toml": '[project]\nname = "plain"\nversion = "1.0"\n'}, [], "plain"),
    ({"pyproject.toml": "not [valid toml"}, [], None),
    ({}, [], None),
])
def test_detects_the_version_tools_of_the_packaging_files(
        files: dict[str, str | None], tools: list[str], name: str | None) -> None:
    assert detect_tools(files) == (tools, name)


@pytest.mark.parametrize(("described", "version"), [
    ("v1.4.0-0-gabc1234", "1.4.0"),
    ("v1.4.0-3-gabc1234", "1.4.0.post3+gabc1234"),
    ("3.2rc1-12-gabc1234", "3.2rc1.post12+gabc1234"),
    ("release-candidate-2-gabc1234", "0.0.0+gabc1234"),  # not a version: the fallback
    ("", "0.0.0+gabc1234"),
])
def test_the_version_comes_from_the_nearest_tag(described: str, version: str) -> None:
    assert version_from_describe(described, SHA) == version


def test_the_variables_each_tool_reads_and_the_plan_line() -> None:
    found = git_version({"pyproject.toml": SCM_PYPROJECT}, described="v3.5.0-2-gabc1234",
                        sha=SHA)
    assert found is not None
    assert found.env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "3.5.0.post2+gabc1234",
                         "VCS_VERSIONING_PRETEND_VERSION": "3.5.0.post2+gabc1234",
                         "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_TABLIB": "3.5.0.post2+gabc1234"}
    line = version_lines(found, base=SHA)[0]
    assert "Version from git (setuptools-scm; the sandbox hides `.git`)" in line
    assert "`git describe` of `abc1234`: `v3.5.0-2-gabc1234`" in line
    assert named_variable("My.Package-name") == "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PACKAGE_NAME"
    versioneer = git_version({"setup.cfg": "[versioneer]\nVCS = git\n"}, described="", sha=SHA)
    assert versioneer is not None and versioneer.env == {}
    assert "versioneer has no such variable" in version_lines(versioneer, base=SHA)[0]
    assert git_version({"pyproject.toml": "[project]\nname = 'x'\n"}, described="", sha=SHA) is None
