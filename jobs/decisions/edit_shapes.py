"""Edit shapes (pure): each hunk of a diff normalised (names, literals and whitespace to
placeholders: Python through its tokenizer, other languages through a Pygments lexer) and the
hunks grouped by shape, with counts and one example each, outliers first (a shape seen once, or
in under 5% of the hunks: "review these first"). A summary sums with others (`add`), so one
review covers a milestone, a job or a campaign's repositories; `job_shapes` reads a job's."""

from __future__ import annotations

import hashlib
import io
import keyword
import tokenize
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import PurePosixPath

from pydantic import BaseModel
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import Comment, Name, Number, String, Text, Whitespace, _TokenType
from pygments.util import ClassNotFound
from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from jobs.kernel.job import Batch
from jobs.kernel.record_parts import raw_part

OUTLIER_SHARE = 0.05  # a shape in under 5% of the hunks is an outlier (and one seen once)
SHAPES_KEPT = 200  # per summary; the rest are summed into `other_hunks`
FORM_CHARS = 160  # a shape's readable form
EXAMPLE_CHARS = 160  # each side of an example
HUNK_LINES = 200  # lines of a hunk normalised (a longer hunk is its own shape by its head)


class Shape(BaseModel):
    key: str  # a digest of the normalised hunk
    form: str  # the normalised hunk, readable: `N = N(N)` → `N = N(N, 0)`
    count: int
    example: str  # where one hunk of it is: `path:line`
    before: str = ""  # that hunk's removed lines, cut
    after: str = ""  # its added lines, cut


class ShapeSummary(BaseModel):
    hunks: int = 0
    shapes: list[Shape] = []  # most seen first (`ordered` puts the outliers first)
    other_hunks: int = 0  # hunks of shapes beyond SHAPES_KEPT

    def is_outlier(self, shape: Shape) -> bool:
        return shape.count == 1 or shape.count < OUTLIER_SHARE * self.hunks

    def ordered(self) -> list[Shape]:
        """Outliers first ("review these first"), then the others, most seen first."""
        return sorted(self.shapes, key=lambda s: (not self.is_outlier(s), -s.count, s.example))

    def outliers(self) -> list[Shape]:
        return [shape for shape in self.ordered() if self.is_outlier(shape)]

    def keys(self) -> set[str]:
        return {shape.key for shape in self.shapes}

    def add(self, other: ShapeSummary) -> ShapeSummary:
        """This summary and `other` as one: counts of equal shapes summed, the first example kept."""
        merged = {shape.key: shape.model_copy() for shape in self.shapes}
        for shape in other.shapes:
            if shape.key in merged:
                merged[shape.key].count += shape.count
            else:
                merged[shape.key] = shape.model_copy()
        return _capped(list(merged.values()), self.hunks + other.hunks,
                       self.other_hunks + other.other_hunks)


def sum_summaries(summaries: Iterable[ShapeSummary]) -> ShapeSummary:
    """Many summaries as one (a milestone's batches, a campaign's repositories)."""
    total = ShapeSummary()
    for summary in summaries:
        total = total.add(summary)
    return total


def _capped(shapes: list[Shape], hunks: int, other: int) -> ShapeSummary:
    shapes.sort(key=lambda s: (-s.count, s.example))
    kept, rest = shapes[:SHAPES_KEPT], shapes[SHAPES_KEPT:]
    return ShapeSummary(hunks=hunks, shapes=kept, other_hunks=other + sum(s.count for s in rest))


def summarize(diff: str) -> ShapeSummary:
    """The shapes of `diff`'s hunks (text files only); an unreadable diff has none."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return ShapeSummary()
    found: dict[str, Shape] = {}
    hunks = 0
    for changed in patch:
        if changed.is_binary_file:
            continue
        for hunk in changed:
            removed = [line.value for line in hunk if line.is_removed][:HUNK_LINES]
            added = [line.value for line in hunk if line.is_added][:HUNK_LINES]
            if not removed and not added:
                continue
            hunks += 1
            form = f"{normalise(changed.path, removed)} → {normalise(changed.path, added)}"
            key = hashlib.sha256(form.encode()).hexdigest()[:16]
            if key in found:
                found[key].count += 1
                continue
            line = next((n.target_line_no or n.source_line_no for n in hunk
                         if n.is_added or n.is_removed), hunk.target_start)
            found[key] = Shape(key=key, form=_cut(form, FORM_CHARS), count=1,
                               example=f"{changed.path}:{line}",
                               before=_cut(" ⏎ ".join(v.strip() for v in removed), EXAMPLE_CHARS),
                               after=_cut(" ⏎ ".join(v.strip() for v in added), EXAMPLE_CHARS))
    return _capped(list(found.values()), hunks, 0)


def normalise(path: str, lines: list[str]) -> str:
    """`lines` as placeholders: names `N`, numbers `0`, strings `S`, comments `#`; keywords and
    operators kept; whitespace gone ("∅" for no lines)."""
    if not lines:
        return "∅"
    text = "".join(lines)
    if PurePosixPath(path).suffix in (".py", ".pyi"):
        return " ".join(_python_words(text))
    return " ".join(_lexed_words(path, text))


def _python_words(text: str) -> list[str]:
    words: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            words += _python_word(token)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a hunk is a fragment: an unclosed bracket ends it, its tokens so far count
    return words


def _python_word(token: tokenize.TokenInfo) -> list[str]:
    kind, value = token.type, token.string
    if kind == tokenize.NAME:
        return [value if keyword.iskeyword(value) or keyword.issoftkeyword(value) else "N"]
    if kind == tokenize.NUMBER:
        return ["0"]
    if kind == tokenize.STRING or kind in _FSTRING_TYPES:
        return ["S"]
    if kind == tokenize.COMMENT:
        return ["#"]
    if kind == tokenize.OP:
        return [value]
    return []  # NEWLINE, NL, INDENT, DEDENT, ENDMARKER: whitespace


_FSTRING_TYPES = {getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE",
                                                       "FSTRING_END") if hasattr(tokenize, name)}


@lru_cache(maxsize=64)
def _lexer(suffix: str) -> Lexer:
    try:
        return get_lexer_for_filename(f"file{suffix}", stripnl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False)


def _lexed_words(path: str, text: str) -> Iterator[str]:
    last = ""
    for kind, value in _lexer(PurePosixPath(path).suffix.lower()).get_tokens(text):
        word = _lexed_word(kind, value)
        if word and not (word in ("S", "#") and word == last):  # a string lexed in pieces: one
            yield word
        last = word or last


def _lexed_word(kind: _TokenType, value: str) -> str:
    if kind in Whitespace or (kind in Text and not value.strip()):
        return ""
    if kind in String:
        return "S"
    if kind in Number:
        return "0"
    if kind in Comment:
        return "#"
    if kind in Name:
        return "N"
    return value.strip()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def job_shapes(batches: Iterable[Batch]) -> ShapeSummary:
    """The shapes recorded for committed batches (`Batch.parts["evidence"]["shapes"]`, written by
    jobs/features/evidence), summed; a campaign sums the jobs' in turn."""
    found = []
    for batch in batches:
        data = raw_part(batch.parts, "evidence").get("shapes") if batch.commit else None
        if data is not None:
            found.append(ShapeSummary.model_validate(data))
    return sum_summaries(found)
