"""Applying a model's diff: `git apply --check` first, and for a hunk that does not apply, the
closest matching region of the real file (difflib) as feedback."""

from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from jobs.adapters.git_runner import git_process
from jobs.adapters.safe_paths import Kind, check_new_path, kind_of, read_regular, require_regular
from jobs.basics.errors import WorkspaceError

CANDIDATES = 40  # windows scored in full after the cheap line-overlap pre-selection


@dataclass(frozen=True)
class ApplyProblem:
    message: str  # for the model: which hunk, the closest region of the file, the difference
    kind: str = "apply_failed"


def strip_level(diff: str) -> int:
    """1 when the headers carry git's a/ and b/ prefixes, else 0."""
    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path != "/dev/null":
                return 1 if path[:2] in ("a/", "b/") else 0
    return 1


@dataclass(frozen=True)
class _Applied:
    returncode: int
    stderr: str


def _git_apply(worktree: Path, diff: str, *extra: str) -> _Applied:
    """`git apply` to the files only, with an empty git directory of its own: nothing planted
    in the worktree (a `.git`, its config or filters) is ever found or read."""
    refuse_unsafe_paths(worktree, diff)
    with tempfile.TemporaryDirectory(prefix="stepwise-apply-") as empty:
        git_dir = Path(empty)
        (git_dir / "objects").mkdir()
        (git_dir / "refs").mkdir()
        (git_dir / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        done = git_process(["apply", f"-p{strip_level(diff)}", "--whitespace=nowarn", *extra,
                            "-"], cwd=worktree, git_dir=git_dir, work_tree=worktree,
                           stdin=diff.encode("utf-8", errors="surrogateescape"))
    return _Applied(done.returncode, done.stderr.decode("utf-8", errors="replace"))


def refuse_unsafe_paths(worktree: Path, diff: str) -> None:
    """Every file the diff changes is a regular file in the worktree, every file it creates a
    new path under real directories; else UnsafePathError names the path."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return  # git apply refuses it as well, and says why
    level = strip_level(diff)
    for patched in patch:
        for raw in (patched.source_file, patched.target_file):
            if raw == "/dev/null":
                continue
            path = raw.split("/", level)[-1] if level else raw
            if patched.is_added_file or (patched.is_rename and raw == patched.target_file):
                check_new_path(worktree, path)
            elif kind_of(worktree, path) is not Kind.MISSING:
                require_regular(worktree, path)


def check_applies(worktree: Path, diff: str) -> ApplyProblem | None:
    """None when `git apply --check` accepts `diff` in `worktree`, else the precise problem."""
    done = _git_apply(worktree, diff, "--check")
    if done.returncode == 0:
        return None
    said = "\n".join(done.stderr.strip().splitlines()[-4:])
    explained = explain(worktree, diff)
    if explained:
        return ApplyProblem("\n\n".join(explained) + f"\n\n(`git apply --check` said: {said})")
    return ApplyProblem(f"`git apply --check` refused your diff: {said}")


def apply(worktree: Path, diff: str) -> None:
    """Apply a diff that passed `check_applies` (to the files, not the index)."""
    done = _git_apply(worktree, diff)
    if done.returncode != 0:
        raise WorkspaceError(f"git apply failed after its check passed: {done.stderr[-400:]}")


def explain(worktree: Path, diff: str) -> list[str]:
    """One paragraph per file or hunk that does not match the files in `worktree`."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return []
    level = strip_level(diff)
    problems: list[str] = []
    for patched in patch:
        raw = patched.source_file if not patched.is_added_file else patched.target_file
        path = raw.split("/", level)[-1] if level else raw
        target = worktree / path
        if patched.is_added_file:
            if target.exists():
                problems.append(f"{path} already exists; change it with a normal hunk")
            continue
        if kind_of(worktree, path) is Kind.MISSING:
            problems.append(f"{path} does not exist in the repository (paths are relative to "
                            "the repository root, as in the request)")
            continue
        real = read_regular(worktree, path).decode("utf-8", errors="replace").splitlines()
        for number, hunk in enumerate(patched, 1):
            old = [line.value.rstrip("\r\n") for line in hunk
                   if line.line_type in (" ", "-")]
            if old and not _found(old, real):
                header = f"@@ -{hunk.source_start},{hunk.source_length} " \
                         f"+{hunk.target_start},{hunk.target_length} @@"
                problems.append(hunk_feedback(path, number, header, old, real,
                                              hunk.source_start))
    return problems


def _found(old: list[str], real: list[str]) -> bool:
    n = len(old)
    return any(real[i:i + n] == old for i in range(len(real) - n + 1))


def closest_region(old: list[str], real: list[str], near: int) -> tuple[int, float]:
    """The 0-based start of the window of `real` most like `old`, and its similarity (0..1)."""
    n = len(old)
    if len(real) <= n:
        return 0, difflib.SequenceMatcher(None, "\n".join(old), "\n".join(real)).ratio()
    wanted = {line.strip() for line in old if line.strip()}
    hits = [line.strip() in wanted for line in real]
    starts = range(len(real) - n + 1)
    cheap = sorted(starts, key=lambda s: (-sum(hits[s:s + n]), abs(s + 1 - near)))[:CANDIDATES]
    joined = "\n".join(old)
    scored = [(difflib.SequenceMatcher(None, joined, "\n".join(real[s:s + n])).ratio(), s)
              for s in cheap]
    ratio, start = max(scored, key=lambda item: (item[0], -abs(item[1] + 1 - near)))
    return start, ratio


def hunk_feedback(path: str, number: int, header: str, old: list[str], real: list[str],
                  near: int) -> str:
    """Hunk N does not apply: the closest region of the file, numbered, and the first difference."""
    start, ratio = closest_region(old, real, near)
    end = min(len(real), start + len(old))
    shown = "\n".join(f"{n:>5}| {real[n - 1]}" for n in range(start + 1, end + 1))
    lines = [f"Hunk {number} of {path} (`{header}`) does not apply: its context and `-` lines "
             f"are not in the file as written."]
    if not real:
        return lines[0] + f" {path} is empty."
    lines.append(f"The closest matching region of the real file is lines {start + 1}–{end} "
                 f"({ratio:.0%} similar):\n{shown}")
    for offset, (want, have) in enumerate(zip(old, real[start:end], strict=False)):
        if want != have:
            kind = " (they differ only in whitespace)" if want.split() == have.split() else ""
            lines.append(f"First difference: your hunk has `{want}` where line "
                         f"{start + offset + 1} of the file is `{have}`{kind}.")
            break
    lines.append("Copy context and `-` lines exactly from the file.")
    return "\n".join(lines)
