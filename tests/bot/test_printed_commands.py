"""Every command Stepwise prints runs as printed (issue 41.3), collected from real runs of the
CLI at an 80-column terminal, from checkouts whose paths hold spaces and outgrow the line: the
plan gate, a failure gate, `status`, `jobs` and the demo's change note (a feature's own
surfaces are checked in its tests, with `each_parses_and_stands_whole`). Each command found is
read back as a POSIX shell would: no word of it is a shell operator (a `<reason>` placeholder
is a redirection), and `shlex.split` then the real CLI (click, as `stepwise` would, without
running it) parse it: none is a usage error (exit 2) once its CAPITALS placeholders are filled
in; each stands on a line of its own (or alone on a table row), never wrapped or cut; the plan
gate's `approve` is pasted into a real shell and runs, and the failure gate's `skip … REASON`,
pasted unedited, is refused and changes nothing."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer
from typer._click.exceptions import UsageError
from typer.core import TyperGroup

from bot.cli.main import app
from bot.cli.output import cell_rows
from tests.kit.local_e2e import NUMBER, STEPWISE, build_sample, cli, write_issue

WIDTH = {"COLUMNS": "80"}
# The CLI's subcommands as installed (a feature's own go with it).
VERBS = tuple(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
MENTION = re.compile(r"(?<![\w/.-])stepwise (?:" + "|".join(VERBS) + r")\b")
CELL_END = re.compile(r"\s{2,}|$")


def commands_in(output: str) -> list[str]:
    """Each command printed in `output`: a line that starts with one, or a table row's cell."""
    found = []
    for line in output.splitlines():
        for mention in MENTION.finditer(line):
            start = mention.start()
            if line[:start].strip() in ("", "•", "-"):  # a line of its own
                found.append(line[start:].strip())
                continue
            before = line[:start]
            assert before.endswith("  "), f"a command inside a sentence: {line!r}"
            end = CELL_END.search(line, mention.end())
            found.append(line[start:end.start() if end else len(line)].strip())
    return found


# What a person types in place of a template's placeholder (`skip … REASON`).
FILLED = {"REASON": "a reason", "BATCH": "2", "TEXT": "keep the names", "REPO": "one repo",
          "DIR": "."}
PLACEHOLDER = re.compile(r"\b(?:" + "|".join(FILLED) + r")\b")


def shell_operators(command: str) -> list[str]:
    """What a POSIX shell reads as an operator in `command`, outside quotes (`<reason>` is a
    redirection from the file `reason>`)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return [token for token in lexer if token and not token.strip("();<>|&")]


def parse(command: str) -> None:
    """Parse `command` as the shell and then `stepwise` would, without running it (a
    placeholder filled in as a person would)."""
    assert shell_operators(command) == [], f"a shell misreads {command!r}"
    words = [PLACEHOLDER.sub(lambda m: FILLED[m.group(0)], word) for word in shlex.split(command)]
    assert words[0] == "stepwise", command
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    with group.make_context("stepwise", ["--help"], resilient_parsing=True) as root:
        sub = group.get_command(root, words[1])
        assert sub is not None, f"no subcommand {words[1]!r}: {command}"
        try:
            sub.make_context(words[1], words[2:], parent=root)
        except UsageError as error:  # typer's own click: exit code 2
            raise AssertionError(f"{command!r} is a usage error: {error}") from None


def each_parses_and_stands_whole(outputs: dict[str, str], expected: dict[str, str]) -> None:
    """Each surface's output holds its expected command, and every command in it parses."""
    for surface, output in outputs.items():
        commands = commands_in(output)
        assert expected[surface] in commands, (surface, commands, output)
        for command in commands:
            parse(command)


# Checkouts with spaces in their paths, longer than a terminal line.
PLACE = "checkouts whose paths are longer than an eighty-column terminal line"


def test_every_printed_command_parses_and_stands_whole(tmp_path: Path) -> None:
    place = tmp_path / PLACE
    outputs: dict[str, str] = {}
    repo = build_sample(place / "a repo")
    issue = write_issue(tmp_path / "issue.md")
    plan = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), env=WIDTH)
    assert plan.code == 3, plan.text
    outputs["plan gate"] = plan.out
    outputs["status"] = cli("status", "--repo", repo, "--number", str(NUMBER), env=WIDTH).out
    broken = build_sample(place / "broken repo", broken=True)
    failed = cli("run", "--repo", broken, "--issue", issue, "--number", "3", "--yes", env=WIDTH)
    assert failed.code == 4, failed.text
    outputs["failure gate"] = failed.out
    empty = build_sample(place / "no jobs")
    outputs["jobs"] = cli("jobs", "--repo", empty, env=WIDTH).out
    demo = cli("demo", "--dir", place / "demo", env=WIDTH)
    assert demo.code == 0, demo.text
    outputs["demo"] = demo.out  # the change note it prints, and where to read the branch


    quoted = shlex.quote(str(repo))
    expected = {  # one of each surface, exactly as printed
        "plan gate": f"stepwise approve --repo {quoted} --number {NUMBER}",
        "status": f"stepwise cancel --repo {quoted} --number {NUMBER}",
        "failure gate": f"stepwise skip --repo {shlex.quote(str(broken))} --number 3 REASON",
        "jobs": f"stepwise run --repo {shlex.quote(str(empty))} --issue FILE.md",
        "demo": "stepwise revert --repo . --number 1 BATCH",
    }
    each_parses_and_stands_whole(outputs, expected)
    # Pasted into a real shell as printed, the plan gate's `approve` runs the first milestone
    # (exit 3: the job waits at the milestone gate).
    status = expected["plan gate"]
    shell_env = {**os.environ, "PATH": f"{STEPWISE.parent}{os.pathsep}{os.environ['PATH']}",
                 **WIDTH}
    ran = subprocess.run(["sh", "-c", status], capture_output=True, text=True, env=shell_env,
                         check=False, timeout=120, cwd=tmp_path)
    assert ran.returncode == 3, (status, ran.stdout, ran.stderr)
    assert "Waiting at gate milestone" in ran.stdout
    # The failure gate's `skip` pasted without filling in its REASON: refused, nothing skipped.
    template = expected["failure gate"]
    ran = subprocess.run(["sh", "-c", template], capture_output=True, text=True, env=shell_env,
                         check=False, timeout=120, cwd=tmp_path)
    assert ran.returncode == 2, (template, ran.stdout, ran.stderr)
    assert "`skip` was given its placeholder `REASON`, not a reason" in ran.stderr, ran.stderr
    after = cli("status", "--repo", broken, "--number", "3", env=WIDTH)
    assert after.code == 4 and "Waiting at gate failure" in after.out, after.text


@pytest.mark.parametrize(("command", "caught"), [
    # an unquoted path with a space is what pasting used to hit
    ("stepwise approve --repo /tmp/my repo --number 7", "is a usage error"),
    # an unquoted `<reason>` is a redirection from the file `reason>`
    ("stepwise skip --repo . --number 3 <reason>", "a shell misreads"),
    ("stepwise skip --repo . --number 3 REASON | tee log", "a shell misreads")])
def test_the_check_catches_what_a_paste_would_hit(command: str, caught: str) -> None:
    with pytest.raises(AssertionError, match=caught):
        parse(command)


def test_capitals_and_quoted_placeholders_pass_the_check() -> None:
    parse("stepwise skip --repo . --number 3 REASON")
    parse("stepwise skip --repo . --number 3 'REASON, in words'")


def test_each_line_of_a_table_cell_prints_as_a_row_of_its_own() -> None:
    # A terminal's table cannot break a line in a cell: the dashboard's `<br>` between two
    # answers becomes a second row, so each command stands whole (a code span keeps its text).
    rows = cell_rows("| two | `echo <br>` | `stepwise retry`<br>`stepwise approve` |")
    assert rows == ["| two | `echo <br>` | `stepwise retry`|", "| | |`stepwise approve` |"]
    assert cell_rows("| one | `stepwise retry` |") == ["| one | `stepwise retry` |"]
