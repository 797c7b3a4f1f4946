"""New file names the guard refuses whatever the config allows (issue 40): a codemod, run by a
real local job with `allow_new_files: true`, creates one file next to the batch's; a name with
a control or invisible character, a Windows-reserved name, or one that collides with an
existing file on a case-insensitive or normalising file system is refused by the guard
(`new_name`), never committed. A plain new name is committed (the control)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import yaml

from jobs.decisions.new_names import collision, name_problem
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import JobStatus
from tests.kit.local_e2e import session, show
from tests.kit.repos import make_repo

CAFE_NFC = unicodedata.normalize("NFC", "src/café.py")
REFUSED = {
    "a tab": "src/a\tb.py",
    "an escape sequence": "src/\x1b[31mred.py",
    "a right-to-left override": "src/evil\u202eyp.txt",
    "a zero-width space": "src/ma\u200bin.py",
    "DEL": "src/x\x7f.py",
    "the device CON": "src/con.py",
    "the device COM1 as a directory": "src/COM1/x.py",
    "a trailing dot": "src/name.",
    "a trailing space": "src/name.py ",
    "a colon": "src/a:b.py",
    "a case collision": "src/App.py",
    "a directory case collision": "SRC/new.py",
    "a Unicode-form collision": unicodedata.normalize("NFD", CAFE_NFC),
}
CODEMOD = """import json, os, sys
name = json.load(open("tools/name.json"))
os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
open(name, "w").write("NEW = 1\\n")
for path in sys.argv[1:]:
    text = open(path).read()
    open(path, "w").write(text.replace("OLD", "NEW"))
"""


def run_job(root: Path, name: str) -> tuple[JobStatus, str, str]:
    config = {"validate": [], "allow_commands": ["python"], "allow_new_files": True,
              "max_failed_attempts": 1}
    repo = make_repo(root, {"src/app.py": "OLD = 1\n", CAFE_NFC: "x = 1\n",
                            "tools/codemod.py": CODEMOD, "tools/name.json": json.dumps(name),
                            ".github/stepwise.yml": yaml.safe_dump(config)})
    spec = {"recipe": "command", "paths": ["src/**", "SRC/**"], "find": ["OLD"],
            "run": "python tools/codemod.py {files}"}
    issue = f"# Rename OLD\n\n```stepwise\n{yaml.safe_dump(spec)}```\n"
    local = session(repo, 5)
    outcome = local.run(parse_issue_file(issue), yes=True)
    job = local.load()
    return job.status, outcome.message, show(repo, job.branch, "src/app.py")


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_a_new_file_with_a_refused_name_is_never_committed(tmp_path: Path, kind: str) -> None:
    status, message, app = run_job(tmp_path / "repo", REFUSED[kind])
    assert status is JobStatus.AWAITING_HUMAN, message
    assert "new_name" in message and "no setting allows it" in message, message
    assert app.strip() == "OLD = 1"  # nothing of the batch was committed


def test_a_plain_new_name_is_committed(tmp_path: Path) -> None:
    status, message, app = run_job(tmp_path / "repo", "src/helpers.py")
    assert status is JobStatus.COMPLETED, message
    assert app.strip() == "NEW = 1"


@pytest.mark.parametrize(("path", "words"), [
    ("src/a\tb.py", "U+0009"), ("src/x\u202e.txt", "U+202E"), ("aux.c", "device name"),
    ("lpt9/x", "device name"), ("x/y.", "ends in a dot"), ('a"b', "`\"`"),
    ("a?b", "`?`"), ("CONOUT$", "device name")])
def test_each_refused_name_says_why(path: str, words: str) -> None:
    problem = name_problem(path)
    assert problem is not None and words in problem


def test_collisions_fold_case_and_unicode_form_and_directories() -> None:
    existing = ["README.md", "src/Util.py", CAFE_NFC]
    assert collision("readme.md", existing) == "README.md"
    assert collision("Src/new.py", existing) == "src"
    assert collision(unicodedata.normalize("NFD", CAFE_NFC), existing) == CAFE_NFC
    assert collision("src/util2.py", existing) is None
    assert collision("README.md", existing) is None  # the same file, not a collision
    assert name_problem("src/consul.py") is None and name_problem("docs/aux_notes.md") is None
