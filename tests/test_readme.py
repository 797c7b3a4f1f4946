"""The README and the pages that describe the code, against the code: the README starts people
(the two commands first, at most 150 lines, every link alive), the state diagrams of
docs/reference/state-machine.md match the transition tables of jobs/kernel/model.py, the
architecture page maps every folder, the install guide lists exactly app.yml's permissions, and
every section the README once held has a home in the site."""

from __future__ import annotations

import ast
import re
from inspect import getsourcefile
from pathlib import Path

from bot.commands import COMMANDS
from jobs.composition import BUILT_IN
from jobs.kernel.model import BATCH_TRANSITIONS, JOB_TRANSITIONS
from tests.kit.docs import DOCS, page

README = Path(__file__).resolve().parents[1] / "README.md"
EDGE = re.compile(r"^\s*(\w+) --> (\w+)")


def diagram_edges() -> list[set[tuple[str, str]]]:
    blocks = re.findall(r"```mermaid\n(.*?)```", page("reference/state-machine.md"), flags=re.S)
    return [
        {m.groups() for line in block.splitlines() if (m := EDGE.match(line))} for block in blocks
    ]


def table_edges(table: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(str(a), str(b)) for a, targets in table.items() for b in targets}


def test_job_diagram_matches_transition_table() -> None:
    assert diagram_edges()[0] == table_edges(JOB_TRANSITIONS)


def test_batch_diagram_matches_transition_table() -> None:
    assert diagram_edges()[1] == table_edges(BATCH_TRANSITIONS)


def test_readme_first_screen_gives_the_two_commands() -> None:
    first_screen = "\n".join(README.read_text().splitlines()[:15])
    assert "./scripts/demo" in first_screen
    assert "./scripts/test" in first_screen
    ci = (README.parent / ".ci" / "run").read_text()
    assert "./scripts/test" in ci


def layout_section() -> str:
    return page("contributing/architecture.md")


def packages() -> list[Path]:
    """Every folder of jobs/ and bot/ that is a package (the demo's sample repository is data)."""
    root = README.parent
    return sorted(init.parent.relative_to(root) for top in ("jobs", "bot")
                  for init in (root / top).rglob("__init__.py") if "sample" not in init.parts)


def contract_of(package: Path) -> str:
    """A folder's contract: its `__init__.py` docstring."""
    tree = ast.parse((README.parent / package / "__init__.py").read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def test_the_architecture_page_is_a_map_of_every_folder() -> None:
    """The architecture page names every package of jobs/ and bot/ by its path (`jobs/engine/`), and only
    folders that exist."""
    layout = layout_section()
    missing = [f"{package}/" for package in packages() if f"`{package}/`" not in layout]
    assert missing == []
    named = set(re.findall(r"`((?:jobs|bot)/[\w/]*/)`", layout))
    assert sorted(f for f in named if not (README.parent / f).is_dir()) == []


def test_every_folder_opens_with_a_contract_naming_its_modules() -> None:
    """Each package's docstring says what lives there and names each of its modules (`name.py`);
    the verbs are "one module per verb", the recipes "one module per recipe" (a new one needs
    no new line)."""
    verbs = {spec.verb.replace("-", "_") + ".py" for spec in COMMANDS}
    recipes = {Path(getsourcefile(recipe.editor) or "").name for recipe in BUILT_IN}
    unnamed = []
    for package in packages():
        contract = contract_of(package)
        assert len(contract) > 40, f"{package}/__init__.py has no contract docstring"
        for module in sorted((README.parent / package).glob("*.py")):
            if module.name == "__init__.py":
                continue
            if package.parts == ("bot", "commands") and module.name in verbs:
                continue
            if package.parts == ("jobs", "editors") and module.name in recipes:
                continue
            if f"{module.name}" not in contract:
                unnamed.append(f"{package}/{module.name}")
    assert unnamed == []
    assert "one module per verb" in contract_of(Path("bot/commands"))
    assert "one module per recipe" in contract_of(Path("jobs/recipes"))


def test_the_docs_explain_what_a_newcomer_needs_without_design_md() -> None:
    local = "\n".join(page(name) for name in (
        "getting-started/first-local-job.md", "guides/writing-a-task.md",
        "guides/repository-config.md", "guides/environments.md"))
    assert "../shared/DESIGN.md" not in local  # a clone has no DESIGN.md beside it
    for topic in ("{files}", "exit code is evidence", "done_when", "`setup`", "`env`",
                  "`command_timeout`", "`allow_test_edits`", "`protected_paths`",
                  "PATH", "virtualenv", "`6` busy", "stepwise jobs --repo PATH",
                  "stepwise --version", "interrupted", "left out"):
        assert topic in local, topic


def test_the_install_guides_permission_list_is_exactly_app_yml() -> None:
    """Every permission `app.yml` asks for is in the install guide's list at its level, with a reason,
    and the list names nothing the manifest does not ask for."""
    import yaml

    manifest = yaml.safe_load((README.parent / "app.yml").read_text(encoding="utf-8"))
    block = re.search(r"<!-- permissions:start -->(.*?)<!-- permissions:end -->",
                      page("getting-started/install-app.md"), flags=re.S)
    assert block is not None
    listed = re.findall(r"^\s*- `(\w+): (\w+)`[^:]*: \S", block.group(1), flags=re.M)
    assert dict(listed) == manifest["default_permissions"]
    assert len(listed) == len(dict(listed))


def test_readme_is_a_front_page() -> None:
    """At most 150 lines: what it does and never does, the two commands, installing the CLI, a
    first job, the App in five steps, how it works, a map of the docs, contributing and licence."""
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    for heading in ("## What it does, and what it never does", "## Install the CLI",
                    "## A first job, in ten lines", "## On GitHub, in five steps",
                    "## How it works", "## Documentation", "## Contributing, status and licence"):
        assert heading in text, heading
    assert "```mermaid" in text and "docs/taskcenter.png" in text


def test_readme_links_lead_somewhere() -> None:
    text = README.read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    missing = [target for target in targets if not (README.parent / target).exists()]
    assert missing == []


# Every section the README held before the site (the README of 0.1.0) and the page that holds it.
OLD_README_SECTIONS = {
    "Using it on your repository (local mode)": "getting-started/first-local-job.md",
    "The `stepwise` block: every key": "guides/writing-a-task.md",
    "Repository config: `.github/stepwise.yml`": "guides/repository-config.md",
    "When the base branch moves: `update_from_base`": "guides/base-moves.md",
    "Environments: what `setup` builds": "guides/environments.md",
    "Safety rules": "guides/safety.md",
    "Split batches: when a batch of several files fails": "guides/failures.md",
    "Language-model edits (`recipe: llm`)": "guides/llm.md",
    "Campaigns: one change across many repositories": "guides/campaigns.md",
    "State machine": "reference/state-machine.md",
    "Layout": "contributing/architecture.md",
    "Server mode: the GitHub App": "getting-started/install-app.md",
    "Commits GitHub signs": "guides/signed-commits.md",
    "The repository's CI as a verifier": "guides/ci.md",
    "GitHub's limits and rate limits": "operating/github-limits.md",
    "Commands (in an issue or PR comment)": "reference/commands.md",
    "Install the app on your repositories": "getting-started/install-app.md",
    "Task center and observability": "guides/task-center.md",
    "Metrics: `GET /metrics` (Prometheus)": "reference/metrics.md",
    "Structured logs": "reference/logs.md",
    "More documentation": "index.md",
}


def test_every_old_readme_section_has_a_home_in_the_site() -> None:
    homeless = [f"{section} -> {name}" for section, name in OLD_README_SECTIONS.items()
                if not (DOCS / name).is_file() or len(page(name).splitlines()) < 5]
    assert homeless == []



def test_every_path_the_architecture_page_names_exists() -> None:
    """The architecture page's paths (`jobs/engine/context.py`, `tests/jobs/recipes/`,
    `pyproject.toml`, ...) are files and folders of the tree; a path with a `<name>` to fill
    in (`jobs/features/<name>/`) is an example to create, not read."""
    named = set(re.findall(r"`((?:jobs|bot|tests|scripts|docs|bench)/[\w./-]*|[\w-]+\.(?:toml|yml))`",
                           layout_section()))
    assert len(named) > 40
    assert {"scripts/removal_drill.py", "bot/server/steer.py", "jobs/composition.py"} <= named
    assert sorted(path for path in named if not (README.parent / path).exists()) == []
