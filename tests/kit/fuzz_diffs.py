"""Fuzzed unified diffs for the diff guard: file sections with hostile or quoted paths, mode,
rename and copy headers, hunks with wrong counts, foreign or duplicated lines; guard policies;
and what `check_diff` must do (only DiffParseError; no unsafe path passes)."""

from __future__ import annotations

from hypothesis import strategies as st

from jobs.decisions.guard import DiffParseError, GuardPolicy, GuardVerdict, check_diff
from jobs.inputs.globs import unsafe_path_reason
from tests.kit.fuzz_values import NASTY_PATHS, Unexpected


def _quoted(path: str) -> str:
    if any(c in path for c in '"\\\t\n') or not path.isascii():
        escaped = path.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        escaped = escaped.replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
        return f'"{escaped}"'
    return path


@st.composite
def _file_section(draw: st.DrawFn) -> list[str]:
    path = draw(st.one_of(st.sampled_from(["src/app.py", "src/util.py", *NASTY_PATHS]),
                          st.text(min_size=1, max_size=20)))
    other = draw(st.one_of(st.just(path), st.sampled_from(NASTY_PATHS)))
    a, b = _quoted(f"a/{path}"), _quoted(f"b/{other}")
    lines = [f"diff --git {a} {b}"]
    lines += draw(st.lists(st.sampled_from([
        "new file mode 100644", "new file mode 100755", "deleted file mode 100644",
        "old mode 100644", "new mode 100755", "new file mode 120000", "new file mode 160000",
        f"rename from {_quoted(path)}", f"rename to {_quoted(other)}", "similarity index 90%",
        f"copy from {_quoted(path)}", f"copy to {_quoted(other)}", "index 0000000..1111111 100644",
        "Binary files a/x and b/x differ", "dissimilarity index 80%",
    ]), max_size=3))
    if draw(st.booleans()):
        lines += [draw(st.sampled_from([f"--- {a}", "--- /dev/null", "--- a"])),
                  draw(st.sampled_from([f"+++ {_quoted('b/' + other)}", "+++ /dev/null", "+++ b"]))]
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            counts = draw(st.tuples(*[st.integers(min_value=0, max_value=5)] * 4))
            lines.append("@@ -{},{} +{},{} @@".format(*counts))
            lines += draw(st.lists(st.one_of(
                st.builds(lambda c, t: c + t, st.sampled_from(["+", "-", " "]), st.text(max_size=20)),
                st.just("\\ No newline at end of file")), max_size=6))
    return lines


@st.composite
def diffs(draw: st.DrawFn) -> str:
    sections = draw(st.lists(_file_section(), max_size=4))
    lines: list[str] = [line for section in sections for line in section]
    if draw(st.booleans()) and lines:  # now and then a foreign line, or a duplicated one
        at = draw(st.integers(min_value=0, max_value=len(lines)))
        lines.insert(at, draw(st.one_of(st.text(max_size=30), st.sampled_from(lines))))
    text = "\n".join(line.replace("\n", "") for line in lines)
    return text + ("\n" if draw(st.booleans()) else "")


policies = st.builds(
    GuardPolicy, allow_deletions=st.sampled_from([True, False, "ask"]),
    allow_new_files=st.booleans(), allow_test_edits=st.booleans(),
    allow_manifest_edits=st.booleans(), max_batch_lines=st.integers(min_value=1, max_value=50),
)


def check_guard(diff: str, policy: GuardPolicy) -> GuardVerdict | None:
    try:
        verdict = check_diff(diff, batch_files=["src/app.py"],
                             scope_files=["src/app.py", "src/util.py"], policy=policy)
    except DiffParseError:
        return None
    except Exception as exc:
        raise Unexpected(f"check_diff raised {exc!r} on {diff[:300]!r}") from exc
    for path in verdict.changed_files:
        if unsafe_path_reason(path) is not None and verdict.ok:
            raise Unexpected(f"an unsafe path passed the guard: {path!r}")
    return verdict
