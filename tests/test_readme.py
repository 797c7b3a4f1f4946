"""The README against the code: the state diagrams and the transition tables in
jobs/kernel/model.py, the generated command and key tables, the layout and the modules."""

from __future__ import annotations

import ast
import re
from inspect import getsourcefile
from pathlib import Path

from bot.commands import COMMANDS
from jobs.composition import BUILT_IN
from jobs.kernel.model import BATCH_TRANSITIONS, JOB_TRANSITIONS

README = Path(__file__).resolve().parents[1] / "README.md"
EDGE = re.compile(r"^\s*(\w+) --> (\w+)")


def diagram_edges() -> list[set[tuple[str, str]]]:
    blocks = re.findall(r"```mermaid\n(.*?)```", README.read_text(), flags=re.S)
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


def test_readme_command_table_is_the_generated_help() -> None:
    from bot.commands import help_table

    text = README.read_text()
    start = text.index("<!-- commands:start")
    body = text[text.index("\n", start) + 1 : text.index("<!-- commands:end -->")].strip()
    assert body == help_table()



def layout_section() -> str:
    text = README.read_text()
    start = text.index("## Layout\n")
    return text[start:text.index("\n## ", start + 1)]


def packages() -> list[Path]:
    """Every folder of jobs/ and bot/ that is a package (the demo's sample repository is data)."""
    root = README.parent
    return sorted(init.parent.relative_to(root) for top in ("jobs", "bot")
                  for init in (root / top).rglob("__init__.py") if "sample" not in init.parts)


def contract_of(package: Path) -> str:
    """A folder's contract: its `__init__.py` docstring."""
    tree = ast.parse((README.parent / package / "__init__.py").read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def test_readme_layout_is_a_map_of_every_folder() -> None:
    """The Layout names every package of jobs/ and bot/ by its path (`jobs/engine/`), and only
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


def generated_block(name: str) -> str:
    text = README.read_text()
    start = text.index(f"<!-- {name}:start")
    return text[text.index("\n", start) + 1 : text.index(f"<!-- {name}:end -->")].strip()


def test_readme_spec_key_table_is_generated_from_the_spec_model() -> None:
    from jobs.inputs.key_docs import spec_table
    from jobs.inputs.spec import TaskSpec

    assert generated_block("spec-keys") == spec_table()
    for name, info in TaskSpec.model_fields.items():  # every key is documented
        assert info.description, f"spec key `{name}` has no docstring"
        assert f"| `{name}` |" in spec_table()


def test_readme_config_key_table_is_generated_from_the_config_model() -> None:
    from jobs.inputs.config import RepoConfig
    from jobs.inputs.key_docs import config_table

    assert generated_block("config-keys") == config_table()
    for name, info in RepoConfig.model_fields.items():
        assert info.description, f"config key `{info.alias or name}` has no docstring"
        key = info.alias or name
        assert f"| `{key}` |" in config_table() or f"| `{key}." in config_table()  # `ci.wait`


def test_readme_explains_what_a_newcomer_needs_without_design_md() -> None:
    text = README.read_text()
    local = text[text.index("## Using it on your repository"):text.index("### Safety rules")]
    assert "../shared/DESIGN.md" not in local  # a clone has no DESIGN.md beside it
    for topic in ("{files}", "exit code is evidence", "done_when", "`setup`", "`env`",
                  "`command_timeout`", "`allow_test_edits`", "`protected_paths`",
                  "PATH", "virtualenv", "`6` busy", "stepwise jobs --repo PATH",
                  "stepwise --version", "interrupted", "left out"):
        assert topic in local, topic


def test_make_readme_rewrites_exactly_the_generated_tables() -> None:
    """`make readme` (scripts/readme_tables.py) leaves a current README as it is, and puts back
    a table that went stale (a new verb or recipe needs no hand edit of the README)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_tables", README.parent / "scripts" /
                                                  "readme_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = README.read_text()
    assert module.rendered(text) == text
    start = text.index("<!-- commands:start")
    stale = text[:start] + text[start:].replace("| `/stepwise approve` |", "| `/stepwise approve-old` |", 1)
    assert stale != text and module.rendered(stale) == text


def test_readme_permission_list_is_exactly_app_yml() -> None:
    """Every permission `app.yml` asks for is in the README's list at its level, with a reason,
    and the list names nothing the manifest does not ask for."""
    import yaml

    manifest = yaml.safe_load((README.parent / "app.yml").read_text(encoding="utf-8"))
    block = re.search(r"<!-- permissions:start -->(.*?)<!-- permissions:end -->",
                      README.read_text(), flags=re.S)
    assert block is not None
    listed = re.findall(r"^\s*- `(\w+): (\w+)`[^:]*: \S", block.group(1), flags=re.M)
    assert dict(listed) == manifest["default_permissions"]
    assert len(listed) == len(dict(listed))
