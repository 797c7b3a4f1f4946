"""What the configured commands need from outside the sandbox's view, and why a program is not
visible inside it.

bubblewrap shows the host's root read-only, but not its /tmp (the sandbox's is private and
empty), its /run (emptied: host services' sockets live there) nor the paths Stepwise hides (its
state, the clones, the App key). A tool in a PATH folder there, a link from a PATH folder into
there (`node_modules/.bin/tape` -> `../tape/bin/tape`) or a path an `env` value names there
would be missing inside, so `plan_view` binds them back, read-only, at the place the command
looks for them.

The rule that keeps this safe: binds come only from what Stepwise itself resolves from the
PATH of the process that runs it and the job's `env` values. A link that lives in the
repository (its checkout, the worktree) is never followed, so nothing a repository contains
widens what the sandbox shows; a hidden path is never bound, and neither is the temp directory
or /run itself (`why_unseen` then says which program, where it resolved and why it is not there).
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.adapters import sandbox_view as view
from jobs.inputs.sandboxing import SandboxPolicy

TMP_ROOT = Path("/tmp")  # noqa: S108 - the host's, which the sandbox replaces by its own
PRIVATE_ROOTS = {
    TMP_ROOT: "the sandbox's /tmp is a private, empty one",
    Path("/run"): "the sandbox's /run is empty (the host's services keep their sockets there)",
}
OWN_PLACES = Path("/tmp/stepwise")  # noqa: S108 - the sandbox's own layout (repository, caches)
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup
HIDDEN_WHY = "Stepwise hides it from sandboxed commands (its state, the clones, the App key)"
REPO_LINK_WHY = ("a link in the repository is never followed to show more of the machine "
                 "(nothing a repository contains widens what the sandbox shows)")


@dataclass(frozen=True)
class Bind:
    """One read-only bind: the host's `source` (resolved by Stepwise) shown at `dest`."""

    source: Path
    dest: Path
    origin: str  # what asked for it: "PATH entry /tmp/t/bin", "`env` NODE_PATH"


@dataclass(frozen=True)
class View:
    """What a sandboxed command sees beyond the read-only root: the binds, and the `env`
    values it cannot be shown (each a sentence naming the variable, the place and the rule)."""

    binds: tuple[Bind, ...]
    refusals: tuple[str, ...]

    def args(self) -> list[str]:
        return [arg for b in self.binds for arg in ("--ro-bind", str(b.source), str(b.dest))]


@dataclass(frozen=True)
class Places:
    """The places that decide what a command sees, all resolved: the paths Stepwise hides, the
    untrusted places whose links are never followed to bind more (the repository's checkout,
    the worktree, the environment `setup` built), and the writable paths bound at their place."""

    hidden: tuple[Path, ...]
    untrusted: tuple[Path, ...]
    shown: tuple[Path, ...]

    @classmethod
    def of(cls, *, hidden: Iterable[Path], untrusted: Iterable[Path],
           shown: Iterable[Path]) -> Places:
        def real(paths: Iterable[Path]) -> tuple[Path, ...]:
            return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in paths))
        return cls(real(hidden), real(untrusted), real(shown))


def follow(path: Path, places: Places) -> tuple[Path, Path | None]:
    """`path` with its links followed as the kernel would, except a link inside the
    repository: then (the path reached so far, that link); else (the real path, None)."""
    parts = list(path.parts[1:]) if path.is_absolute() else list(path.parts)
    current, links = Path("/"), 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        candidate = current / name
        if not candidate.is_symlink():
            current = candidate
            continue
        if _under(candidate, places.untrusted) or links >= MAX_LINKS:
            return candidate, candidate
        links += 1
        target = Path(os.readlink(candidate))
        if target.is_absolute():
            current = Path("/")
        parts = [*(target.parts[1:] if target.is_absolute() else target.parts), *parts]
    return current, None


def unseen_reason(path: Path, places: Places, binds: Sequence[Bind] = ()) -> str | None:
    """Why the sandbox does not show the host's real `path` at its place; None when it does."""
    if _under(path, places.shown):
        return None
    hidden = next((h for h in places.hidden if _under(path, (h,))), None)
    if hidden is not None:
        return f"it is inside {hidden}, and {HIDDEN_WHY}"
    if _under(path, [b.dest for b in binds]):
        return None
    root = next((r for r in PRIVATE_ROOTS if _under(path, (r,))), None)
    return None if root is None else PRIVATE_ROOTS[root]


def plan_view(path_value: str, env: Mapping[str, str], places: Places,
              program: Path | None = None) -> View:
    """The binds that show the tools of PATH (its folders, and the real places their links
    lead to), the interpreter of the `program` about to run (its `#!` line) and the paths `env`
    names, where the sandbox would not show them."""
    binds: dict[Path, Bind] = {}
    refusals: list[str] = []
    interpreter = _interpreter(program) if program is not None and not _under(
        program, places.untrusted) and follow(program, places)[1] is None else None
    if interpreter is not None:
        real, stopped = follow(interpreter, places)
        if stopped is None and real.exists():
            _show(real, interpreter, f"the `#!` line of {program}", places, binds)
    for entry in dict.fromkeys(path_value.split(os.pathsep)):
        written = Path(entry)
        if not written.is_absolute() or _under(written, (OWN_PLACES,)):
            continue
        real, stopped = follow(written, places)
        if stopped is not None or not real.is_dir():
            continue
        origin = f"PATH entry {entry}"
        _show(real, written, origin, places, binds)
        for target in _link_targets(real, places):
            _show(target, target, origin, places, binds)
    for name, value in sorted(env.items()):
        for piece in dict.fromkeys(str(value).split(os.pathsep)):
            written = Path(piece)
            if not piece.startswith("/") or _under(written, (OWN_PLACES,)):
                continue
            real, stopped = follow(written, places)
            if stopped is not None or not os.path.lexists(real):
                continue  # a repository's link, or a place a command may create
            refused = _show(real, written, f"`env` {name}", places, binds)
            if refused:
                fix = "a folder of its own under it" if refused.startswith(
                    tuple(str(r) for r in PRIVATE_ROOTS)) else "a place outside it"
                refusals.append(f"`env` {name} names {piece}, which the sandbox cannot show: "
                                f"{refused}; name {fix} instead")
    ordered = sorted(binds.values(), key=lambda b: len(b.dest.parts))
    return View(binds=tuple(ordered), refusals=tuple(refusals))


def why_unseen(program: str, found: Path, places: Places, view: View,
               entry: str = "") -> str | None:
    """Why `program`, found at `found` on the host's PATH (through PATH entry `entry`), does not
    run in the sandbox, in one sentence naming where it resolved; None when the sandbox shows
    it and its interpreter."""
    if entry and not Path(entry).is_absolute():
        return (f"`{program}` resolves outside the sandbox to {found}, through the relative "
                f"PATH entry `{entry}`, which the sandbox reads from the repository's folder "
                "instead: put the absolute folder on PATH")
    if _under(found, places.untrusted):  # seen through the repository's own mount
        real = Path(os.path.realpath(found))
        reason = None if _under(real, places.untrusted) else unseen_reason(real, places)
        return None if reason is None else (
            f"`{program}` is {found}, a link to {real}, which the sandbox does not show: "
            f"{reason}, and {REPO_LINK_WHY}")
    real, stopped = follow(found, places)
    where = str(found) if real == found else f"{found} (a link to {real})"
    head = f"`{program}` resolves outside the sandbox to {where}, which the sandbox does not show"
    if stopped is not None:
        return f"`{program}` resolves outside the sandbox to {found}, through {stopped}: " \
            f"{REPO_LINK_WHY}; put the tool's real folder on PATH"
    for place in dict.fromkeys((found.parent, real)):
        reason = unseen_reason(place, places, view.binds)
        if reason is not None:
            return f"{head}: {reason}{_fix(place, places)}"
    interpreter = _interpreter(real)
    if interpreter is not None:
        seen, stop = follow(interpreter, places)
        reason = REPO_LINK_WHY if stop is not None else unseen_reason(seen, places, view.binds)
        if reason is not None:
            return (f"`{program}` resolves outside the sandbox to {where}, whose interpreter "
                    f"{interpreter} (its `#!` line) the sandbox does not show: "
                    f"{reason}{_fix(seen, places)}")
    return None


def _fix(place: Path, places: Places) -> str:
    if any(_under(place, (h,)) for h in places.hidden):
        return "; install the tool outside it"
    return ("; put the folder that holds it on PATH (Stepwise then shows that folder read-only; "
            "a folder of its own, never the temp directory itself)")


def _show(real: Path, written: Path, origin: str, places: Places,
          binds: dict[Path, Bind]) -> str | None:
    """Add the binds that show `real` at its own place and at `written`, where the sandbox
    would not; return why it cannot be shown, or None."""
    for place in (real, written):
        if any(_under(place, (h,)) for h in places.hidden):
            return unseen_reason(place, places)
    need_real = unseen_reason(real, places, tuple(binds.values())) is not None
    need_written = written != real and unseen_reason(written, places) is not None
    if not need_real and not need_written:
        return None
    root = _tool_root(real)
    for place in (root, written):
        if place in PRIVATE_ROOTS:
            return f"{place} itself is never shown ({PRIVATE_ROOTS[place]})"
    if need_real:
        binds.setdefault(root, Bind(root, root, origin))
    if need_written:
        rel = real.relative_to(root).parts
        base = Path(*written.parts[:len(written.parts) - len(rel)])
        if written.parts[len(written.parts) - len(rel):] == rel and base not in PRIVATE_ROOTS \
                and base != Path("/"):
            binds.setdefault(base, Bind(root, base, origin))
        else:
            binds.setdefault(written, Bind(real, written, origin))
    return None


def _tool_root(path: Path) -> Path:
    """What to show for a tool at `path`: its whole `node_modules` (a package needs its
    dependencies), its virtualenv (it holds pyvenv.cfg), else its folder (or the file itself,
    straight in a private root)."""
    folder = path if path.is_dir() else path.parent
    chain = [folder, *folder.parents]
    stop = next((i for i, p in enumerate(chain) if p in PRIVATE_ROOTS), len(chain) - 1)
    within = chain[:stop]
    modules = [p for p in within if p.name == "node_modules"]
    if modules:
        return modules[-1]
    venv = next((p for p in within if (p / "pyvenv.cfg").is_file()), None)
    if venv is not None:
        return venv
    return path if folder in PRIVATE_ROOTS else folder


def _link_targets(folder: Path, places: Places) -> list[Path]:
    """The real places the links in a PATH folder lead to, where the sandbox would not show
    them (links in the repository are not followed)."""
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return []
    return [target for real, target in _unseen_links(folder, stamp, places.hidden,
                                                     places.untrusted)
            if not _under(real, places.shown)]


@functools.lru_cache(maxsize=256)
def _unseen_links(folder: Path, stamp: int, hidden: tuple[Path, ...],
                  untrusted: tuple[Path, ...]) -> tuple[tuple[Path, Path], ...]:
    """(real path, where following it leads) of each link in `folder` the sandbox would not
    show, as of the folder's modification time `stamp` (as `_links` is): a job asks it with the
    same folders for every command, and /usr/bin's hundreds of links made it most of the
    engine's own CPU a batch. The writable paths a command is shown (new for each command)
    are left out of the key and applied by `_link_targets`; the repository's places are in it,
    so a repository's links are never followed."""
    places = Places(hidden, untrusted, ())
    found: list[tuple[Path, Path]] = []
    for link, real in _links(folder, stamp):
        if unseen_reason(real, places) is None:
            continue
        target, stopped = follow(link, places)
        if stopped is None and target.exists():
            found.append((real, target))
    return tuple(found)


@functools.lru_cache(maxsize=256)
def _links(folder: Path, stamp: int) -> tuple[tuple[Path, Path], ...]:
    """Each link in `folder` and its real path, as of the folder's modification time `stamp`
    (PATH folders such as /usr/bin hold hundreds: read once, not for every command)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ()
    return tuple((Path(e.path), Path(os.path.realpath(e.path))) for e in entries
                 if e.is_symlink())


def _interpreter(program: Path) -> Path | None:
    """The absolute interpreter a script's `#!` line names, if any."""
    try:
        with program.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    return Path(words[0]) if words and words[0].startswith("/") else None


def _under(path: Path, roots: Iterable[Path]) -> bool:
    """Whether `path` is one of `roots` or inside one (compared as text: called for every link
    of every PATH folder)."""
    text = str(path)
    return any(text == str(root) or text.startswith(str(root).rstrip("/") + "/") for root in roots)


# -- what the sandboxes ask (jobs/adapters/sandbox.py) ---------------------------------------


def places_for(cwd: Path, policy: SandboxPolicy, writable: Sequence[Path]) -> Places:
    """What decides a command's view: hidden paths, the repository's places (the worktree, its
    checkout, the environment setup built: links there are not followed), writable paths."""
    built = (policy.environment.tree,) if policy.environment is not None else ()
    return Places.of(hidden=policy.hidden_paths,
                     untrusted=(cwd, *policy.repository_paths, *built), shown=writable)


def found_on_path(program: str, cwd: Path, policy: SandboxPolicy) -> tuple[Path, str] | None:
    """Where the host's PATH (the environment's program folders first) finds `program`, and
    through which PATH entry."""
    path = view.lookup_path(os.environ.get("PATH") or os.defpath, cwd=cwd,
                            environment=policy.environment)
    if os.sep in program:
        return (Path(os.path.abspath(program)), "") if shutil.which(program) else None
    for entry in path.split(os.pathsep):
        found = shutil.which(program, path=entry or os.curdir)
        if found is not None:
            return Path(os.path.abspath(found)), entry
    return None


def why_not_run(program: str, cwd: Path, policy: SandboxPolicy, places: Places,
                seen: View) -> str:
    """`why_unseen` of `program` as the host's PATH finds it; "" when the sandbox shows it."""
    found = found_on_path(program, cwd, policy)
    return "" if found is None else why_unseen(program, found[0], places, seen,
                                               entry=found[1]) or ""
