"""Who local commits are made as: the person's git identity, found as `git commit` finds it.

Author and committer each come from `GIT_AUTHOR_*` / `GIT_COMMITTER_*` in the environment, then
`author.*` / `committer.*`, then `user.*` configuration (the checkout's over the global and the
system files, as git reads them), then `EMAIL` for the address. Stepwise's own git calls ignore
global configuration and every `GIT_*` variable (jobs/adapters/git_runner.py), so the files are
read here explicitly, with `git config --file`. Server mode never asks: its commits are the
App's (bot/server/context.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from jobs.adapters.git_runner import run_git
from jobs.basics.errors import BadInputError

KEYS = ("user.name", "user.email", "author.name", "author.email", "committer.name",
        "committer.email")
NO_IDENTITY = ("git has no identity to commit as here (user.name and user.email are not set); "
               "Stepwise commits as you, as `git commit` would")
NO_IDENTITY_HINT = ("set it once: `git config --global user.name 'Your Name'` and "
                    "`git config --global user.email you@example.com` (or without --global, "
                    "in the checkout, for this repository only)")


def config_files(environ: Mapping[str, str]) -> list[Path]:
    """The system and global configuration files git reads before a repository's own, in
    order (a later one wins)."""
    files: list[Path] = []
    if not environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if environ.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(environ["GIT_CONFIG_GLOBAL"]))
    else:
        home = Path(environ.get("HOME") or Path.home())
        xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        files += [xdg / "git" / "config", home / ".gitconfig"]
    return files


def _read(args: list[str], *, cwd: Path, git_dir: Path) -> dict[str, str]:
    out = run_git(["config", *args, "--includes", "-z", "--get-regexp",
                   r"^(user|author|committer)\.(name|email)$"],
                  cwd=cwd, git_dir=git_dir, check=False)
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        key, _, value = entry.partition("\n")
        if key in KEYS:
            found[key] = value
    return found


def configured(*, cwd: Path, git_dir: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The identity keys as git sees them for the checkout: system, global, then its own."""
    values: dict[str, str] = {}
    for path in config_files(environ):
        if path.is_file():
            values |= _read(["--file", str(path)], cwd=cwd, git_dir=git_dir)
    return values | _read(["--local"], cwd=cwd, git_dir=git_dir)


def commit_identity(*, cwd: Path, git_dir: Path,
                    environ: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """`GIT_AUTHOR_*` and `GIT_COMMITTER_*` for the person's commits, or None when git has no
    name or address for either (where `git commit` asks "Please tell me who you are")."""
    env = os.environ if environ is None else environ
    values = configured(cwd=cwd, git_dir=git_dir, environ=env)
    identity: dict[str, str] = {}
    for role in ("author", "committer"):
        name = env.get(f"GIT_{role.upper()}_NAME") or values.get(f"{role}.name") \
            or values.get("user.name", "")
        email = env.get(f"GIT_{role.upper()}_EMAIL") or values.get(f"{role}.email") \
            or values.get("user.email") or env.get("EMAIL", "")
        if not name.strip() or not email.strip():
            return None
        identity[f"GIT_{role.upper()}_NAME"] = name.strip()
        identity[f"GIT_{role.upper()}_EMAIL"] = email.strip()
    return identity


def no_identity_error() -> BadInputError:
    return BadInputError(NO_IDENTITY, hint=NO_IDENTITY_HINT, code="no_git_identity")


def signed_off(message: str, repository: object) -> str:
    """`message` with the committer's `Signed-off-by:` line last, when the repository signs off
    (local mode's `signoff`) and the line is not there already (as `git commit -s`)."""
    identity = getattr(repository, "identity", {})
    if not getattr(repository, "signoff", False) or "GIT_COMMITTER_EMAIL" not in identity:
        return message
    line = (f"Signed-off-by: {identity['GIT_COMMITTER_NAME']} "
            f"<{identity['GIT_COMMITTER_EMAIL']}>")
    if line in message.splitlines():
        return message
    return f"{message.rstrip(chr(10))}\n{line}\n"
