"""The data the test-integrity guard reads and reports (pure): a finding (the test and what
changed, with a short excerpt of the diff), what one test checks (`CheckedTest`: its assertions'
shapes and literals, its markers), a test file's tests, and a changed file of the batch."""

from __future__ import annotations

from dataclasses import dataclass, field

EXCERPT_CHARS = 160  # one side of a diff excerpt
MAX_FINDINGS = 50  # a gate names at most these; the rest are counted


@dataclass(frozen=True)
class Finding:
    """One way the batch makes the tests check less: the test (or file, or config) and what
    changed, with a short excerpt of the diff (`-` before, `+` after)."""

    test: str
    change: str
    excerpt: str = ""

    def line(self) -> str:
        """The finding in one line, its untrusted parts in code spans (`clip` keeps them inert)."""
        shown = f": {self.excerpt}" if self.excerpt else ""
        return f"`{clip(self.test)}`: {self.change}{shown}"


@dataclass(frozen=True)
class Assertion:
    """One assertion of a test: its shape (names and literals as placeholders, the assertion's
    own words kept), its literals in order, and its source (for the excerpt)."""

    shape: str
    literals: tuple[str, ...]
    source: str


@dataclass
class CheckedTest:
    """What one test checks, as read from its file."""

    name: str
    assertions: list[Assertion] = field(default_factory=list)
    markers: set[str] = field(default_factory=set)  # skip, xfail, only, todo, ...
    swallowed: int = 0  # assertions under a handler that does not re-raise
    unreachable: int = 0  # assertions after an early `return` or skip
    body: str = ""  # the body's shape without the name (a rename out of collection keeps it)


@dataclass(frozen=True)
class FileTests:
    """A test file's tests, and the functions that are not collected (for renames)."""

    tests: dict[str, CheckedTest]
    others: dict[str, str] = field(default_factory=dict)  # name -> body shape
    file_markers: frozenset[str] = frozenset()  # e.g. `pytestmark = pytest.mark.skip`
    unreadable: str = ""  # why the text could not be read (a syntax error)


@dataclass(frozen=True)
class FileChange:
    """A changed file of the batch: its text before (None: added) and after (None: deleted)."""

    path: str
    before: str | None
    after: str | None


def clip(text: str) -> str:
    one = " ".join(text.split()).replace("`", "'").replace("{{", "{ {")
    return one if len(one) <= EXCERPT_CHARS else one[:EXCERPT_CHARS - 1] + "…"


def excerpt(before: str | None, after: str | None) -> str:
    sides = [f"-{clip(before)}" if before is not None else "",
             f"+{clip(after)}" if after is not None else ""]
    return " / ".join(f"`{side}`" for side in sides if side)
