"""Rewrite the README's generated tables from the code: the spec keys and the config keys
(jobs/inputs/key_docs.py), the comment commands (bot/commands) and the gates (the installed
gate table, jobs/kernel/gates.py `gate_table`). A new recipe or verb needs
no hand edit of the README: run `make readme` (tests/test_readme.py checks the tables match).

    .venv/bin/python scripts/readme_tables.py [--check]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def tables() -> dict[str, Callable[[], str]]:
    from bot.commands import help_table
    from jobs.composition import install
    from jobs.inputs.key_docs import config_table, spec_table
    from jobs.kernel.gates import gate_table

    install()  # the spec table lists each recipe's keys: this script is a composition root
    return {"spec-keys": spec_table, "config-keys": config_table, "commands": help_table,
            "gates": gate_table}


def rendered(text: str) -> str:
    """`text` with each generated block (between its start and end comments) made anew."""
    for name, table in tables().items():
        start = text.index(f"<!-- {name}:start")
        body_start = text.index("\n", start) + 1
        end = text.index(f"<!-- {name}:end -->")
        text = text[:body_start] + table().strip() + "\n" + text[end:]
    return text


def main(argv: list[str]) -> int:
    text = README.read_text()
    new = rendered(text)
    if "--check" in argv:
        if new != text:
            sys.stderr.write("README.md's generated tables are out of date: run `make readme`\n")
            return 1
        return 0
    if new != text:
        README.write_text(new)
        sys.stdout.write("README.md: generated tables rewritten\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(README.parent))
    sys.exit(main(sys.argv[1:]))
