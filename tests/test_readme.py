"""The README's state diagrams and the transition tables in jobs/domain/model.py change together."""

from __future__ import annotations

import re
from pathlib import Path

from bot.commands import COMMANDS
from jobs.domain.model import BATCH_TRANSITIONS, JOB_TRANSITIONS

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


def test_readme_layout_names_every_module_and_only_modules_that_exist() -> None:
    root = README.parent
    section = layout_section()
    named = {name.rstrip("/").rsplit("/", 1)[-1] + ("/" if name.endswith("/") else "")
             for name in re.findall(r"`([\w/]+(?:\.py|/))`", section)
             if not name.startswith("tests/jobs/")}  # the example of the tests' layout
    sources = [p for top in ("jobs", "bot") for p in (root / top).rglob("*.py")
               if "sample" not in p.parts]
    modules = {p.name for p in sources if p.name != "__init__.py"}
    packages = {f"{p.parent.name}/" for p in sources if p.name == "__init__.py"} - {"jobs/", "bot/"}
    verbs = {spec.verb + ".py" for spec in COMMANDS}
    assert "one module per verb" in section
    assert sorted((modules | packages) - verbs - named) == []
    existing = modules | packages | {p.name for p in (root / "tests" / "kit").iterdir()} | {
        "tests/", "kit/", "bench/", "sample/", "jobs/", "bot/"}
    assert sorted(named - existing) == []
