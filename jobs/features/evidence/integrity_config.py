"""Configuration that decides which tests run, compared before and after a batch (pure):
pytest's options (`addopts` with its `-k`, `-m`, `--deselect`, `--ignore`; `testpaths`,
`python_files`/`_classes`/`_functions`, `norecursedirs`, `xfail_strict`) in pyproject.toml,
pytest.ini, tox.ini and setup.cfg; a conftest.py's `collect_ignore`/`collect_ignore_glob` and
its collection hooks; package.json's `test` script and `jest` block; jest's and vitest's config
files (their include/exclude/ignore patterns, roots, name patterns). Any change there is a
finding: what a changed selection leaves out cannot be told from the text, so a person looks.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import PurePosixPath

from jobs.features.evidence.integrity_shapes import Finding, excerpt

PYTEST_KEYS = ("addopts", "testpaths", "python_files", "python_classes", "python_functions",
               "norecursedirs", "xfail_strict", "collect_ignore")
INI_SECTIONS = {"pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}
CONFTEST_NAMES = ("collect_ignore", "collect_ignore_glob")
CONFTEST_HOOKS = ("pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_collect_file",
                  "pytest_pycollect_makeitem", "pytest_deselected", "pytest_collection",
                  "pytest_runtest_setup", "pytest_configure", "pytest_generate_tests")
JEST_KEYS = ("testPathIgnorePatterns", "testMatch", "testRegex", "roots", "testNamePattern",
             "modulePathIgnorePatterns", "projects", "include", "exclude", "passWithNoTests",
             "testIgnore", "bail", "onlyChanged", "filter")
_JS_CONFIG = re.compile(r"^(jest|vitest|vite)\.(config|workspace)\.[cm]?[jt]s(on)?$")
_JS_KEY = re.compile(r"\b(" + "|".join(JEST_KEYS) + r")\b")


def selects_tests(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in ("pyproject.toml", "conftest.py", "package.json", *INI_SECTIONS) \
        or bool(_JS_CONFIG.match(name))


def _pytest_options(path: str, text: str) -> dict[str, str]:
    name = PurePosixPath(path).name
    if name == "pyproject.toml":
        tool = tomllib.loads(text).get("tool", {})
        pytest = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        options = pytest.get("ini_options", pytest) if isinstance(pytest, dict) else {}
        return {key: json.dumps(options[key]) for key in PYTEST_KEYS
                if isinstance(options, dict) and key in options}
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    section = INI_SECTIONS[name]
    if not parser.has_section(section):
        return {}
    return {key: " ".join(parser.get(section, key).split()) for key in PYTEST_KEYS
            if parser.has_option(section, key)}


def _conftest_parts(text: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in CONFTEST_HOOKS:
            parts[node.name] = ast.unparse(node)
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in CONFTEST_NAMES]
        if names and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            parts[names[0]] = parts.get(names[0], "") + ast.unparse(node)
    return parts


def _package_parts(text: str) -> dict[str, str]:
    document = json.loads(text)
    if not isinstance(document, dict):
        return {}
    scripts = document.get("scripts") or {}
    parts = {f"scripts.{key}": str(value) for key, value in scripts.items()
             if isinstance(scripts, dict) and key.split(":")[0] in ("test", "pretest")}
    jest = document.get("jest")
    if isinstance(jest, dict):
        parts |= {f"jest.{key}": json.dumps(jest[key]) for key in JEST_KEYS if key in jest}
    return parts


def _js_config_parts(text: str) -> dict[str, str]:
    """The lines of a jest/vitest config that name a selecting key (a config is code)."""
    parts: dict[str, str] = {}
    for number, line in enumerate(text.splitlines()):
        match = _JS_KEY.search(line)
        if match:
            parts[f"{match.group(1)}#{number}"] = line.strip()
    return parts


def _parts(path: str, text: str) -> Mapping[str, str]:
    name = PurePosixPath(path).name
    if name == "conftest.py":
        return _conftest_parts(text)
    if name == "package.json":
        return _package_parts(text)
    if _JS_CONFIG.match(name):
        return _js_config_parts(text)
    return _pytest_options(path, text)


def _read(path: str, text: str | None) -> Mapping[str, str] | str:
    if text is None:
        return {}
    try:
        return _parts(path, text)
    except (SyntaxError, ValueError, configparser.Error, tomllib.TOMLDecodeError, TypeError,
            AttributeError) as exc:
        return f"{type(exc).__name__}"


def _by_key(parts: Mapping[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key, value in parts.items():
        grouped.setdefault(key.split("#")[0], []).append(value)
    return grouped


def findings(path: str, before: str | None, after: str | None) -> list[Finding]:
    """Each selecting option of `path` the batch added, removed or changed."""
    old, new = _read(path, before), _read(path, after)
    if isinstance(new, str):
        return [] if isinstance(old, str) else \
            [Finding(path, f"test configuration no longer readable ({new})")]
    if isinstance(old, str):
        old = {}
    found: list[Finding] = []
    old_keys, new_keys = _by_key(old), _by_key(new)
    for key in sorted(set(old_keys) | set(new_keys)):
        was, now = old_keys.get(key, []), new_keys.get(key, [])
        if sorted(was) == sorted(now):
            continue
        what = "deselects tests" if "deselect" in " ".join(now) or " -k " in f" {' '.join(now)} " \
            else "changes which tests run"
        found.append(Finding(f"{path} ({key})", f"test selection changed: {what}",
                             excerpt("; ".join(was) if was else None,
                                     "; ".join(now) if now else None)))
    return found
