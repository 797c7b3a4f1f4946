"""The tools one by one on real files: ranges and their caps, outlines, search caps, scope
refusals, the nearest-region feedback, compaction and the safety net's counters."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.recipes.llm.tools import compaction
from jobs.recipes.llm.tools.editing import edit_file, write_file
from jobs.recipes.llm.tools.net import NetTripped, SafetyNet
from jobs.recipes.llm.tools.outline import outline
from jobs.recipes.llm.tools.reading import list_files, read_file, search
from jobs.recipes.llm.tools.schemas import parse_arguments
from jobs.recipes.llm.tools.scope import HARD, SOFT, Scope, ToolFailure

JS = """/** Format a price. */
export function formatPrice(value, currency = "EUR") {
  const text = "function notReal() {";  // strings and comments are skipped
  return `${value} ${currency}`;
}

export class Cart {
  constructor(items) {
    this.items = items;
  }

  /** The sum of the items. */
  total() {
    if (this.items.length === 0) {
      return 0;
    }
    return this.items.reduce((a, b) => a + b, 0);
  }
}

const helper = (x) => x * 2;
module.exports = { helper };
"""

PY = '''"""Prices."""

import logging

RATE = 0.2


def net(value: float,
        rate: float = RATE) -> float:
    """The price without tax."""
    return value / (1 + rate)


class Basket:
    """Items to buy."""

    def add(self, item: str) -> None:
        """Add one item."""
'''


@pytest.fixture
def scope(tmp_path: Path) -> Scope:
    files = {"big.txt": "".join(f"line {n}\n" for n in range(1, 5001)),
             "src/price.py": PY, "src/cart.js": JS, "src/deep/a/b/c.py": "x = 1\n",
             "notes.md": "hello\n", "batch.py": "value = old_call(1)\nother = 2\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "untracked.py").write_text("secret = 1\n")
    os.symlink(tmp_path / "notes.md", tmp_path / "link.md")
    return Scope.of(tmp_path, [*files, "link.md"], ["batch.py"])


def failure(action: object) -> ToolFailure:
    assert callable(action)
    with pytest.raises(ToolFailure) as raised:
        action()
    return raised.value


def test_a_file_over_4000_lines_is_its_first_and_last_2000_with_a_notice(scope: Scope) -> None:
    text = read_file(scope, path="big.txt")
    assert text.startswith("big.txt (5000 lines; lines 2001–3000 left out):\n    1| line 1\n")
    assert "\n 2000| line 2000\n[lines 2001–3000 left out: read them with start_line and " \
           "end_line, up to 2,000 lines at a time]\n 3001| line 3001\n" in text
    assert text.endswith(" 5000| line 5000") and "| line 2001\n" not in text


def test_ranges_are_capped_at_2000_lines_and_tails_at_1000(scope: Scope) -> None:
    ranged = read_file(scope, path="big.txt", start_line=10, end_line=4000)
    assert ranged.startswith("big.txt (5000 lines), lines 10–2009 (capped at 2,000 lines; "
                             "continue from line 2010):\n   10| line 10\n")
    tail = read_file(scope, path="big.txt", tail=5000)
    assert tail.startswith("big.txt (5000 lines), last 1000 lines (tail is capped at 1,000):\n"
                           " 4001| line 4001\n")
    assert read_file(scope, path="notes.md", start_line=1) == "notes.md (1 lines), lines 1–1:\n" \
        "    1| hello"
    bad = failure(lambda: read_file(scope, path="notes.md", start_line=9))
    assert (bad.kind, bad.severity) == ("bad_range", SOFT)
    assert bad.text == "error: start_line 9 is outside notes.md, which has 1 lines"


def test_reads_refuse_git_untracked_links_and_the_outside_and_suggest_close_names(
        scope: Scope) -> None:
    for path, kind, words in [
            (".git/config", "refused_path", "inside `.git`"),
            ("../etc/passwd", "refused_path", "leaves the repository"),
            ("/etc/passwd", "refused_path", "is absolute"),
            ("untracked.py", "refused_path", "not a tracked regular file"),
            ("link.md", "refused_path", "is a symbolic link")]:
        refused = failure(lambda p=path: read_file(scope, path=p))
        assert (refused.kind, refused.severity) == (kind, HARD), path
        assert words in refused.message and refused.text.startswith("error: ")
    typo = failure(lambda: read_file(scope, path="src/prices.py"))
    assert (typo.kind, typo.severity) == ("no_such_file", SOFT)
    assert "did you mean `src/price.py`" in typo.message


def test_python_and_javascript_outlines(scope: Scope) -> None:
    py = outline(scope, path="src/price.py")
    assert '(module)  """Prices."""' in py
    assert "    3| import logging" in py and "    5| RATE = 0.2" in py
    assert '    8| def net(value: float, rate: float = RATE) -> float:  """The price without ' \
           'tax."""' in py
    assert '   14| class Basket:  """Items to buy."""' in py
    assert '   17|     def add(self, item: str) -> None:  """Add one item."""' in py
    js = outline(scope, path="src/cart.js")
    assert '    2| export function formatPrice(value, currency = "EUR") {  /** Format a ' \
           'price. */' in js
    assert "    7| export class Cart {" in js
    assert "    8|     constructor(items) {" in js
    assert "   13|     total() {  /** The sum of the items. */" in js
    assert "   21| const helper = (x) => x * 2;" in js and "   22| module.exports" in js
    assert "notReal" not in js and "if (" not in js and "reduce" not in js
    assert failure(lambda: outline(scope, path="notes.md")).kind == "unsupported_outline"


def test_search_caps_its_hits_and_says_how_many_more(scope: Scope) -> None:
    found = search(scope, pattern="5$", path="big.txt")
    lines = found.split("\n")
    assert lines[0] == "500 match(es) in 1 file(s):"
    assert lines[1] == "big.txt:5: line 5" and len(lines) == 52
    assert lines[-1] == "… 450 more matches: narrow the pattern or the path"
    assert failure(lambda: search(scope, pattern="old_call(")).kind == "bad_pattern"
    assert "no match for `nothing_here`" in search(scope, pattern="nothing_here")


def test_list_files_folds_deep_directories(scope: Scope) -> None:
    listing = list_files(scope, path="src", depth=1)
    assert listing.split("\n") == ["3 tracked file(s) under src:", "src/cart.js",
                                   "src/deep/ (1 files)", "src/price.py"]


def test_edits_touch_only_batch_files_and_explain_a_near_miss(scope: Scope) -> None:
    refused = failure(lambda: edit_file(scope, path="notes.md", old_text="hello",
                                        new_text="bye"))
    assert (refused.kind, refused.severity) == ("refused_write", HARD)
    near = failure(lambda: edit_file(scope, path="batch.py", old_text="value = old_call(2)",
                                     new_text="value = new_call(2)"))
    assert near.kind == "no_match"
    assert "The closest region is lines 1–1" in near.message
    assert "First difference: old_text has `value = old_call(2)` where line 1 is " \
           "`value = old_call(1)`" in near.message
    numbered = edit_file(scope, path="batch.py", old_text="    1| value = old_call(1)",
                         new_text="value = new_call(1)")
    assert numbered == ("batch.py", "edited batch.py at line 1 (matched exact once the line "
                                    "numbers were removed): 2 lines now (+0)")
    assert write_file(scope, path="batch.py", content="extra = 3\n", append=True)[1] == \
        "appended to batch.py: 3 lines now"
    assert (scope.worktree / "batch.py").read_text() == \
        "value = new_call(1)\nother = 2\nextra = 3\n"


def test_arguments_are_checked_against_the_schema() -> None:
    assert parse_arguments("read_file", '{"path": "a.py", "start_line": "3"}') == \
        {"path": "a.py", "start_line": 3}
    for raw, words in [('{"start_line": 1}', "needs `path`"), ("[1]", "must be a JSON object"),
                       ('{"path": 3}', "`path` must be a string"), ("{bad", "not valid JSON")]:
        with pytest.raises(ToolFailure) as raised:
            parse_arguments("read_file", raw)
        assert words in raised.value.message
    with pytest.raises(ToolFailure, match="there is no tool `delete_file`"):
        parse_arguments("delete_file", "{}")


def test_the_safety_net_counts_repeats_and_error_runs() -> None:
    net = SafetyNet(restate_every=4)
    arguments = {"path": "a.py"}
    assert [bool(net.on_read("read_file", arguments)) for _ in range(6)] == \
        [False, False, True, True, True, True]
    with pytest.raises(NetTripped, match="same read_file 7 times"):
        net.on_read("read_file", arguments)
    net.changed("a.py")
    assert net.on_read("read_file", arguments) == ""  # the file changed: not a repeat
    for _ in range(5):
        net.failed(SOFT, "no_match", "edit_file")
    net.succeeded()
    for _ in range(5):
        net.failed(SOFT, "no_match", "edit_file")
    with pytest.raises(NetTripped, match="6 failed tool calls in a row"):
        net.failed(SOFT, "bad_range", "read_file")
    assert [t for t in range(1, 14) if net.restate_due(t)] == [5, 9, 13]


def test_compaction_keeps_paths_identifiers_and_decisions_verbatim() -> None:
    messages: list[dict[str, object]] = [{"role": "system", "content": "rules"},
                                         {"role": "user", "content": "goal"}]
    for n in range(12):
        arguments = f'{{"path": "pkg/mod_{n}.py", "old_text": "old_call_{n}(x)"}}'
        messages.append({"role": "assistant", "content": f"Decision {n}: use new_call_{n}",
                         "tool_calls": [{"id": f"c{n}", "type": "function", "function": {
                             "name": "edit_file", "arguments": arguments}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}",
                         "content": f"edited pkg/mod_{n}.py at line {n}\nmore " * 50})
    compacted = compaction.compact(messages)  # type: ignore[arg-type]
    assert compacted[:2] == messages[:2]
    assert compacted[3]["role"] == "assistant" and compacted[3:] == messages[-8:]
    summary = str(compacted[2]["content"])
    assert summary.startswith(compaction.TITLE)
    for n in range(8):  # the turns folded into the summary
        assert f'- edit_file {{"path": "pkg/mod_{n}.py", "old_text": "old_call_{n}(x)"}}' in summary
        assert f"  → edited pkg/mod_{n}.py at line {n}" in summary
        assert f"- Decision {n}: use new_call_{n}" in summary
        assert f"old_call_{n}" in summary.split("verbatim): ")[-1]
    assert compaction.size(compacted) < compaction.size(messages)  # type: ignore[arg-type]
    again = compaction.compact([*compacted, *messages[2:12]])  # type: ignore[arg-type]
    assert '- edit_file {"path": "pkg/mod_0.py"' in str(again[2]["content"])


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(.*a){20}$"])
def test_search_ends_a_pattern_that_backtracks_without_end(tmp_path: Path,
                                                           pattern: str) -> None:
    """A model-chosen regex that backtracks exponentially (issue 40): with `re` it held the
    worker for an hour; here the tool answers a soft error naming the problem and the fix."""
    (tmp_path / "slow.txt").write_text("a" * 3000 + "!\n")
    slow = Scope.of(tmp_path, ["slow.txt"], [])
    failed = failure(lambda: search(slow, pattern=pattern))
    assert failed.kind == "pattern_too_slow"
    assert f"`{pattern}` took more than 3 s" in str(failed)
    assert "simpler pattern" in str(failed)


def test_search_reads_each_line_up_to_its_cap(tmp_path: Path) -> None:
    """A minified file's one long line is searched up to MAX_LINE_CHARS, and a hit shows
    at most MAX_HIT_CHARS of it."""
    from jobs.recipes.llm.tools.reading import MAX_HIT_CHARS, MAX_LINE_CHARS
    line = "x" * (MAX_LINE_CHARS - 10) + "early" + "y" * 100 + "late"
    (tmp_path / "min.js").write_text(line + "\n")
    scoped = Scope.of(tmp_path, ["min.js"], [])
    assert search(scoped, pattern="late").startswith("no match for `late`")
    found = search(scoped, pattern="early").split("\n")
    assert found[0] == "1 match(es) in 1 file(s):"
    assert len(found[1]) == len("min.js:1: ") + MAX_HIT_CHARS
