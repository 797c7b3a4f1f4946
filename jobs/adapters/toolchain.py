"""The toolchain part of an environment's key, and why a key changed.

The toolchain is what `setup` runs from the image: each program a setup command names, resolved
on the PATH (the real file, and its modification time), and the interpreter of a script program
(`#!/usr/bin/env node`, `#!/usr/bin/python3`). Only those: a directory added to PATH, or PATH in
another order, changes the key only when it changes which file a setup program is, so launching
`stepwise` through another wrapper does not rebuild an environment. A setup that runs a generic
runner (`make`, `tox`, a script of the repository) may use any interpreter, so the image's
python3, node and npm are named then too.

`key_changes` compares the inputs of two keys and names what differs, for the plan's
"environment rebuilt: ..." line.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from jobs.inputs.programs import program_name

INTERPRETERS = ("python3", "node", "npm")
# Programs that run other programs the key cannot see: the image's interpreters are named too.
GENERIC_RUNNERS = frozenset({"make", "gmake", "just", "tox", "nox", "task", "invoke"})


def _identity(path: str) -> str:
    resolved = Path(path).resolve()
    try:
        return f"{resolved}@{int(resolved.stat().st_mtime)}"
    except OSError:
        return str(resolved)


def _interpreter(path: str, search: str) -> str | None:
    """The program a script's `#!` line names (through `/usr/bin/env`), found on `search`."""
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        first = handle.read(256).split(b"\n", 1)[0]
        if not first.startswith(b"#!"):
            return None
        words = first[2:].decode("utf-8", "replace").split()
        if words and program_name(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(words[0], path=search) if words else None
    return None


def toolchain_identity(programs: Sequence[str] = INTERPRETERS, *,
                       search: str | None = None) -> str:
    """The machine, and for each program (as setup names it) the file it is on `search` (the
    PATH commands get) with its script interpreter; programs not found are named as missing."""
    search = search if search is not None else (os.environ.get("PATH") or os.defpath)
    names = list(dict.fromkeys(programs))
    if any(program_name(p) in GENERIC_RUNNERS or "/" in p for p in names):
        names += [name for name in INTERPRETERS if name not in names]
    parts = [platform.machine()]
    for name in names:
        if "/" in name:  # a program of the repository (setup may build it): its path says it all
            parts.append(name)
            continue
        found = shutil.which(name, path=search)
        if found is None:
            parts.append(f"{name}=missing")
            continue
        part = f"{name}={_identity(found)}"
        interpreter = _interpreter(found, search)
        if interpreter is not None:
            part += f" via {_identity(interpreter)}"
        parts.append(part)
    return ";".join(parts)


def key_changes(before: Mapping[str, object], after: Mapping[str, object]) -> list[str]:
    """What differs between two keys' inputs (environments.key_inputs), in words."""
    changes = []
    names = {"setup": "the `setup` commands", "env": "the config's `env`",
             "network": "the `network` setting"}
    for field, words in names.items():
        if before.get(field) != after.get(field):
            changes.append(words)
    old_files, new_files = before.get("files") or {}, after.get("files") or {}
    assert isinstance(old_files, Mapping) and isinstance(new_files, Mapping)
    special = {":ref": "the base branch", ":commit": "the base commit (no `cache_key` files "
               "are named, so any commit rebuilds)"}
    for path in sorted({*old_files, *new_files}):
        if old_files.get(path) != new_files.get(path):
            changes.append(special.get(path) or f"`{path}` (a `cache_key` file)")
    old_tools, new_tools = before.get("toolchain"), after.get("toolchain")
    if old_tools != new_tools:
        changes.append("the toolchain: " + _tool_words(str(old_tools or ""),
                                                       str(new_tools or "")))
    return changes


def _tool_words(before: str, after: str) -> str:
    old = dict(part.split("=", 1) for part in before.split(";") if "=" in part)
    new = dict(part.split("=", 1) for part in after.split(";") if "=" in part)
    changed = [f"{name} {old.get(name, 'not used')} → {new.get(name, 'not used')}"
               for name in sorted({*old, *new}) if old.get(name) != new.get(name)]
    return "; ".join(changed) or "the machine or the worktree's place"


def setup_programs(argvs: Sequence[Sequence[str]]) -> list[str]:
    """The programs setup's commands run, in order, once each."""
    return list(dict.fromkeys(argv[0] for argv in argvs if argv))


__all__ = ["GENERIC_RUNNERS", "INTERPRETERS", "key_changes", "setup_programs",
           "toolchain_identity"]
