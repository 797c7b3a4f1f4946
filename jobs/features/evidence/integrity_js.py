"""What a JavaScript/TypeScript test file checks, read with patterns (pure): each `it(`/`test(`
(and `describe(`) with its modifiers (`.skip`, `.only`, `.todo`, `.fails`, `xit`, `fit`, ...),
and in the text up to the next test its `expect(`/`assert` statements and empty `catch` blocks.

An assertion's shape is its tokens with string and number literals (and `true`, `false`,
`null`, `undefined`) as one placeholder and every other identifier as another, except the
assertion's own words (`expect`, `assert`, `not`, `resolves`, `to*` matchers, node:assert's
methods): `toBe(5)` -> `toBe(6)` changes the literals, `toBe(5)` -> `toBeTruthy()` the shape.
"""

from __future__ import annotations

import re

from jobs.features.evidence.integrity_shapes import Assertion, CheckedTest, FileTests

EXTENSIONS = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")

_TEST = re.compile(
    r"""(?<![\w.$])(?P<prefix>x|f)?(?P<kind>it|test|describe|suite|context)"""
    r"""(?P<mods>(?:\s*\.\s*(?:only|skip|todo|fails|concurrent|sequential|skipIf|runIf|each)"""
    r"""(?:\s*\([^()]*\))?)*)\s*\(\s*(?P<q>['"`])(?P<name>(?:\\.|(?!(?P=q)).){0,300})(?P=q)""")
_MODIFIER = re.compile(r"\.\s*(only|skip|todo|fails|skipIf)")
_STATEMENT = re.compile(r"(?<![\w.$])(?:expect|assert)\s*[.(]")
_TOKEN = re.compile(r"""(?P<str>'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`)"""
                    r"""|(?P<num>\b\d[\d_.eExXa-fA-F]*n?\b)|(?P<word>[A-Za-z_$][\w$]*)"""
                    r"""|(?P<punct>\S)""")
_LITERAL_WORDS = frozenset({"true", "false", "null", "undefined", "NaN", "Infinity"})
_OWN_WORDS = frozenset({
    "expect", "assert", "not", "resolves", "rejects", "ok", "equal", "notEqual", "strictEqual",
    "notStrictEqual", "deepEqual", "deepStrictEqual", "notDeepEqual", "notDeepStrictEqual",
    "throws", "doesNotThrow", "match", "doesNotMatch", "fail", "ifError", "soft", "poll",
})
_EMPTY_CATCH = re.compile(r"catch\s*(?:\([^)]*\))?\s*\{\s*(?://[^\n]*\s*)*\}|\.catch\(\s*\(\)\s*=>"
                          r"\s*(?:\{\s*\}|undefined|null)\s*\)")
_EARLY_RETURN = re.compile(r"^\s*return\s*;?\s*$", re.MULTILINE)


def _statement_end(text: str, start: int) -> int:
    """The end of the statement starting at `start`: the `;` or line end at bracket depth 0."""
    depth, index = 0, start
    while index < len(text) and index - start < 600:
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return index
        elif char in ";\n" and depth <= 0:
            return index
        index += 1
    return index


def _assertion(source: str) -> Assertion:
    shape: list[str] = []
    literals: list[str] = []
    for match in _TOKEN.finditer(source):
        word = match.group("word")
        if match.group("str") or match.group("num") or word in _LITERAL_WORDS:
            literals.append(match.group(0))
            shape.append("<literal>")
        elif word is not None:
            shape.append(word if word in _OWN_WORDS or word.startswith("to") else "_")
        else:
            shape.append(match.group(0))
    return Assertion(" ".join(shape), tuple(literals), source.strip())


def _assertions(segment: str) -> list[Assertion]:
    return [_assertion(segment[m.start():_statement_end(segment, m.start())])
            for m in _STATEMENT.finditer(segment)]


def _markers(match: re.Match[str]) -> set[str]:
    markers = set(_MODIFIER.findall(match.group("mods") or ""))
    if match.group("prefix") == "x":
        markers.add("skip")
    if match.group("prefix") == "f":
        markers.add("only")
    return markers


def _swallowed(segment: str) -> int:
    return sum(len(_assertions(segment[m.start() - 400 if m.start() > 400 else 0:m.start()]))
               and 1 for m in _EMPTY_CATCH.finditer(segment))


def read_tests(text: str) -> FileTests:
    """The tests of a JavaScript/TypeScript test file, keyed by their describe path and name."""
    matches = list(_TEST.finditer(text))
    tests: dict[str, CheckedTest] = {}
    describes: list[str] = []
    inherited: set[str] = set()  # the describe's markers: a skipped describe skips its tests
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        segment = text[match.end():end]
        if match.group("kind") in ("describe", "suite", "context"):
            describes = [match.group("name")]  # one level: enough to keep names apart
            inherited = _markers(match)
            continue
        name = " > ".join([*describes, match.group("name")])
        key, number = name, 2
        while key in tests:
            key, number = f"{name} #{number}", number + 1
        early = _EARLY_RETURN.search(segment)
        tests[key] = CheckedTest(
            name=key, assertions=_assertions(segment), markers=_markers(match) | inherited,
            swallowed=_swallowed(segment),
            unreachable=len(_assertions(segment[early.end():])) if early else 0,
            body=" ".join(a.shape for a in _assertions(segment)))
    return FileTests(tests)
