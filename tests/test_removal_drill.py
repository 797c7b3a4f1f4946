"""The removal drill in CI (issue 42, "Done when"): scripts/removal_drill.py takes each loop
feature and the `command` and `llm` recipes out of a copy of the tree, one at a time, and what
is left must still type-check, keep the import contracts and pass the kernel, engine, decisions
and notes tests and the local end-to-end test; the removals known not to pass yet (its
`BLOCKED`, each with why) must still fail, so the list is kept true. One test per removal, each
drilling its removal alone (`--jobs 1`): pytest-xdist's other workers run the rest of the suite
meanwhile, and a failure names the removal. And the one exception of the modes' import contract
(a mode-level feature's own modules in the hosts may import it) is held to what that feature's
Removal deletes."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DRILL = ROOT / "scripts" / "removal_drill.py"
sys.path.insert(0, str(DRILL.parent))

import removal_drill  # noqa: E402 - scripts/ is not a package

MODES = "the modes reach features and the llm recipe only through jobs.composition"


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("name", [r.name.replace(" ", "-") for r in removal_drill.REMOVALS])
def test_each_feature_and_recipe_can_be_taken_out(name: str) -> None:
    done = subprocess.run([sys.executable, str(DRILL), "--jobs", "1", name], cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=1100)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert "removal drill: " in done.stdout


def _path(module: str) -> str:
    """The file or folder of a module pattern of an import contract (`bot.server.campaigns.*`)."""
    return module.removesuffix(".*").replace(".", "/")


def test_a_mode_imports_a_feature_only_from_modules_its_removal_deletes() -> None:
    """The modes' import contract ignores an import into a feature only from that feature's own
    modules in the hosts (a mode-level feature's: campaigns'), which its Removal deletes with
    the feature's folder: no host module may lean on a feature through the exception."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    modes = next(c for c in contracts["contracts"] if c["name"] == MODES)
    assert modes["ignore_imports"], "no exception left: drop this test"
    for ignored in modes["ignore_imports"]:
        importer, _, imported = ignored.partition(" -> ")
        owners = [r for r in removal_drill.REMOVALS if _path(imported) in r.paths]
        assert owners, f"{ignored}: {_path(imported)} is no feature folder a Removal deletes"
        deleted = owners[0].paths
        assert any(_path(importer) == path or _path(importer).startswith(f"{path}/")
                   or f"{_path(importer)}.py" == path for path in deleted), \
            f"{ignored}: {importer} is not deleted with {owners[0].name} (scripts/removal_drill.py)"
