"""Command splitting, the allowlist (with versioned names) and the built-in blocklist."""

from __future__ import annotations

import pytest

from jobs.inputs.programs import BLOCKED_PROGRAMS, program_name, refusal_reason, split_command

ALLOW = ["pytest", "python", "ruff", "mypy", "make", "npm", "tox"]


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        ("ruff check .", ["ruff", "check", "."]),
        ("  python   -m pytest -q ", ["python", "-m", "pytest", "-q"]),
        ("python -c 'print(1); print(2)'", ["python", "-c", "print(1); print(2)"]),
        ('pytest "tests/a b.py"', ["pytest", "tests/a b.py"]),
        (r"pytest tests/a\ b.py", ["pytest", "tests/a b.py"]),
        ("ruff check --fix {files}", ["ruff", "check", "--fix", "{files}"]),
        # shell operators are plain arguments: there is no shell
        ("make test && rm -rf /", ["make", "test", "&&", "rm", "-rf", "/"]),
        ("pytest; echo $HOME", ["pytest;", "echo", "$HOME"]),
    ],
)
def test_split_command(text: str, argv: list[str]) -> None:
    assert split_command(text) == argv


@pytest.mark.parametrize(("text", "words"), [("", "empty"), ("   ", "empty"),
                                             ("pytest 'unclosed", "cannot split")])
def test_split_command_refuses(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        split_command(text)


@pytest.mark.parametrize(
    ("argv0", "name"),
    [("python3", "python3"), ("/usr/bin/python3", "python3"), ("./tools/run", "run")],
)
def test_program_name(argv0: str, name: str) -> None:
    assert program_name(argv0) == name


@pytest.mark.parametrize(
    "argv",
    [["pytest"], ["python", "-m", "pytest"], ["python3", "-V"], ["python3.11", "-V"],
     ["python3.12"], ["ruff", "check", "."], ["make", "rm"], ["tox", "-e", "py311"]],
)
def test_allowed(argv: list[str]) -> None:
    assert refusal_reason(argv, ALLOW) is None


@pytest.mark.parametrize(
    ("argv", "allow", "words"),
    [
        ([], ALLOW, "empty"),
        (["pythonx"], ALLOW, "not on allow_commands"),
        (["python-config"], ALLOW, "not on allow_commands"),
        (["python3x"], ALLOW, "not on allow_commands"),
        (["pyth"], ALLOW, "not on allow_commands"),
        (["python."], ALLOW, "not on allow_commands"),
        (["black", "."], ALLOW, "not on allow_commands"),
        (["pytest"], [], "not on allow_commands"),
        (["/usr/bin/python3"], ALLOW, "is a path"),
        (["./pytest"], ALLOW, "is a path"),
        (["bin/ruff"], ALLOW, "is a path"),
        (["rm", "-rf", "/"], ALLOW, "blocklist"),
        # blocklisted even when the allowlist names it
        (["rm"], ["rm"], "blocklist"),
        (["git", "push"], ["git"], "blocklist"),
        (["curl"], [*ALLOW, "curl"], "blocklist"),
        (["bash", "-c", "x"], ["bash"], "blocklist"),
        (["sudo"], ["sudo"], "blocklist"),
    ],
)
def test_refused(argv: list[str], allow: list[str], words: str) -> None:
    reason = refusal_reason(argv, allow)
    assert reason is not None
    assert words in reason


def test_refusal_names_the_fix() -> None:
    not_allowed = refusal_reason(["black"], ALLOW)
    assert not_allowed is not None
    assert "`black`" in not_allowed
    assert ".github/stepwise.yml" in not_allowed
    path = refusal_reason(["/usr/bin/python3"], ALLOW)
    assert path is not None
    assert "`python3`" in path


@pytest.mark.parametrize("name", sorted(BLOCKED_PROGRAMS))
def test_every_blocked_program_is_refused_even_if_allowed(name: str) -> None:
    reason = refusal_reason([name], [name])
    assert reason is not None
    assert "blocklist" in reason


@pytest.mark.parametrize("name", ["rm", "curl", "wget", "ssh", "scp", "git", "sudo", "su", "chmod",
                                  "chown", "dd", "mkfs", "mount", "kill"])
def test_design_blocklist_is_included(name: str) -> None:
    assert name in BLOCKED_PROGRAMS


@pytest.mark.parametrize("name", ["python²", "python٣", "python3.١١"])
def test_version_suffix_is_ascii_digits_only(name: str) -> None:
    assert refusal_reason([name], ALLOW) is not None
