"""Repositories whose validation needs an installed environment (no tests here).

Shared by the local-mode and App tests of job environments and by bench/env_cost.py:
- `shapes`, a Python package whose tests import `six` (from PyPI) and the package itself (an
  editable install): the README's Python recipe;
- `counts`, a Node package whose test needs `is-number@7.0.0` (from the npm registry, `npm ci`
  of a committed lock): the README's Node recipe;
- a connectivity probe (`probe.py`) that tries each target directly and through the proxy
  named by HTTPS_PROXY, printing one line per try.
"""

from __future__ import annotations

import json

PY_CONFIG = """\
setup: ["python -m venv .venv", "pip install --disable-pip-version-check -e .[test]"]
validate: ["pytest -q"]
allow_commands: [python, pip, pytest]
network: setup
cache_key: ["pyproject.toml"]
batch_size: 1
"""
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "shapes"
version = "0.1.0"
dependencies = ["six"]

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools.packages.find]
where = ["src"]
"""
PY_MODULE = '''"""{name}."""

import six


def {name}(value):
    return six.text_type(old_format(value))


def old_format(value):
    return "<%s>" % value
'''
PY_TEST = '''from shapes.circle import circle
from shapes.square import square


def test_both():
    assert circle(1) == "<1>" and square(2) == "<2>"
'''
PY_ISSUE_BLOCK = """```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bold_format\\b']
replace: 'fmt'
```
"""
PY_ISSUE = f"# Rename old_format to fmt\n\n{PY_ISSUE_BLOCK}"


def python_files(config: str = PY_CONFIG) -> dict[str, str | bytes]:
    return {".github/stepwise.yml": config, "pyproject.toml": PYPROJECT,
            "src/shapes/__init__.py": "", "tests/test_shapes.py": PY_TEST,
            "src/shapes/circle.py": PY_MODULE.format(name="circle"),
            "src/shapes/square.py": PY_MODULE.format(name="square"), ".gitignore": ".venv/\n"}


NODE_CONFIG = """\
setup: ["npm ci --no-audit --no-fund"]
validate: ["npm test"]
allow_commands: [npm, node]
network: setup
cache_key: ["package-lock.json"]
"""
PACKAGE = {"name": "counts", "version": "1.0.0", "private": True,
           "scripts": {"test": "node test.js"}, "dependencies": {"is-number": "7.0.0"}}
LOCK = {"name": "counts", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": {"name": "counts", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}},
            "node_modules/is-number": {
                "version": "7.0.0",
                "resolved": "https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz",
                "integrity": "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDl"
                             "K9cGvNp6NZWZUBlbGXYxxng==",
                "license": "MIT", "engines": {"node": ">=0.12.0"}}}}
NODE_TEST = """const isNumber = require("is-number");
const { count } = require("./lib/count.js");
if (!isNumber(count([1, 2]))) { process.exit(1); }
console.log("ok");
"""
NODE_ISSUE_BLOCK = """```stepwise
recipe: replace
paths: ["lib/**/*.js"]
find: ['\\bvar ']
replace: 'const '
```
"""
NODE_ISSUE = f"# Use const\n\n{NODE_ISSUE_BLOCK}"


def node_files(config: str = NODE_CONFIG) -> dict[str, str | bytes]:
    return {".github/stepwise.yml": config, "package.json": json.dumps(PACKAGE),
            "package-lock.json": json.dumps(LOCK), "test.js": NODE_TEST,
            "lib/count.js": "var n = 0;\nexports.count = (xs) => xs.length + n;\n",
            ".gitignore": "node_modules/\n"}


PROBE = '''"""Tries each target directly and through HTTPS_PROXY; one line per try."""

import socket
import urllib.error
import urllib.request

DIRECT = {direct!r}
PROXIED = {proxied!r}

for name, host, port in DIRECT:
    try:
        with socket.create_connection((host, port), 3) as sock:
            sock.sendall(b"SET stepwise:pwned 1\\r\\n")
        print("direct", name, "reached")
    except OSError as exc:
        print("direct", name, "unreachable", type(exc).__name__, exc.errno)
for name, url in PROXIED:
    try:
        with urllib.request.urlopen(url, timeout=20) as answer:
            print("proxied", name, "reached", answer.status)
    except urllib.error.HTTPError as exc:
        print("proxied", name, "reached", exc.code)
    except OSError as exc:
        print("proxied", name, "unreachable", str(exc).replace(chr(10), " ")[:200])
'''


def probe_source(*, direct: list[tuple[str, str, int]], proxied: list[tuple[str, str]]) -> str:
    """probe.py: `direct` are (name, host, port) connected to with a plain socket (sending a
    Redis command if it connects); `proxied` are (name, https URL) fetched with urllib."""
    return PROBE.format(direct=direct, proxied=proxied)
