"""The documentation site (mkdocs.yml, docs/): it builds with --strict, its reference pages are
generated from the code with an entry for everything that exists and nothing that does not, and
the pages' hand-written text names only commands, verbs and gates that exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "scripts"))

import docs_reference  # noqa: E402 - scripts/ is not a package


def pages() -> dict[str, str]:
    return {str(path.relative_to(DOCS)): path.read_text(encoding="utf-8")
            for path in sorted(DOCS.rglob("*.md")) if "agent-changes" not in path.parts}


def nav_pages() -> set[str]:
    def walk(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [page for value in node.values() for page in walk(value)]
        if isinstance(node, list):
            return [page for value in node for page in walk(value)]
        return []

    class Loader(yaml.SafeLoader):
        """mkdocs.yml names a Python function with a `!!python/name:` tag: read it as null."""

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    return set(walk(config["nav"]))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`make docs`: no warning, no broken internal link or anchor, no page outside the nav."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": str(Path(sys.executable).parent), "NO_MKDOCS_2_WARNING": "1"},
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    config = (tmp_path / "site" / "reference" / "config" / "index.html").read_text()
    assert "<code>batch_size</code>" in config  # a generated table, rendered


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    assert set(pages()) == nav_pages()


def test_every_generated_part_is_shown_and_every_marker_names_a_part() -> None:
    used = {name for text in pages().values() for name in docs_reference.MARKER.findall(text)}
    assert used == set(docs_reference.PARTS)


def test_nothing_that_exists_lacks_its_meaning() -> None:
    assert docs_reference.undocumented() == []


def test_an_undocumented_config_key_is_found() -> None:
    """The check that keeps the reference whole, shown failing: a config key added without a
    docstring is named."""
    from pydantic import Field

    from jobs.inputs.config import RepoConfig

    class WithANewKey(RepoConfig):
        """The repository config with one key more."""

        shiny_new_key: int = Field(default=1)

    assert docs_reference.undocumented_keys((WithANewKey,)) == [
        "key `shiny_new_key` of WithANewKey has no docstring"]


def test_the_reference_names_every_key_command_gate_setting_and_metric() -> None:
    from bot.commands import COMMANDS
    from bot.settings import Settings
    from jobs.inputs.config import RepoConfig
    from jobs.inputs.spec import TaskSpec
    from jobs.kernel.model import GATES

    config, spec = docs_reference.config_keys(), docs_reference.spec_keys()
    for info in RepoConfig.model_fields.values():
        key = info.alias
        assert key is None or f"| `{key}" in config
    for name in TaskSpec.model_fields:
        assert f"| `{name}` |" in spec
    commands = docs_reference.comment_commands()
    assert all(f"/stepwise {command.verb}" in commands for command in COMMANDS)
    gates = docs_reference.gates()
    assert all(f"| `{kind}` |" in gates for kind in GATES)
    settings = docs_reference.settings()
    assert all(f"`STEPWISE_{name.upper()}`" in settings for name in Settings.model_fields)
    cli = docs_reference.cli_reference()
    for command in ("run", "approve", "status", "serve", "worker", "check-config", "campaign"):
        assert f"### `stepwise {command}`" in cli
    metrics = docs_reference.metrics()
    for name in ("stepwise_jobs", "stepwise_batches_total", "stepwise_workers",
                 "stepwise_github_rate_limit_remaining", "stepwise_redis_up"):
        assert f"| `{name}` |" in metrics


def test_hand_written_text_names_only_commands_that_exist() -> None:
    """A `/stepwise VERB` or a `stepwise COMMAND` written in any page (or the README) is a verb
    of the registry and a command of the CLI."""
    from bot.commands import COMMANDS

    verbs = {command.verb for command in COMMANDS}
    cli = set(re.findall(r"### `stepwise ([\w-]+)", docs_reference.cli_reference()))
    texts = {**pages(), "README.md": (ROOT / "README.md").read_text()}
    wrong = []
    for name, text in texts.items():
        text = re.sub(r"<!-- generated: [a-z-]+ -->", "", text)
        wrong += [f"{name}: /stepwise {verb}" for verb in
                  re.findall(r"(?<![\w/])/stepwise ([a-z][\w-]*)", text) if verb not in verbs]
        wrong += [f"{name}: stepwise {command}" for command in
                  re.findall(r"(?<!``)`stepwise ([a-z][\w-]*)", text) if command not in cli]
    assert wrong == []


@pytest.mark.parametrize("page", ["reference/gates.md", "guides/gates.md"])
def test_gate_pages_show_the_feature_gates(page: str) -> None:
    rendered = docs_reference.render(pages()[page])
    assert "| `plan` |" in rendered and "| `ci_failed` |" in rendered
