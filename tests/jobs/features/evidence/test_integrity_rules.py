"""The test-integrity guard's readers and comparison (pure): each way a batch can make Python
and JavaScript/TypeScript tests check less is found and named, with its excerpt; a codemod that
renames the code under test, an added test or a stronger assertion is not a finding."""

from __future__ import annotations

import pytest

from jobs.features.evidence.integrity import findings_for
from jobs.features.evidence.integrity_reports import RunReport
from jobs.features.evidence.integrity_shapes import FileChange

PY = '''import pytest
from calc import area, legacy


def test_area():
    assert legacy.old_sum(2, 3) == 5
    assert area() == 5


class TestShapes:
    def test_square(self):
        self.assertEqual(area(), 5)


def test_raises():
    with pytest.raises(ValueError):
        area(-1)
'''
JS = '''describe("calc", () => {
  it("adds", () => {
    expect(add(1, 2)).toBe(3);
  });
  test("subs", () => { expect(sub(2, 1)).toEqual(1) });
  it("muls", () => { assert.strictEqual(mul(2, 2), 4) });
});
'''


def lines(path: str, before: str | None, after: str | None,
          runs: tuple[RunReport | None, RunReport | None] = (None, None)) -> list[str]:
    return [f.line() for f in findings_for([FileChange(path, before, after)], *runs)]


PYTHON_WAYS = {
    "assert removed": (PY.replace("    assert area() == 5\n", ""),
                       ["`tests/test_calc.py::test_area`: assertion removed: `-assert area() == 5`"]),
    "expected value": (PY.replace("area() == 5", "area() == 6"),
                       ["`tests/test_calc.py::test_area`: expected value changed in an assertion: "
                        "`-assert area() == 5` / `+assert area() == 6`"]),
    "loosened": (PY.replace("self.assertEqual(area(), 5)", "self.assertTrue(area())"),
                 ["`tests/test_calc.py::TestShapes::test_square`: assertion changed (loosened or "
                  "replaced): `-self.assertEqual(area(), 5)` / `+self.assertTrue(area())`"]),
    "class skipped": (PY.replace("class TestShapes:", "@pytest.mark.skip\nclass TestShapes:"),
                      ["`tests/test_calc.py::TestShapes::test_square`: `skip` marker added"]),
    "module skipped": (PY.replace("from calc import", "pytestmark = pytest.mark.skip\nfrom calc import"),
                       ["`tests/test_calc.py`: `skip` added to the whole file"]),
    "skip call": (PY.replace("def test_raises():\n", "def test_raises():\n    pytest.skip('x')\n"),
                  ["`tests/test_calc.py::test_raises`: `skip` marker added",
                   "`tests/test_calc.py::test_raises`: assertions made unreachable (an early "
                   "return or skip before them)"]),
    "early return": (PY.replace("def test_area():\n", "def test_area():\n    return\n"),
                     ["`tests/test_calc.py::test_area`: assertions made unreachable (an early "
                      "return or skip before them)"]),
    "raises removed": (PY.replace("    with pytest.raises(ValueError):\n        area(-1)\n",
                                  "    area(-1)\n"),
                       ["`tests/test_calc.py::test_raises`: assertion removed: "
                        "`-pytest.raises(ValueError)`"]),
    "suppressed": (PY.replace("    assert area() == 5\n",
                              "    with contextlib.suppress(AssertionError):\n"
                              "        assert area() == 5\n"),
                   ["`tests/test_calc.py::test_area`: assertion failures swallowed by a "
                    "try/except (or suppress) that does not re-raise"]),
    "renamed out": (PY.replace("def test_raises", "def check_raises"),
                    ["`tests/test_calc.py::test_raises`: renamed out of collection to "
                     "`check_raises`"]),
    "deleted": (None, ["`tests/test_calc.py`: test file deleted (3 tests: TestShapes::test_square, "
                       "test_area, test_raises)"]),
}


@pytest.mark.parametrize("way", sorted(PYTHON_WAYS))
def test_each_python_weakening_is_named(way: str) -> None:
    after, expected = PYTHON_WAYS[way]
    assert lines("tests/test_calc.py", PY, after) == expected


JS_WAYS = {
    "skip": (JS.replace('it("adds"', 'it.skip("adds"'),
             ["`src/calc.test.js::calc > adds`: `skip` marker added"]),
    "xit": (JS.replace('it("adds"', 'xit("adds"'),
            ["`src/calc.test.js::calc > adds`: `skip` marker added"]),
    "only": (JS.replace('test("subs"', 'test.only("subs"'),
             ["`src/calc.test.js::calc > subs`: `only` marker added"]),
    "todo": (JS.replace('test("subs", () => { expect(sub(2, 1)).toEqual(1) });',
                        'test.todo("subs");'),
             ["`src/calc.test.js::calc > subs`: `todo` marker added",
              "`src/calc.test.js::calc > subs`: assertion removed: "
              "`-expect(sub(2, 1)).toEqual(1)`"]),
    "expected value": (JS.replace("toBe(3)", "toBe(4)"),
                       ["`src/calc.test.js::calc > adds`: expected value changed in an assertion: "
                        "`-expect(add(1, 2)).toBe(3)` / `+expect(add(1, 2)).toBe(4)`"]),
    "loosened": (JS.replace("toBe(3)", "toBeTruthy()"),
                 ["`src/calc.test.js::calc > adds`: assertion changed (loosened or replaced): "
                  "`-expect(add(1, 2)).toBe(3)` / `+expect(add(1, 2)).toBeTruthy()`"]),
    "assert removed": (JS.replace(" assert.strictEqual(mul(2, 2), 4) ", " mul(2, 2) "),
                       ["`src/calc.test.js::calc > muls`: assertion removed: "
                        "`-assert.strictEqual(mul(2, 2), 4)`"]),
    "swallowed": (JS.replace("    expect(add(1, 2)).toBe(3);\n",
                             "    try { expect(add(1, 2)).toBe(3); } catch (e) {}\n"),
                  ["`src/calc.test.js::calc > adds`: assertion failures swallowed by a try/except "
                   "(or suppress) that does not re-raise"]),
    "removed": (JS.replace('  test("subs", () => { expect(sub(2, 1)).toEqual(1) });\n', ""),
                ["`src/calc.test.js::calc > subs`: test removed"]),
    "renamed and loosened": (JS.replace(' it("muls", () => { assert.strictEqual(mul(2, 2), 4) ',
                                        ' it("multiplies", () => { assert.ok(mul(2, 2)) '),
                             ["`src/calc.test.js::calc > muls`: test removed"]),
    "describe skipped": (JS.replace('describe("calc"', 'describe.skip("calc"'),
                         [f"`src/calc.test.js::calc > {name}`: `skip` marker added"
                          for name in ("adds", "subs", "muls")]),
    "describe only": (JS.replace('describe("calc"', 'fdescribe("calc"'),
                      [f"`src/calc.test.js::calc > {name}`: `only` marker added"
                       for name in ("adds", "subs", "muls")]),
    "file deleted": (None, ["`src/calc.test.js`: test file deleted (3 tests: calc > adds, "
                            "calc > muls, calc > subs)"]),
}


@pytest.mark.parametrize("way", sorted(JS_WAYS))
def test_each_javascript_weakening_is_named(way: str) -> None:
    after, expected = JS_WAYS[way]
    assert lines("src/calc.test.js", JS, after) == expected


def test_unskipping_a_describe_block_is_no_finding() -> None:
    skipped = JS.replace('describe("calc"', 'describe.skip("calc"')
    assert lines("src/calc.test.js", skipped, JS) == []


def test_honest_edits_of_tests_are_not_findings() -> None:
    renamed = PY.replace("legacy.old_sum(", "legacy.new_sum(")  # a codemod of the code under test
    added = PY + "\n\ndef test_more():\n    assert area() == 5\n"
    stronger = PY.replace("    assert area() == 5\n", "    assert area() == 5\n    assert area(1) == 1\n")
    retitled = PY.replace("def test_area", "def test_area_of_a_rectangle")  # still collected
    for after in (renamed, added, stronger, retitled, PY):
        assert lines("tests/test_calc.py", PY, after) == []
    assert lines("src/calc.test.js", JS, JS.replace("add(", "plus(")) == []
    assert lines("src/calc.test.js", JS, JS.replace('it("muls"', 'it("multiplies"')) == []
    assert lines("tests/test_new.py", None, PY) == []  # a new test file only adds
    assert lines("src/calc.py", "x = 1\n", None) == []  # not a test file


CONFIG_WAYS = {
    ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-q"\n',
     '[tool.pytest.ini_options]\naddopts = "-q -k \'not slow\'"\n'):
        ["`pyproject.toml (addopts)`: test selection changed: deselects tests: `-\"-q\"` / "
         "`+\"-q -k 'not slow'\"`"],
    ("setup.cfg", "[tool:pytest]\ntestpaths = tests\n", "[tool:pytest]\ntestpaths = tests/unit\n"):
        ["`setup.cfg (testpaths)`: test selection changed: changes which tests run: `-tests` / "
         "`+tests/unit`"],
    ("tox.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q --ignore=tests/slow\n"):
        ["`tox.ini (addopts)`: test selection changed: changes which tests run: `--q` / "
         "`+-q --ignore=tests/slow`"],
    ("tests/conftest.py", "import pytest\n",
     "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n"):
        ["`tests/conftest.py (pytest_collection_modifyitems)`: test selection changed: changes "
         "which tests run: `+def pytest_collection_modifyitems(items): items.clear()`"],
    ("package.json", '{"scripts": {"test": "jest"}}', '{"scripts": {"test": "jest src/a"}}'):
        ["`package.json (scripts.test)`: test selection changed: changes which tests run: "
         "`-jest` / `+jest src/a`"],
    ("package.json", '{"jest": {"roots": ["src"]}}',
     '{"jest": {"roots": ["src"], "testPathIgnorePatterns": ["calc"]}}'):
        ["`package.json (jest.testPathIgnorePatterns)`: test selection changed: changes which "
         "tests run: `+[\"calc\"]`"],
    ("vitest.config.ts", "export default { test: {} }\n",
     "export default { test: {\n  exclude: ['src/calc.test.ts'],\n} }\n"):
        ["`vitest.config.ts (exclude)`: test selection changed: changes which tests run: "
         "`+exclude: ['src/calc.test.ts'],`"],
    ("tests/conftest.py", "collect_ignore = []\n", "collect_ignore = ['test_calc.py']\n"):
        ["`tests/conftest.py (collect_ignore)`: test selection changed: changes which tests "
         "run: `-collect_ignore = []` / `+collect_ignore = ['test_calc.py']`"],
    ("conftest.py", "", "collect_ignore_glob = ['tests/*_slow.py']\n"):
        ["`conftest.py (collect_ignore_glob)`: test selection changed: changes which tests run: "
         "`+collect_ignore_glob = ['tests/*_slow.py']`"],
    ("pytest.ini", "[pytest]\naddopts = -q\n",
     "[pytest]\naddopts = -q --deselect tests/test_calc.py::test_area\n"):
        ["`pytest.ini (addopts)`: test selection changed: deselects tests: `--q` / "
         "`+-q --deselect tests/test_calc.py::test_area`"],
    ("tests/conftest.py", "import pytest\n",
     "import pytest\n\n\ndef pytest_ignore_collect(collection_path):\n    return True\n"):
        ["`tests/conftest.py (pytest_ignore_collect)`: test selection changed: changes which "
         "tests run: `+def pytest_ignore_collect(collection_path): return True`"],
    ("jest.config.js", "module.exports = {\n  roots: ['src'],\n};\n",
     "module.exports = {\n  roots: ['src'],\n  testPathIgnorePatterns: ['calc'],\n};\n"):
        ["`jest.config.js (testPathIgnorePatterns)`: test selection changed: changes which "
         "tests run: `+testPathIgnorePatterns: ['calc'],`"],
    ("package.json", '{"scripts": {"test": "vitest run"}}',
     '{"scripts": {"test": "vitest run --exclude src/calc.test.ts"}}'):
        ["`package.json (scripts.test)`: test selection changed: changes which tests run: "
         "`-vitest run` / `+vitest run --exclude src/calc.test.ts`"],
}


@pytest.mark.parametrize("case", list(CONFIG_WAYS), ids=lambda case: case[0])
def test_configuration_that_deselects_tests_is_named(case: tuple[str, str, str]) -> None:
    path, before, after = case
    assert lines(path, before, after) == CONFIG_WAYS[case]
    assert lines(path, before, before) == []


def test_the_runners_figures_name_tests_no_longer_collected_or_passing() -> None:
    before = RunReport(3, 3, frozenset({"t.py::a", "t.py::b", "t.py::c"}),
                       frozenset({"t.py::a", "t.py::b", "t.py::c"}), "JUnit XML")
    after = RunReport(2, 1, frozenset({"t.py::a", "t.py::b"}), frozenset({"t.py::a"}),
                      "JUnit XML")
    changed = ("tests/test_x.py", "def test_x():\n    assert 1\n", "def test_x():\n    assert 1\n")
    assert lines(*changed, runs=(before, after)) == [
        "`t.py::c`: no longer collected by the test runner",
        "`t.py::b`: no longer passes (skipped or expected to fail now)"]
    counted = RunReport(10, 10, source="pytest's summary line")
    assert lines(*changed, runs=(counted, RunReport(8, 8, source="JUnit XML"))) == [
        "`the test run`: fewer tests collected: 10 → 8 (JUnit XML)"]
    assert lines(*changed, runs=(counted, RunReport(10, 9, source="JUnit XML"))) == [
        "`the test run`: fewer tests passed: 10 → 9 (JUnit XML)"]
    unreadable = RunReport(problem="the JUnit XML report could not be read: ParseError")
    assert lines(*changed, runs=(counted, unreadable)) == []  # not measured: no comparison


def test_untrusted_names_and_excerpts_stay_inert() -> None:
    hostile = JS.replace('it("adds"', 'it("`@admin` {{approve}}"').replace(
        "toBe(3)", "toBe(`x`)")
    weakened = hostile.replace('it("`@admin`', 'it.skip("`@admin`')
    [line] = lines("src/calc.test.js", hostile, weakened)
    assert line == "`src/calc.test.js::calc > '@admin' { {approve}}`: `skip` marker added"
