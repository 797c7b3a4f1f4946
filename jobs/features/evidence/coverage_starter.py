"""Copied into the sandbox as `sitecustomize.py` (never imported by Stepwise): in every Python
process a validation command starts, it measures the batch's changed files (with coverage.py from
Python 3.12 on, through `sys.monitoring`; before it with line_probe.py, which compiles only those
files with a record of each statement) and, at exit, writes the lines run as JSON where Stepwise
reads them (jobs/features/evidence/coverage_probe.py). It never changes what the command does: any
problem is written down as the reason nothing was measured, and the repository's own
`sitecustomize` still runs after it.

It runs under the repository's interpreter, so it keeps to what Python 3.8 has. The repository's
own coverage.py is used when it has one; else the worker's copy, bound read-only, is appended to
`sys.path` (never in front of the repository's packages).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

CONFIG = "STEPWISE_COVERAGE_CONFIG"


def _write(out: str, name: str, document: dict[str, Any]) -> None:
    path = os.path.join(out, f"{name}-{os.getpid()}-{os.urandom(4).hex()}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)


def _lines(config: dict[str, Any]) -> None:
    """Before Python 3.12: the batch's files compiled with a record of each statement run."""
    import atexit

    from stepwise_line_probe import install  # type: ignore[import-not-found]  # copied beside

    out = str(config["out"])
    hits: dict[str, set[int]] = {}
    install({os.path.realpath(path) for path in config["include"]}, hits)

    def save() -> None:
        tool = f"line probe (Python {sys.version_info[0]}.{sys.version_info[1]})"
        _write(out, "python", {"tool": tool, "lines": {k: sorted(v) for k, v in hits.items()}})

    atexit.register(save)


def _start(config: dict[str, Any]) -> None:
    import atexit
    import warnings

    if sys.version_info < (3, 12):  # coverage.py's tracer would slow every line of every module
        _lines(config)
        return
    out = str(config["out"])
    try:
        import coverage
    except ImportError:
        sys.path.append(str(config["coverage_path"]))
        try:
            import coverage
        except Exception as exc:  # any failure is a reason, never a crash
            why = f"coverage.py could not be imported by {sys.executable} ({exc})"
            _write(out, "failed", {"why": why})
            return
    os.environ.setdefault("COVERAGE_CORE", "sysmon")  # code outside the batch's files runs free
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        measure = coverage.Coverage(data_file=None, include=list(config["include"]),
                                    config_file=False, branch=False)
        measure.start()

    def save() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                measure.stop()
                data = measure.get_data()
                lines = {name: sorted(data.lines(name) or []) for name in data.measured_files()}
            _write(out, "python", {"tool": "coverage.py " + coverage.__version__, "lines": lines})
        except Exception as exc:
            _write(out, "failed", {"why": f"coverage.py failed in {sys.executable} ({exc})"})

    atexit.register(save)


def _next_sitecustomize() -> None:
    """Run the `sitecustomize` this one shadows (a virtualenv's, Debian's), as Python would."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("_sitecustomize_shadowed", candidate)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return


def main() -> None:
    path = os.environ.get(CONFIG)
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                _start(json.load(handle))
        except Exception:  # noqa: S110 - measuring must never break the command
            pass
    _next_sitecustomize()


if __name__ == "sitecustomize":  # as Python's `site` loads it in the sandbox, never otherwise
    main()
