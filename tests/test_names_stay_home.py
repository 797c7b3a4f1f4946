"""Names stay home: each feature and each recipe owns its identifiers (its part of the record and
the models in its folder, its config keys, its gate kinds, causes of `failure` and batch
statuses, its error codes, its texts: the change note's sections it writes and its texts
modules' words), and they appear nowhere in jobs/ or bot/ outside its own folder and
jobs/composition.py, except the entries of ALLOWED below, each with its reason. A mode-level
feature (campaigns) is also at home in its modules in the hosts, all that its Removal
(scripts/removal_drill.py) deletes. Held like the Redis keys' home (tests/bot/plumbing/test_keys.py)
and the trailers' (tests/jobs/kernel/test_trailers.py).

The identifiers are collected from what each one registers (its `FeatureParts`: gate rows,
failure causes, batch statuses, record part, former fields, config keys; a recipe's rules) and
from its folder's source (the pydantic models it defines, the error codes it raises, its `## `
sections and the constants of texts.py and *_texts.py; a mode-level feature's enums too), not
listed by hand. A use is a string literal equal to the name, or a Python name, attribute,
keyword or import of it; the task center's templates are read too.
"""

from __future__ import annotations

import ast
import enum
import importlib
import pkgutil
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel

from jobs.composition import BUILT_IN, FEATURES, install
from jobs.kernel.feature_parts import FeatureParts
from tests.kit.spelled import spelled_strings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import removal_drill  # noqa: E402 - scripts/ is not a package

SCANNED = (ROOT / "jobs", ROOT / "bot")
TEMPLATES = ROOT / "bot" / "taskcenter" / "templates"
COMPOSITION = ROOT / "jobs" / "composition.py"

# The llm recipe (the editor, jobs/recipes/llm/) and the llm feature (its ties to the loop,
# jobs/features/llm/) are one capability in two folders: each is the other's home too.
LLM = (ROOT / "jobs" / "features" / "llm", ROOT / "jobs" / "recipes" / "llm",
       ROOT / "jobs" / "recipes" / "llm_settings.py")
SHARED_HOMES = {"llm": LLM}
# The mode-level features (no part of the loop, so not in FEATURES): each is at home in its
# folder and in its modules in the hosts that plug it in, all that its Removal deletes.
MODE_LEVEL = ("campaigns",)
# The repository config has one schema, RepoConfig and the blocks it types (check-config and the
# docs' reference read it): a config key is spelled there too.
CONFIG_SCHEMA = ("jobs/inputs/config.py", "jobs/inputs/ci_config.py",
                 "jobs/inputs/evidence_config.py")
# (owner, identifier, path relative to ROOT) -> why it may be there. Short, on purpose.
ALLOWED: dict[tuple[str, str, str], str] = {
    ("base_moves", "base_merge", "jobs/kernel/record_upgrades.py"):
        "records of earlier releases named a failure gate's cause by its report code only",
    ("llm", "llm", "bot/cli/main.py"): "`stepwise llm-report` asks the feature's report by name",
    ("llm", "llm", "jobs/inputs/spec.py"): "the spec's `recipe: llm` (the Recipe enum) and the "
                                           "`fallback: llm` it accepts",
    ("llm", "llm", "jobs/recipes/command.py"): "recipe command's `fallback: llm` hands a file to "
                                               "the llm recipe",
    ("llm", "llm", "jobs/features/base_moves/rules.py"): "a `fallback: llm` batch is not "
                                                         "replayed (a model may have edited it)",
    ("evidence", "evidence", "jobs/kernel/feature_parts.py"): "the note slot `evidence` (where "
                                                              "sections go), not the config key",
    ("evidence", "evidence", "jobs/decisions/edit_shapes.py"): "a campaign sums its jobs' edit "
        "shapes from evidence's part (features are independent: campaigns cannot import it)",
    ("evidence", "shapes", "jobs/decisions/edit_shapes.py"): "the facet of evidence's part that "
                                                             "sum reads",
    ("llm", "llm", "jobs/inputs/config.py"): "the config's `llm:` block (RepoConfig), not the "
                                             "record part of the same name",
    ("evidence", "evidence", "jobs/inputs/config.py"): "the config's `evidence:` block "
                                                       "(RepoConfig), not the record part",
    ("evidence", "evidence", "jobs/inputs/evidence_config.py"): "the same block, named in its "
                                                                "own errors",
    ("evidence", "evidence", "bot/taskcenter/templates/_evidence.html"): "the style of a table "
        "of commands' evidence (CommandEvidence, the kernel's), not the feature's part",
    ("environments", "environment", "jobs/kernel/records.py"): "the failure check's cause "
        "`environment` (a validation that fails for the environment, not the edit)",
    ("environments", "environment", "jobs/decisions/blame.py"): "the same cause, where it is "
                                                                "decided",
    ("environments", "environments", "bot/github/observer.py"): "GitHub's REST path word "
                                                                "(deployment environments)",
    ("ci", "ci", "bot/events.py"): "the webhook event kind `ci` (check runs, statuses)",
    ("ci", "ci", "bot/plumbing/idle_index.py"): "the idle index's bucket of jobs waiting for CI",
    ("ci", "ci", "bot/taskcenter/templates/_ci.html"): "the task center's CI panel shows the "
                                                        "wait's timeout and reads CI's part",
    ("ci", "ci", "bot/taskcenter/templates/_ci_withdrawn.html"): "the task center's line of an "
        "attempt CI withdrew reads CI's part of the batch (a template cannot ask a hook)",
    ("ci", "ci", "jobs/inputs/config.py"): "the config's `ci:` block (RepoConfig), not the "
                                           "record part of the same name",
}


@dataclass(frozen=True)
class Owned:
    owner: str
    name: str
    what: str  # "gate kind", "record model", ...
    home: tuple[Path, ...]


def _folder_sources(home: tuple[Path, ...]) -> Iterator[tuple[Path, str]]:
    for place in home:
        for path in sorted(place.rglob("*.py")) if place.is_dir() else [place]:
            yield path, path.read_text(encoding="utf-8")


def _error_codes(home: tuple[Path, ...]) -> set[str]:
    """The `code="..."` literals its folder raises or reports."""
    return {kw.value.value for _, source in _folder_sources(home)
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            for kw in node.keywords if kw.arg == "code" and isinstance(kw.value, ast.Constant)
            and isinstance(kw.value.value, str)}


def _models(part: type[BaseModel], module_prefix: tuple[str, ...]) -> set[str]:
    """Its record part's model and the models of its folder the part holds (field by field)."""
    found, pending = set(), [part]
    while pending:
        model = pending.pop()
        if model.__name__ in found or not model.__module__.startswith(module_prefix):
            continue
        found.add(model.__name__)
        for info in model.model_fields.values():
            pending += [held for held in _types_in(info.annotation)
                        if isinstance(held, type) and issubclass(held, BaseModel)]
    return found


def _types_in(annotation: object) -> list[object]:
    return [annotation, *(held for arg in get_args(annotation) for held in _types_in(arg))]


def _texts(home: Path) -> list[tuple[str, str]]:
    """Its words: the change note's sections it writes (`## Base merges`) and the constants of
    its texts modules (texts.py, *_texts.py: `SECTION = "Evidence"`, a facet's name, ...)."""
    owned = []
    for path, source in _folder_sources((home,)):
        tree = ast.parse(source)
        owned += [(text, "note section") for _, text in spelled_strings(tree, docstrings=False)
                  if text.startswith("## ") and text[3:].replace("{}", "").strip()]
        if path.name == "texts.py" or path.name.endswith("_texts.py"):
            owned += [(node.value.value, "text") for node in tree.body
                      if isinstance(node, ast.Assign | ast.AnnAssign)
                      and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    return owned


def _feature_names(name: str, parts: FeatureParts | None) -> list[tuple[str, str]]:
    home = ROOT / "jobs" / "features" / name
    owned = [(code, "error code") for code in _error_codes((home,))] + _texts(home)
    if parts is not None:
        owned += [(row.kind, "gate kind") for row in parts.gates]
        owned += [(row.cause, "cause of failure") for row in parts.failure_causes]
        owned += [(row.word, "batch status") for row in parts.batch_statuses]
        owned += [(key, "config key") for key in parts.config_keys]
        for model, former in ((parts.job_part, parts.former_fields),
                              (parts.batch_part, parts.former_batch_fields)):
            if model is not None:
                owned += [(model.PART, "record part")]
                owned += [(held, "record model")
                          for held in _models(model, ("jobs.features.", "jobs.recipes."))]
                owned += [(key, "former record field") for key in former]
    return owned


def _mode_level_names(name: str) -> list[Owned]:
    """Its models and enums (records, states, verbs) and the error codes of its home."""
    removal = next(r for r in removal_drill.REMOVALS if r.name == name)
    home = tuple(ROOT / path for path in removal.paths)
    package = importlib.import_module(f"jobs.features.{name}")
    found = [Owned(name, code, "error code", home)
             for code in sorted(_error_codes(tuple(p for p in home if p.suffix != ".html")))]
    for module in pkgutil.iter_modules(package.__path__):
        for held in vars(importlib.import_module(f"{package.__name__}.{module.name}")).values():
            if isinstance(held, type) and held.__module__.startswith(package.__name__) and \
                    issubclass(held, BaseModel | enum.Enum):
                found.append(Owned(name, held.__name__, "record model", home))
    return sorted(set(found), key=lambda o: o.name)


def owned_names() -> list[Owned]:
    install()
    found: list[Owned] = [owned for name in MODE_LEVEL for owned in _mode_level_names(name)]
    for feature in FEATURES:
        if not (ROOT / "jobs" / "features" / feature.name).is_dir():
            continue  # the engine's own entry (branch): no folder
        home = (ROOT / "jobs" / "features" / feature.name, COMPOSITION,
                *SHARED_HOMES.get(feature.name, ()))
        found += [Owned(feature.name, name, what, home)
                  for name, what in sorted(set(_feature_names(feature.name, feature.parts)))]
    for recipe in BUILT_IN:
        name = recipe.rules.name
        folder = ROOT / "jobs" / "recipes" / name
        home = (folder if folder.is_dir() else folder.with_suffix(".py"), COMPOSITION,
                *SHARED_HOMES.get(name, ()))
        codes = _error_codes(home[:1])
        models = {recipe.rules.options.__name__} if recipe.rules.options else set()
        found += [Owned(name, code, "error code", home) for code in sorted(codes)]
        found += [Owned(name, model, "spec options model", home) for model in sorted(models)]
    return found


# How each kind of name is used: as text (a string literal, e.g. a gate kind a record stores),
# as a Python name (a model), as a config key (text, or `config.<key>`) or as a field of the
# record (text, or `job.<field>`).
TEXT, NAME, CONFIG, FIELD = "text", "name", "config", "field"
HOW = {"gate kind": TEXT, "cause of failure": TEXT, "batch status": TEXT, "error code": TEXT,
       "record part": TEXT, "config key": CONFIG, "record model": NAME, "former record field": FIELD,
       "spec options model": NAME, "note section": TEXT, "text": TEXT}
RECORDS = {"job", "stored", "record", "before", "batch"}  # what the code calls a record


def _uses(source: str) -> dict[str, dict[str, list[int]]]:
    """The names `source` uses, by how (TEXT: a string literal outside docstrings; NAME: a
    Python name, attribute, keyword, definition or import; CONFIG: an attribute read of a
    `config`), each with its lines."""
    tree = ast.parse(source)
    used: dict[str, dict[str, list[int]]] = {TEXT: {}, NAME: {}, CONFIG: {}, FIELD: {}}
    for line, text in spelled_strings(tree, docstrings=False):
        used[TEXT].setdefault(text, []).append(line)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
            inner = node.value
            if (isinstance(inner, ast.Name) and inner.id == "config") or \
                    (isinstance(inner, ast.Attribute) and inner.attr == "config"):
                used[CONFIG].setdefault(node.attr, []).append(node.lineno)
            if ((isinstance(inner, ast.Name) and inner.id in RECORDS) or
                    (isinstance(inner, ast.Attribute) and inner.attr in RECORDS)) and \
                    id(node) not in called:  # `record.split("\0")` calls a method of a str
                used[FIELD].setdefault(node.attr, []).append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        elif isinstance(node, ast.ClassDef | ast.FunctionDef):
            names = [node.name]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
        for name in names:
            used[NAME].setdefault(name, []).append(getattr(node, "lineno", 0))
    for text, lines in used[TEXT].items():
        used[CONFIG].setdefault(text, []).extend(lines)
        used[FIELD].setdefault(text, []).extend(lines)
    return used


def _template_uses(text: str) -> dict[str, dict[str, list[int]]]:
    """A template's uses: `.name` reads (NAME), `config.key` reads (CONFIG), quoted text (TEXT)."""
    used: dict[str, dict[str, list[int]]] = {TEXT: {}, NAME: {}, CONFIG: {}, FIELD: {}}
    for number, line in enumerate(text.splitlines(), 1):
        for word in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", line):
            used[NAME].setdefault(word, []).append(number)
        for word in re.findall(r"\bjob\.([A-Za-z_][A-Za-z0-9_]*)", line):
            used[FIELD].setdefault(word, []).append(number)
        for word in re.findall(r"config\.([A-Za-z_][A-Za-z0-9_]*)", line):
            used[CONFIG].setdefault(word, []).append(number)
        for word in re.findall(r"['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]", line):
            used[TEXT].setdefault(word, []).append(number)
    return used


def _scanned() -> Iterator[tuple[Path, dict[str, dict[str, list[int]]]]]:
    for top in SCANNED:
        for path in sorted(top.rglob("*.py")):
            yield path, _uses(path.read_text(encoding="utf-8"))
    for path in sorted(TEMPLATES.rglob("*.html")):
        yield path, _template_uses(path.read_text(encoding="utf-8"))


def strays(owned: list[Owned]) -> list[str]:
    """Where an owned name appears outside its home and the allowlist."""
    found = []
    for path, used in _scanned():
        where = str(path.relative_to(ROOT))
        for item in owned:
            if any(path == home or home in path.parents for home in item.home):
                continue
            uses = used[HOW[item.what]]
            if HOW[item.what] == CONFIG and where in CONFIG_SCHEMA:
                continue
            if item.name in uses and (item.owner, item.name, where) not in ALLOWED:
                lines = ",".join(map(str, sorted(set(uses[item.name]))[:5]))
                found.append(f"{where}:{lines}: {item.owner}'s {item.what} `{item.name}`")
    return found


def test_each_feature_and_recipe_owns_names() -> None:
    """The collection finds what each registers (so the check below checks something)."""
    owned = {(o.owner, o.what, o.name) for o in owned_names()}
    assert {("base_moves", "record model", "BaseMoves"), ("base_moves", "record part", "base_moves"),
            ("base_moves", "former record field", "base_merges"),
            ("base_moves", "gate kind", "conflict"), ("base_moves", "cause of failure", "base_merge"),
            ("base_moves", "config key", "update_from_base"), ("ci", "gate kind", "ci_failed"),
            ("llm", "gate kind", "budget"), ("llm", "error code", "llm_turns_spent"),
            ("environments", "record model", "EnvironmentRecord"),
            ("environments", "record part", "environments"),
            ("environments", "former record field", "environment"),
            ("bisect", "record model", "BatchSplit"), ("bisect", "record model", "SplitState"),
            ("bisect", "record model", "SubsetResult"), ("bisect", "record part", "bisect"),
            ("bisect", "former record field", "split_from"),
            ("evidence", "record part", "evidence"), ("evidence", "record model", "BatchEvidence"),
            ("evidence", "record model", "JobEvidence"), ("evidence", "record model", "BatchTests"),
            ("evidence", "record model", "CoverageRecord"), ("evidence", "text", "Evidence"),
            ("bisect", "note section", "## Split batches"),
            ("base_moves", "note section", "## Base merges"),
            ("ci", "record part", "ci"), ("ci", "record model", "CiJob"),
            ("ci", "record model", "CiBatch"), ("ci", "record model", "CiWait"),
            ("ci", "record model", "CiResult"), ("ci", "record model", "CiCheck"),
            ("ci", "record model", "CiWithdrawal"), ("ci", "former record field", "ci_wait"),
            ("ci", "former record field", "ci_results"), ("ci", "batch status", "awaiting_ci"),
            ("campaigns", "record model", "Campaign"), ("campaigns", "record model", "RepoState"),
            ("campaigns", "error code", "campaign_busy")} <= owned


def test_names_stay_home() -> None:
    found = strays(owned_names())
    assert found == [], ("a feature's or a recipe's name is used outside its folder: reach it "
                         "through its hooks (jobs/composition.py), or add an entry with its "
                         "reason to ALLOWED in tests/test_names_stay_home.py:\n" + "\n".join(found))


def test_every_allowlist_entry_is_still_needed() -> None:
    owned = owned_names()
    used = {(o.owner, o.name, str(p.relative_to(ROOT))) for p, names in _scanned()
            for o in owned if o.name in names[HOW[o.what]]}
    assert sorted(set(ALLOWED) - used) == []


@pytest.mark.parametrize(("source", "hits"), [
    ('x = job.parts["base_moves"]\n', ["base_moves"]),
    ("from jobs.features.base_moves.record import BaseMoves\n", ["BaseMoves"]),
    ("job.base_merges.append(1)\n", ["base_merges"]),
    ("engine.job.base_merges = []\nsettings.base_merges = 1\n", ["base_merges"]),
    ("if job.config.update_from_base == 'never': pass\n", ["update_from_base"]),
    ('"""Docstrings may say base_moves, BaseMoves, update_from_base."""\n', []),
    ("base_moves = 1\nevent.update_from_base = 2\n", []),  # a Python name is not the text
    ('sha, rest = record.base_merges("\\0", 1)\n', []),  # a method called, not a field read
    ('lines += ["", "## Base merges", ""]\n', ["## Base merges"]),  # a feature's note section
])
def test_the_scan_sees_literals_names_config_reads_and_imports_but_not_docstrings(
        source: str, hits: list[str]) -> None:
    items = [("base_moves", "record part"), ("BaseMoves", "record model"),
             ("base_merges", "former record field"), ("update_from_base", "config key"),
             ("## Base merges", "note section")]
    used = _uses(source)
    assert [name for name, what in items if name in used[HOW[what]]] == hits
