"""Reading a staged git diff for the guard: every line must be git's, unidiff parses it, and
git's C-quoted names and rename/copy lines give each file's real paths and modes (the policy
applied to them is jobs/decisions/guard.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from jobs.basics.errors import StepwiseError

# Every line of `git diff` output starts with one of these (hunk bodies with + - space \).
_KNOWN_LINE = re.compile(
    r"(?:diff --git |old mode |new mode |deleted file mode |new file mode |similarity index "
    r"|dissimilarity index |rename from |rename to |copy from |copy to |index |Binary files "
    r"|--- |\+\+\+ |@@ |[-+ \\]|$)"
)
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_NAME_RE = r'"(?:[^"\\]|\\.)*"|[^"]*'  # a bare name never holds a quote: git would quote it
_NAMED = ("rename from", "rename to", "copy from", "copy to")

class DiffParseError(StepwiseError):
    """The text handed to the guard is not a git diff it can read."""

    code = "unparseable_diff"


@dataclass(frozen=True)
class DiffEntry:
    kind: Literal["add", "delete", "rename", "copy", "modify"]
    source: str
    target: str
    binary: bool
    source_mode: str | None
    target_mode: str | None

    @property
    def shown(self) -> str:
        return self.source if self.kind == "delete" else self.target


def _unquote(token: str) -> str:
    """A git path as printed, C-quoted (`"a/x\\ty"`) or bare, back to the real name."""
    if len(token) < 2 or not (token.startswith('"') and token.endswith('"')):
        return token
    out = bytearray()
    for piece in re.finditer(r"\\([0-3][0-7]{2}|.)|[^\\]+", token[1:-1], re.DOTALL):
        escape = piece.group(1)
        if escape is None:
            out += piece.group().encode("utf-8", errors="surrogateescape")
        elif len(escape) == 3:
            out.append(int(escape, 8))
        else:
            out += bytes([_ESCAPES[escape]]) if escape in _ESCAPES else escape.encode()
    return out.decode("utf-8", errors="surrogateescape")


def _header_path(header: str) -> str:
    """The path of a `diff --git a/P b/P` line (same name both sides), without a/ and b/."""
    rest = header[len("diff --git ") :]
    both = re.fullmatch(f"({_NAME_RE}) ({_NAME_RE})", rest)
    if both and '"' in rest:
        source, target = _unquote(both.group(1)), _unquote(both.group(2))
    else:
        half = (len(rest) - 1) // 2
        source, target = rest[:half], rest[half + 1 :]
    if source[:2] != "a/" or target[:2] != "b/" or source[2:] != target[2:]:
        raise DiffParseError(
            f"cannot read the file names in {header!r}",
            hint="make the diff with git's default a/ and b/ prefixes (--src-prefix=a/ "
            "--dst-prefix=b/)",
        )
    return source[2:]


def parse_diff(diff_text: str) -> tuple[list[DiffEntry], int, int]:
    """The files of a `git diff --cached -M HEAD` text, and its added and removed line counts;
    DiffParseError on anything else."""
    for number, line in enumerate(diff_text.split("\n"), 1):
        if not _KNOWN_LINE.match(line):
            raise DiffParseError(
                f"line {number} of the diff is not part of a git diff: {line[:80]!r}",
                hint="the guard reads `git diff --cached -M HEAD` output only",
            )
    try:
        patch = PatchSet(diff_text)
    except UnidiffParseError as exc:
        raise DiffParseError(f"the diff cannot be parsed: {exc}") from exc
    headers = sum(line.startswith("diff --git ") for line in diff_text.split("\n"))
    if headers != len(patch) or (diff_text.strip() and not patch):
        raise DiffParseError(
            f"expected one file per `diff --git` header; found {len(patch)} file(s) for "
            f"{headers} header(s)",
            hint="the guard reads `git diff --cached -M HEAD` output only",
        )
    entries: list[DiffEntry] = []
    for pf in patch:
        info = [str(line).rstrip("\n") for line in pf.patch_info or []]
        if not info or not info[0].startswith("diff --git "):
            raise DiffParseError(f"{pf.path!r} has no `diff --git` header")
        named = {
            key: _unquote(line[len(key) + 1 :])
            for line in info[1:]
            for key in _NAMED
            if line.startswith(key + " ")
        }
        kind: Literal["add", "delete", "rename", "copy", "modify"] = "modify"
        if "rename from" in named or "copy from" in named:
            # Names with spaces make the header ambiguous; these lines are not.
            kind = "rename" if "rename from" in named else "copy"
            source, target = named.get(f"{kind} from", ""), named.get(f"{kind} to", "")
            if not (source and target):
                raise DiffParseError(f"{info[0]!r} lacks its `{kind} from/to` lines")
        else:
            source = target = _header_path(info[0])
            if any(line.startswith("new file mode ") for line in info):
                kind = "add"
            elif any(line.startswith("deleted file mode ") for line in info):
                kind = "delete"
        entries.append(
            DiffEntry(kind, source, target, pf.is_binary_file, pf.source_mode, pf.target_mode)
        )
    return entries, patch.added, patch.removed
