"""One long-lived `git cat-file --batch-command` per repository: names resolved and objects read
without starting a git process each time (issue 47).

A job's step asks git the same small questions again and again: where the branch and the base
are now (a person may have moved either), the tree of a commit, a few files at a commit. Each
was a git process of its own; here they are lines written to one process that answers them in
order. It is started on the first question, with the same hardened argv and environment as
every git call (jobs/adapters/git_runner.py), and closed with the job (`close`); each answer
reads the repository as it is at that moment (git reads a ref's file, and looks for a pack it
has not seen, at every request), so a branch moved by someone else between two questions is
seen. A process that ended between two questions is started again; when it cannot start (a
git before 2.36 has no `--batch-command`) or dies while answering, the question is asked of a
one-shot `git cat-file` instead, and later ones too.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from jobs.adapters.git_runner import GitSession, git_process
from jobs.basics.errors import WorkspaceError

COMMAND = ["cat-file", "--batch-command"]  # git 2.36 or newer


@dataclass(frozen=True)
class Found:
    """What git answered for a name: the object's id and type, and its bytes when asked."""

    oid: str
    type: str
    data: bytes | None = None


class ReaderGoneError(Exception):
    """The long-lived process ended (or never started): ask a one-shot git."""


class ObjectReader:
    """Answers `info` (id and type) and `contents` (and the bytes) for object names such as
    `refs/heads/main^{commit}`, `<commit>^{tree}` or `<commit>:<path>`; None when git finds
    nothing by that name. A name holding a newline cannot be asked and is refused."""

    def __init__(self, *, cwd: Path, git_dir: Path) -> None:
        self._cwd, self._git_dir = cwd, git_dir
        self.session = GitSession(COMMAND, cwd=cwd, git_dir=git_dir)
        self._gone = False  # it could not start or died: one-shot from now on
        self._lock = threading.Lock()

    def info(self, name: str) -> Found | None:
        return self._ask("info", [name])[0]

    def info_of(self, names: list[str]) -> list[Found | None]:
        """Each name's id and type, in order (one request for them all)."""
        return self._ask("info", names) if names else []

    def contents(self, names: list[str]) -> list[Found | None]:
        """Each name's object with its bytes, in order (written in chunks that fit the pipe,
        so neither side waits for the other)."""
        return self._ask("contents", names) if names else []

    def close(self) -> None:
        """End the process (a later question starts another)."""
        with self._lock:
            self.session.stop()

    @staticmethod
    def askable(name: str) -> bool:
        """Whether `name` fits on a request line (git would cut it at a line break)."""
        return "\n" not in name and "\r" not in name

    def _ask(self, command: str, names: list[str]) -> list[Found | None]:
        if not all(self.askable(name) for name in names):
            raise ValueError(f"an object name with a line break cannot be asked: {names!r}")
        lines = [f"{command} {name}\n".encode("utf-8", "surrogateescape") for name in names]
        with self._lock:
            if not self._gone:
                try:
                    return [found for chunk in _chunks(lines)
                            for found in self._request(command, chunk)]
                except ReaderGoneError:
                    self.session.stop()
                    self._gone = True
        return self._one_shot(command, names)

    def _request(self, command: str, lines: list[bytes]) -> list[Found | None]:
        try:
            process = self.session.process()
        except OSError as exc:
            raise ReaderGoneError from exc
        assert process.stdin is not None and process.stdout is not None
        answers: list[Found | None] = []
        try:
            process.stdin.write(b"".join(lines))
            process.stdin.flush()
            for _ in lines:
                header = process.stdout.readline()
                if not header.endswith(b"\n"):
                    raise ReaderGoneError
                found = _parse_header(header)
                if found is not None and command == "contents":
                    size = int(header.split()[2])
                    data = process.stdout.read(size + 1)
                    if len(data) != size + 1:
                        raise ReaderGoneError
                    found = Found(found.oid, found.type, data[:size])
                answers.append(found)
        except (OSError, ValueError) as exc:  # a broken pipe, a closed file
            raise ReaderGoneError from exc
        return answers

    def _one_shot(self, command: str, names: list[str]) -> list[Found | None]:
        """The same questions of one `git cat-file --batch` (or `--batch-check`) process."""
        mode = "--batch" if command == "contents" else "--batch-check"
        done = git_process(["cat-file", mode], cwd=self._cwd, git_dir=self._git_dir,
                           stdin="".join(f"{name}\n" for name in names).encode(
                               "utf-8", "surrogateescape"))
        answers: list[Found | None] = []
        out, offset = done.stdout, 0
        try:
            for _ in names:
                end = out.index(b"\n", offset)
                header = out[offset:end + 1]
                found = _parse_header(header)
                offset = end + 1
                if found is not None and command == "contents":
                    size = int(header.split()[2])
                    found = Found(found.oid, found.type, out[offset:offset + size])
                    offset += size + 1
                answers.append(found)
        except (ValueError, ReaderGoneError):
            raise WorkspaceError(f"git cat-file {mode} failed: "
                                 f"{done.stderr.decode(errors='replace')[-300:]}") from None
        return answers


CHUNK = 32 * 1024  # request bytes written at once: less than a pipe holds


def _chunks(lines: list[bytes]) -> list[list[bytes]]:
    chunks: list[list[bytes]] = [[]]
    size = 0
    for line in lines:
        if chunks[-1] and size + len(line) > CHUNK:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += len(line)
    return chunks


def _parse_header(header: bytes) -> Found | None:
    """`<oid> <type> <size>` or `<name> missing` / `<name> ambiguous` (the name may hold spaces)."""
    line = header.rstrip(b"\n")
    if line.endswith((b" missing", b" ambiguous")):
        return None
    parts = line.split()
    if len(parts) != 3 or not parts[2].isdigit():
        raise ReaderGoneError  # not an answer to a request: the stream is lost
    return Found(parts[0].decode(), parts[1].decode())
