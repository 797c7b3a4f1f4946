"""The coverage probe around the validation that accepts a batch (a `ValidationHook`): the
batch's changed Python files measured by coverage.py in every Python process the commands start
(a `sitecustomize` put first on PYTHONPATH, coverage.py bound read-only for interpreters that
lack it), its JavaScript files by node's own `NODE_V8_COVERAGE`; then the record of which
changed lines ran. Linters and type checkers are not measured. A repository that runs its own
coverage keeps it: Stepwise then adds none and says so. Nothing here can fail the batch."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from jobs.decisions.guard import is_test_path
from jobs.engine.validation_hooks import (
    RunValidation,
    TreeUnderTest,
    ValidationRequest,
    ValidationResult,
)
from jobs.features.evidence import coverage_read
from jobs.features.evidence.changed_lines import changed_lines
from jobs.features.evidence.coverage_record import not_measured
from jobs.features.evidence.coverage_starter import CONFIG
from jobs.features.evidence.coverage_subsets import keep_subset
from jobs.features.evidence.record import BatchEvidence
from jobs.inputs.programs import program_name
from jobs.kernel.feature_parts import SPLIT_VALIDATIONS, batch_figures
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt

# Programs whose processes are not test runs: measuring them costs time and says nothing.
NOT_TEST_RUNNERS = frozenset({"ruff", "mypy", "dmypy", "black", "flake8", "pylint", "isort",
                              "pyright", "bandit", "codespell", "eslint", "prettier", "tsc",
                              "biome", "stylelint"})
# Where a repository names its own coverage for pytest (pytest-cov's `--cov` in `addopts`).
PYTEST_CONFIGS = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini")
_OWN_COVERAGE = re.compile(r"--cov\b")
STARTER = Path(__file__).with_name("coverage_starter.py")
LINE_PROBE = Path(__file__).with_name("line_probe.py")


def own_coverage(job: Job, under_test: TreeUnderTest) -> str:
    """Why Python coverage is the repository's own (then Stepwise adds none), or ""."""
    texts = under_test.repository.read_texts(under_test.tree, PYTEST_CONFIGS)
    return named_coverage(job.config.validate_argvs(), job.config.env, texts)


def named_coverage(argvs: list[list[str]], env: Mapping[str, str],
                   texts: Mapping[str, str | None]) -> str:
    """Where the repository names its own coverage: a command (`--cov`, `coverage run`,
    `python -m coverage`), its `env` (`COVERAGE_*`) or pytest's `addopts`; "" when nowhere."""
    for argv in argvs:
        if any(_OWN_COVERAGE.match(arg) for arg in argv) or "coverage" in \
                (program_name(argv[0]), *argv[1:3]):
            return f"the repository runs its own coverage (`{' '.join(argv)}`)"
    if any(key.startswith("COVERAGE_") for key in env):
        return "the repository runs its own coverage (`COVERAGE_*` in `env`)"
    for name in PYTEST_CONFIGS:
        if _OWN_COVERAGE.search(texts.get(name) or ""):
            return f"the repository runs its own coverage (`--cov` in {name})"
    return ""


def measured_commands(argvs: tuple[tuple[str, ...], ...]) -> list[int]:
    return [index for index, argv in enumerate(argvs)
            if argv and program_name(argv[0]) not in NOT_TEST_RUNNERS]


def _coverage_package(work: Path) -> Path:
    """A folder holding coverage.py for interpreters without it: the worker's own, linked, or
    copied when it lives under /tmp (the sandbox's /tmp is private)."""
    import coverage  # here, not at the top: a run with coverage off never pays its import

    package = Path(coverage.__file__).resolve().parent
    holder = work / "lib"
    holder.mkdir()
    if package.is_relative_to("/tmp"):  # noqa: S108 - the sandbox hides the host's /tmp
        shutil.copytree(package, holder / "coverage", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        (holder / "coverage").symlink_to(package, target_is_directory=True)
    return holder


def probe(job: Job, batch: Batch, attempt: Attempt, under_test: TreeUnderTest,
          request: ValidationRequest, run: RunValidation) -> ValidationResult:
    """Run the validation under coverage where it can be measured, and record the result."""
    if job.config.evidence.coverage == "off":
        batch.part(BatchEvidence).coverage = not_measured("`evidence.coverage` is `off`")
        return run(request)
    changed = changed_lines(under_test.diff)
    if not changed:
        batch.part(BatchEvidence).coverage = None
        return run(request)
    suffixes = {PurePosixPath(path).suffix.lower() for path in changed}
    python = bool(suffixes & coverage_read.PYTHON_SUFFIXES)
    node = bool(suffixes & coverage_read.NODE_SUFFIXES)
    skipped: dict[str, str] = {}
    commands = measured_commands(request.argvs)
    if not commands:
        skipped = {"python": "no validation command runs tests", "node": "no validation "
                   "command runs tests"}
    elif python and (own := own_coverage(job, under_test)):
        skipped["python"] = own
    with tempfile.TemporaryDirectory(prefix="stepwise-coverage-") as folder:
        work = Path(folder)
        out, v8 = work / "out", work / "v8"
        out.mkdir()
        v8.mkdir()
        env: dict[str, str] = {}
        if python and "python" not in skipped:
            site = work / "site"
            site.mkdir()
            shutil.copyfile(STARTER, site / "sitecustomize.py")
            shutil.copyfile(LINE_PROBE, site / "stepwise_line_probe.py")
            config = {"out": str(out), "coverage_path": str(_coverage_package(work)),
                      "include": [str(under_test.seen_at / path) for path in sorted(changed)
                                  if PurePosixPath(path).suffix in coverage_read.PYTHON_SUFFIXES
                                  and not is_test_path(path)]}
            (work / "config.json").write_text(json.dumps(config))
            theirs = job.config.env.get("PYTHONPATH")
            env |= {CONFIG: str(work / "config.json"),
                    "PYTHONPATH": f"{site}:{theirs}" if theirs else str(site)}
        if node and "node" not in skipped:
            env["NODE_V8_COVERAGE"] = str(v8)
        probed = replace(request, writable=(*request.writable, work),
                         env_for={**request.env_for,
                                  **{i: {**request.env_for.get(i, {}), **env} for i in commands}})
        result = run(probed if env else request)
        if result[1] is None:  # only a batch that passed is accepted: its lines are the evidence
            texts = under_test.repository.read_texts(under_test.tree, sorted(changed))
            roots = tuple(dict.fromkeys((str(under_test.seen_at),
                                         str(under_test.seen_at.resolve()))))
            reports = coverage_read.read_reports(out, v8)
            measured = coverage_read.measure(changed=changed, texts=texts, reports=reports,
                                             roots=roots, skipped=skipped)
            measured.tree = under_test.tree
            batch.part(BatchEvidence).coverage = measured
            if SPLIT_VALIDATIONS in batch_figures(batch):  # a split batch's subset: kept
                keep_subset(batch, measured)  # until one lands
        else:  # a failed run is no evidence of what the tests run (an earlier attempt's goes)
            batch.part(BatchEvidence).coverage = None
    return result
