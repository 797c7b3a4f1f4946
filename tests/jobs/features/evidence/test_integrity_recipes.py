"""The test-integrity guard with the deterministic recipes, through `stepwise run` on real git
repositories: a codemod that deletes a test file stops at `tests_weakened` at once (no model to
tell) and, approved, is recorded as deleting it, not as "changed 2 files of 2"; node's own test
runner reports its tests (a `junit` reporter beside `spec`) and a `replace` that skips a JS test
is named; a job that leaves the tests alone runs as before."""

from __future__ import annotations

from pathlib import Path

import yaml

from jobs.local import local_user
from tests.kit.llm import RECT, RECT_SOURCE, RECT_TEST_SOURCE, RECT_TESTS
from tests.kit.local_e2e import build_sample, cli, config_text, load_job, show, write_issue
from tests.kit.repos import make_repo

NUMBER = 4
CODEMOD = '''"""Types rect.py and drops the old test file it makes redundant."""
import pathlib
import sys

for name in sys.argv[1:]:
    path = pathlib.Path(name)
    if name.startswith("tests/"):
        path.unlink()
    else:
        path.write_text(path.read_text().replace("(width, height):", "(width: int, height: int) -> int:"))
'''


def issue(tmp_path: Path, spec: dict[str, object]) -> Path:
    path = tmp_path / "issue.md"
    path.write_text(f"# Type rect.py\n\n```stepwise\n{yaml.safe_dump(spec, sort_keys=False)}```\n",
                    encoding="utf-8")
    return path


def test_a_codemod_deleting_a_test_file_stops_at_the_gate_and_is_recorded_as_a_deletion(
        tmp_path: Path) -> None:
    config = {"validate": ["python -m pytest -q"], "allow_commands": ["python"],
              "allow_test_edits": True, "allow_deletions": True, "batch_size": 5}
    repo = make_repo(tmp_path / "repo", {
        ".github/stepwise.yml": yaml.safe_dump(config), RECT: RECT_SOURCE, "tests/__init__.py": "",
        RECT_TESTS: RECT_TEST_SOURCE, "tools/codemod.py": CODEMOD,
        "tests/test_square.py": "from rect import area\n\n\ndef test_square():\n"
                                "    assert area(3, 3) == 9\n"})
    spec = {"recipe": "command", "paths": [RECT, RECT_TESTS],
            "run": "python tools/codemod.py {files}", "done_when": "checks_pass"}
    done = cli("run", "--repo", repo, "--issue", issue(tmp_path, spec), "--number", str(NUMBER),
               "--yes")
    assert done.code == 4, done.text
    job = load_job(repo, NUMBER)
    assert job.gate is not None and job.gate.reason == (
        "batch 1: the tests check less after this batch (1 finding):\n"
        "- `tests/test_rect.py`: test file deleted (2 tests: test_area, test_perimeter)")
    assert len(job.batch(1).attempts) == 1  # deterministic: stopped at once, nothing retried
    assert "tests: 3 collected, 3 passed → 1 collected, 1 passed; the tests check less " \
        "(1 finding)" in done.text

    approved = cli("approve", "--repo", repo, "--number", str(NUMBER))
    assert approved.code == 0, approved.text
    job = load_job(repo, NUMBER)
    batch = job.batch(1)
    assert batch.commit is not None and batch.changed_files == [RECT, RECT_TESTS]
    assert batch.summary == ("`python tools/codemod.py rect.py tests/test_rect.py` changed 1 "
                             "file and deleted 1 "
                             "(`tests/test_rect.py`) of 2; it reported no problem")
    note = show(repo, job.branch, job.note_path)
    assert f"the tests check less, accepted by {local_user()}:\n  - accepted: " \
        "`tests/test_rect.py`: test file deleted (2 tests: test_area, test_perimeter)" in note


NODE_TEST = '''const test = require("node:test");
const assert = require("node:assert");
const { area } = require("../src/rect.js");

test("area", () => {
  assert.strictEqual(area(2, 3), 6);
});

test("square", () => {
  assert.strictEqual(area(3, 3), 9);
});
'''


def test_node_reports_its_tests_and_a_skipped_js_test_is_named(tmp_path: Path) -> None:
    config = {"validate": ["node --test test/"], "allow_commands": ["node"],
              "allow_test_edits": True, "batch_size": 5}
    repo = make_repo(tmp_path / "repo", {
        ".github/stepwise.yml": yaml.safe_dump(config),
        "src/rect.js": "exports.area = (w, h) => w * h;\n", "test/rect.test.js": NODE_TEST})
    spec = {"recipe": "replace", "paths": ["test/*.js"], "find": ['test\\("square"'],
            "replace": 'test.skip("square"', "done_when": "checks_pass"}
    done = cli("run", "--repo", repo, "--issue", issue(tmp_path, spec), "--number", str(NUMBER),
               "--yes")
    assert done.code == 4, done.text
    job = load_job(repo, NUMBER)
    assert job.gate is not None and job.gate.reason == (
        "batch 1: the tests check less after this batch (1 finding):\n"
        "- `test/rect.test.js::square`: `skip` marker added")
    # The baseline's figures come from node's summary, the batch's from its junit report.
    assert "tests: 2 collected, 2 passed → 2 collected, 1 passed; the tests check less " \
        "(1 finding)" in done.text
    assert job.baseline[0].argv == ["node", "--test", "test/"]  # recorded as the config wrote it


def test_a_job_that_leaves_the_tests_alone_runs_as_before(tmp_path: Path) -> None:
    # allow_test_edits false, a unittest suite; a note commit after each milestone
    repo = build_sample(tmp_path / "repo", config=config_text(notes="per_milestone"))
    done = cli("run", "--repo", repo, "--issue", write_issue(tmp_path / "issue.md"), "--yes")
    assert done.code == 0, done.text
    job = load_job(repo, 1)
    note = show(repo, job.branch, job.note_path)
    evidence = note[note.index("## Evidence\n"):note.index("## Final review")]
    for batch in job.batches:
        assert batch.commit is not None and len(batch.attempts) == 1
    # Every batch compared with the last one's report, also across a milestone's note commit.
    assert job.note_commit is not None and len(job.batches) == 3
    assert evidence.count("  - tests: 6 collected, 6 passed → 6 collected, 6 passed; nothing "
                          "weakened\n") == len(job.batches)
