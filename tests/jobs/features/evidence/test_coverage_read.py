"""Coverage data is untrusted (issue 39): what the probes left is read within caps, and what
cannot be read is "not measured", never "run"; V8's nested block ranges map onto lines; the
repository's own coverage options are recognised in each place they are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.features.evidence import coverage_read
from jobs.features.evidence.changed_lines import changed_lines
from jobs.features.evidence.coverage_probe import measured_commands, named_coverage
from jobs.features.evidence.coverage_read import measure, read_reports
from jobs.features.evidence.coverage_record import nothing_to_measure

ROOT = "/tmp/stepwise/repo"
TEXT = "def f(x):\n    y = (x +\n         1)\n    return y\n\n\ndef g():\n    return 2  # pragma: no cover\n"


def folders(tmp_path: Path) -> tuple[Path, Path]:
    out, v8 = tmp_path / "out", tmp_path / "v8"
    out.mkdir()
    v8.mkdir()
    return out, v8


def test_python_lines_map_through_multi_line_statements_and_pragmas(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    (out / "python-1-a.json").write_text(json.dumps(
        {"tool": "coverage.py 7", "lines": {f"{ROOT}/a.py": [1, 2]}}))
    record = measure(changed={"a.py": [2, 3, 4, 8]}, texts={"a.py": TEXT},
                     reports=read_reports(out, v8), roots=(ROOT,), skipped={})
    # lines 2-3 are one statement (run), 4 did not run, 8 is excluded by its pragma
    assert (record.run, record.total, record.uncovered) == (2, 3, ["a.py:4"])


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"lines": 3}',
                                     b'{"lines": {"x": "y"}, "tool": 1}'])
def test_an_unreadable_report_is_not_measured_never_run(tmp_path: Path, content: bytes) -> None:
    out, v8 = folders(tmp_path)
    (out / "python-1-a.json").write_bytes(content)
    record = measure(changed={"a.py": [4]}, texts={"a.py": TEXT}, reports=read_reports(out, v8),
                     roots=(ROOT,), skipped={})
    if record.measured:  # a well-formed document naming no file of ours: the line did not run
        assert record.run == 0 and record.uncovered == ["a.py:4"]
    else:
        assert record.why == "the Python coverage data could not be read"


def test_an_oversized_or_linked_report_is_left_unread(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out, v8 = folders(tmp_path)
    monkeypatch.setattr(coverage_read, "MAX_REPORT_BYTES", 100)
    (out / "python-1-a.json").write_text(json.dumps({"lines": {f"{ROOT}/a.py": [4] * 100}}))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"lines": {f"{ROOT}/a.py": [4]}}))
    (out / "python-2-b.json").symlink_to(secret)
    reports = read_reports(out, v8)
    assert reports.unreadable == 2 and not reports.python_reported


def test_a_probe_that_could_not_start_says_why(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    (out / "failed-1-a.json").write_text(json.dumps(
        {"why": "coverage.py could not be imported by /usr/bin/python2 (SyntaxError)"}))
    record = measure(changed={"a.py": [4]}, texts={"a.py": TEXT}, reports=read_reports(out, v8),
                     roots=(ROOT,), skipped={})
    assert not record.measured
    assert record.why == "coverage.py could not be imported by /usr/bin/python2 (SyntaxError)"


JS = "function f(x) {\n  if (x) {\n    return 1;\n  }\n  return 2;\n}\nmodule.exports = f;\n"


def test_v8_block_ranges_count_the_innermost_block(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    body = JS.index("{\n    return 1")
    script = {"url": f"file://{ROOT}/f.js", "functions": [
        {"functionName": "", "ranges": [{"startOffset": 0, "endOffset": len(JS), "count": 1}]},
        {"functionName": "f", "ranges": [
            {"startOffset": 0, "endOffset": JS.index("\nmodule"), "count": 1},
            {"startOffset": body, "endOffset": JS.index("  return 2"), "count": 0}]}]}
    (v8 / "coverage-1-2-0.json").write_text(json.dumps({"result": [script]}))
    record = measure(changed={"f.js": [3, 4, 5]}, texts={"f.js": JS},
                     reports=read_reports(out, v8), roots=(ROOT,), skipped={})
    assert (record.run, record.total, record.uncovered) == (1, 2, ["f.js:3"])  # `}` not counted


def test_v8_ranges_past_the_file_mean_a_transformed_copy(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    script = {"url": f"file://{ROOT}/f.js", "functions": [
        {"ranges": [{"startOffset": 0, "endOffset": 10 * len(JS), "count": 1}]}]}
    (v8 / "coverage-1-2-0.json").write_text(json.dumps({"result": [script]}))
    record = measure(changed={"f.js": [3]}, texts={"f.js": JS}, reports=read_reports(out, v8),
                     roots=(ROOT,), skipped={})
    assert record.why == "node ran a transformed copy of it (source maps are not read)"


def test_other_files_are_named_with_why_they_were_not_measured(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    (out / "python-1-a.json").write_text(json.dumps({"lines": {f"{ROOT}/a.py": [1, 2, 4]}}))
    record = measure(changed={"a.py": [4], "README.md": [1], "m.go": [3], "c.ts": [1],
                              "tests/test_a.py": [2]},
                     texts={"a.py": TEXT}, reports=read_reports(out, v8), roots=(ROOT,),
                     skipped={})
    assert (record.run, record.total) == (1, 1)
    assert record.unmeasured == {"README.md": "not code", "c.ts": "no coverage for .ts files "
                                 "(they run transformed)", "m.go": "no coverage tool for .go files",
                                 "tests/test_a.py": "a test file: the tests themselves are not "
                                 "measured"}


def test_changed_lines_are_the_added_lines_of_kept_files() -> None:
    diff = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n"
            "+y = 3\n z = 4\ndiff --git a/gone.py b/gone.py\ndeleted file mode 100644\n"
            "--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n")
    assert changed_lines(diff) == {"a.py": [2]}
    assert changed_lines("not a diff @@") == {}


def test_linters_and_type_checkers_are_not_measured() -> None:
    argvs = (("ruff", "check", "."), ("python", "-m", "pytest"), ("/usr/bin/mypy", "src"),
             ("npm", "test"))
    assert measured_commands(argvs) == [1, 3]


@pytest.mark.parametrize(("argvs", "env", "texts", "named"), [
    ([["python", "-m", "pytest", "--cov=src"]], {}, {},
     "the repository runs its own coverage (`python -m pytest --cov=src`)"),
    ([["coverage", "run", "-m", "pytest"]], {}, {},
     "the repository runs its own coverage (`coverage run -m pytest`)"),
    ([["python", "-m", "coverage", "run", "-m", "pytest"]], {}, {},
     "the repository runs its own coverage (`python -m coverage run -m pytest`)"),
    ([["pytest"]], {"COVERAGE_PROCESS_START": ".coveragerc"}, {},
     "the repository runs its own coverage (`COVERAGE_*` in `env`)"),
    ([["pytest"]], {}, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--cov"\n'},
     "the repository runs its own coverage (`--cov` in pyproject.toml)"),
    ([["pytest"]], {}, {"setup.cfg": "[tool:pytest]\naddopts = -q --cov pkg\n"},
     "the repository runs its own coverage (`--cov` in setup.cfg)"),
    ([["pytest", "--covariance"]], {}, {"tox.ini": "[tox]\n"}, ""),
])
def test_a_repository_s_own_coverage_is_recognised_where_it_is_named(
        argvs: list[list[str]], env: dict[str, str], texts: dict[str, str], named: str) -> None:
    assert named_coverage(argvs, env, texts) == named


def test_a_batch_of_text_or_tests_only_has_nothing_to_measure(tmp_path: Path) -> None:
    out, v8 = folders(tmp_path)
    record = measure(changed={"README.md": [1], "tests/test_a.py": [2]}, texts={},
                     reports=read_reports(out, v8), roots=(ROOT,), skipped={})
    assert not record.measured and nothing_to_measure(record)
    code = measure(changed={"README.md": [1], "m.go": [2]}, texts={},
                   reports=read_reports(out, v8), roots=(ROOT,), skipped={})
    assert not nothing_to_measure(code)  # a Go file is code this cannot measure: a person looks
