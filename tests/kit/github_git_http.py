"""Smart-HTTP git for the fake GitHub (git_http=True): `git http-backend` behind installation-token auth."""

from __future__ import annotations

import base64
import os
import re
import subprocess
from typing import TYPE_CHECKING

from tests.kit import github_git
from tests.kit.github_api import SUSPENDED, can_access, suspended
from tests.kit.github_permissions import missing_permission

if TYPE_CHECKING:
    from tests.kit.github import FakeGitHub

GIT_PATH = re.compile(
    r"^/(?P<owner>[^/]+)/(?P<name>[^/]+)\.git/(?P<rest>info/refs|git-upload-pack|git-receive-pack)$"
)
# GitHub's rule for pushes by an App without `workflows: write` (the API's is in
# github_routes_git.py): no created or changed `.github/workflows/**` file, compared with the
# branch's old tip (a new branch: with the default branch), merges included.
PRE_RECEIVE = r"""#!/bin/sh
[ "$FAKEGH_WORKFLOWS" = refuse ] || exit 0
zero=0000000000000000000000000000000000000000
empty=4b825dc642cb6eb9a060e54bf8d69288fbee4904
what="refusing to allow a GitHub App to create or update workflow"
while read old new ref; do
  [ "$new" = "$zero" ] && continue
  if [ "$old" = "$zero" ]; then
    old=$(git rev-parse -q --verify "refs/heads/$FAKEGH_DEFAULT_BRANCH" || echo $empty)
  fi
  path=$(git diff-tree -r --name-only --no-renames "$old" "$new" -- .github/workflows | head -n 1)
  if [ -n "$path" ]; then
    echo "$what \`$path\` without \`workflows\` permission" >&2
    exit 1
  fi
done
"""
CHALLENGE = {"WWW-Authenticate": 'Basic realm="GitHub"', "Content-Type": "text/plain"}


def _token_from(headers: dict[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        _user, _, password = base64.b64decode(value).decode().partition(":")
    except ValueError:
        return None
    return password


def serve_git(gh: FakeGitHub, method: str, path: str, query: str, headers: dict[str, str],
              body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Answer one smart-HTTP request; each moved branch is logged as `o/r:pushed:<branch>:<sha7>`."""
    match = GIT_PATH.match(path)
    assert match is not None
    repo = gh.repos.get(f"{match['owner']}/{match['name']}")
    token = gh.tokens.get(_token_from(headers) or "")
    if token is None or token.expires_at <= gh.clock():
        return 401, CHALLENGE, b"Authentication required\n"
    if suspended(gh, token.installation_id):
        return 403, {"Content-Type": "text/plain"}, f"{SUSPENDED}\n".encode()
    if repo is None or not can_access(gh, token, repo):
        return 404, {"Content-Type": "text/plain"}, b"Repository not found.\n"
    pushing = match["rest"] == "git-receive-pack" or "service=git-receive-pack" in query
    if missing_permission(token.permissions, "contents=write" if pushing else "contents=read"):
        return 403, {"Content-Type": "text/plain"}, b"Permission to the repository denied.\n"
    before = {}
    if pushing:
        before = {b: github_git.branch_head(repo.path, b) for b in github_git.branches(repo.path)}
    env = {
        **os.environ, "GIT_PROJECT_ROOT": str(gh.root / "git"), "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": path, "REQUEST_METHOD": method, "QUERY_STRING": query,
        "CONTENT_TYPE": headers.get("content-type", ""), "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": "x-access-token", "REMOTE_ADDR": "127.0.0.1", "GIT_CONFIG_NOSYSTEM": "1",
    }
    if pushing:
        hook = repo.path / "hooks" / "pre-receive"
        if not hook.exists():
            hook.parent.mkdir(exist_ok=True)
            hook.write_text(PRE_RECEIVE, encoding="utf-8")
            hook.chmod(0o755)
        env["FAKEGH_DEFAULT_BRANCH"] = repo.default_branch
        env["FAKEGH_WORKFLOWS"] = "allow" if token.permissions.get("workflows") == "write" \
            else "refuse"
    if encoding := headers.get("content-encoding"):
        env["HTTP_CONTENT_ENCODING"] = encoding
    if protocol := headers.get("git-protocol"):
        env["GIT_PROTOCOL"] = protocol
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    status, out = 200, {}
    for line in head.decode(errors="replace").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.split()[0])
        elif key:
            out[key] = value.strip()
    if pushing and method == "POST":
        for branch in github_git.branches(repo.path):
            sha = github_git.branch_head(repo.path, branch)
            if sha != before.get(branch):
                gh.effect(f"{repo.full_name}:pushed:{branch}:{(sha or '')[:7]}")
    return status, out, payload
