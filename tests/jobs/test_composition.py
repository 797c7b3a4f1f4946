"""Explicit composition (issue 29, item 4): importing a module registers nothing; each
composition root (local mode, the server wiring, the web app, the CLI) installs the built-in
recipes itself; and the pure rooms import no I/O library, so a pure module loads in a fraction
of what the whole engine costs. Each import check runs in a fresh interpreter."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from bot.cli.main import app as cli_app
from bot.server.context import ServerContext
from bot.settings import Settings
from bot.web.app import create_app
from jobs.composition import BUILT_IN
from jobs.inputs import recipes
from jobs.recipes import EDITORS
from tests.kit.local_e2e import build_sample, session

ROOT = Path(__file__).resolve().parents[2]
# What a pure room may never load: the libraries of the outside world (the stdlib's
# `subprocess` included: a pure module runs no program).
IO_LIBRARIES = ("subprocess", "redis", "rq", "openai", "githubkit", "httpx")


def installed(names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` without a removed feature's (its folder under jobs/features gone, as
    scripts/removal_drill.py removes it): the rooms outside jobs/features are always there."""
    return tuple(name for name in names if not name.startswith("jobs.features.")
                 or (ROOT / "jobs" / "features" / name.split(".")[2]).is_dir())


# The pure rooms: every module under these packages, and these modules.
PURE_PACKAGES = installed(("jobs.basics", "jobs.inputs", "jobs.kernel", "jobs.decisions",
                           "jobs.notes", "jobs.features.campaigns"))
PURE_MODULES = installed((
    "jobs.ports", "jobs.features.bisect.rules", "jobs.features.bisect.sizing",
    "jobs.features.llm.budget", "jobs.features.llm.note", "jobs.features.llm.statistics",
    "jobs.features.llm.usage"))
RUNS_PROGRAMS = re.compile(r"^\s*(?:import|from)\s+(?:subprocess|os\.spawn)\b", re.MULTILINE)
BUILT_IN_NAMES = sorted(recipe.rules.name for recipe in BUILT_IN)


def fresh(code: str) -> Any:
    """Run `code` in a new interpreter from the repository root; return the JSON it prints."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


LOADED = """
import importlib, json, pkgutil, sys
before = set(sys.modules)
names = list({modules})
for package in {packages}:
    names += [package] + [info.name for info in pkgutil.walk_packages(
        importlib.import_module(package).__path__, package + ".")]
for name in names:
    importlib.import_module(name)
print(json.dumps({{"names": names, "new": sorted(set(sys.modules) - before)}}))
"""


def test_importing_the_entry_modules_registers_no_recipe() -> None:
    registered = fresh("import json, jobs, jobs.recipes, jobs.local, bot.server.context, "
                       "bot.web.app, bot.cli.main\nfrom jobs.inputs.recipes import RECIPES\n"
                       "from jobs.recipes import EDITORS\n"
                       "print(json.dumps([sorted(RECIPES), sorted(EDITORS)]))")
    assert registered == [[], []]


def test_the_pure_rooms_load_no_io_library_and_no_module_that_runs_programs() -> None:
    loaded = fresh(LOADED.format(modules=PURE_MODULES, packages=PURE_PACKAGES))
    assert len(loaded["names"]) > 50  # every pure module was imported, not an empty list
    io = [name for name in loaded["new"] if name.split(".")[0] in IO_LIBRARIES]
    assert io == []
    ours = [name for name in loaded["new"] if name.split(".")[0] in ("jobs", "bot")]
    impure = [name for name in ours if not name.startswith(PURE_PACKAGES + PURE_MODULES)
              and name not in ("jobs", "jobs.features", "jobs.features.bisect", "jobs.features.llm")]
    assert impure == []
    running = [name for name in ours if RUNS_PROGRAMS.search(_source(name))]
    assert running == []


def _source(module: str) -> str:
    path = ROOT.joinpath(*module.split("."))
    file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return file.read_text(encoding="utf-8")


def test_composing_loads_no_model_client_until_a_model_is_called() -> None:
    """The `openai` client (some 500 modules) loads when a model is first called, not when a
    process composes the engine: the web app, a `replace` job and the benchmarks never pay."""
    loaded = fresh("import json, sys\nimport bot.web.app, jobs.local\n"
                   "from jobs.composition import install\ninstall()\n"
                   "print(json.dumps('openai' in sys.modules))")
    assert loaded is False


def test_a_pure_module_loads_a_fraction_of_the_engine() -> None:
    # Before issue 29, `import jobs.inputs.spec` loaded 365 modules (the whole engine, openai's
    # client among them, through jobs/__init__.py's registration): 39 of them Stepwise's.
    spec = fresh(LOADED.format(modules=("jobs.inputs.spec",), packages=()))
    engine = fresh(LOADED.format(modules=("jobs.local",), packages=()))
    ours = [name for name in spec["new"] if name.startswith("jobs")]
    assert len(ours) <= 12, ours
    assert len(spec["new"]) * 2 < len(engine["new"]), (len(spec["new"]), len(engine["new"]))


@pytest.fixture
def nothing_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty registry, as in a fresh process (the test kit installed the recipes)."""
    monkeypatch.setattr(recipes, "RECIPES", {})
    monkeypatch.setattr("jobs.recipes.EDITORS", {})
    yield


def _installed() -> tuple[list[str], list[str]]:
    from jobs import recipes as editor_registry  # the editors' side (jobs/recipes/__init__.py)
    return sorted(recipes.RECIPES), sorted(editor_registry.EDITORS)


@pytest.mark.usefixtures("nothing_registered")
def test_local_mode_installs_the_built_in_recipes(tmp_path: Path) -> None:
    session(build_sample(tmp_path / "repo"))
    assert _installed() == (BUILT_IN_NAMES, BUILT_IN_NAMES)


@pytest.mark.usefixtures("nothing_registered")
def test_the_server_wiring_installs_the_built_in_recipes() -> None:
    ServerContext(settings=Settings(webhook_secret="s", app_slug="stepwise"), redis=None,
                  store=None, github=None, sandbox=None)  # type: ignore[arg-type]
    assert _installed() == (BUILT_IN_NAMES, BUILT_IN_NAMES)


@pytest.mark.usefixtures("nothing_registered")
def test_the_web_app_installs_the_built_in_recipes() -> None:
    create_app(Settings(webhook_secret="s", app_slug="stepwise"),
               redis.Redis(host="127.0.0.1", port=1))  # never connected
    assert _installed() == (BUILT_IN_NAMES, BUILT_IN_NAMES)


@pytest.mark.usefixtures("nothing_registered")
def test_the_command_line_installs_the_built_in_recipes(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli_app, ["jobs", "--repo", str(build_sample(tmp_path / "r"))])
    assert result.exit_code == 0, result.output
    assert _installed() == (BUILT_IN_NAMES, BUILT_IN_NAMES)


def test_installing_twice_changes_nothing_and_a_clash_is_refused() -> None:
    from jobs.recipes import install_recipes
    before = dict(EDITORS)
    install_recipes(BUILT_IN)
    assert dict(EDITORS) == before
    other = dataclasses.replace(BUILT_IN[0], editor=lambda *_args, **_kwargs: None)
    with pytest.raises(ValueError, match="already has an editor"):
        install_recipes((other,))
