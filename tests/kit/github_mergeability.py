"""Whether the fake GitHub's pull request can be merged, answered as GitHub answers it: `mergeable`
is null (state `unknown`) on the first read after the head or the base moved, while GitHub's
background job computes it, and only a later read carries the result; then `dirty` for a
conflict, `blocked` when the base requires signed commits and a commit is not verified, `draft`,
or `clean`. Code that reads `mergeable` once and trusts it sees null, as on GitHub."""

from __future__ import annotations

from tests.kit import github_git
from tests.kit.github_git import GitError
from tests.kit.github_model import FakeRepo, PullRequest
from tests.kit.github_state import GitHubState


def unverified(state: GitHubState, repo: FakeRepo, base: str, head: str) -> list[str]:
    """The pull request's commits GitHub did not sign."""
    return [c.sha for c in github_git.log(repo.path, f"{base}..{head}")
            if c.sha not in state.signed_commits]


def requires_signatures(repo: FakeRepo, branch: str) -> bool:
    """Branch protection's required signatures, or an active ruleset's `required_signatures`."""
    if branch in repo.ci.signed_branches:
        return True
    return any(rs.required_signatures and rs.enforcement == "active" and branch in
               {repo.default_branch if b == "~DEFAULT_BRANCH" else b for b in rs.branches}
               for rs in repo.ci.rulesets)


def _computed(state: GitHubState, repo: FakeRepo, pr: PullRequest, base: str,
              head: str) -> tuple[bool, str]:
    try:
        github_git.git_text(repo.path, "merge-tree", "--write-tree", base, head)
    except GitError:
        return False, "dirty"
    if requires_signatures(repo, pr.base_ref) and unverified(state, repo, base, head):
        return True, "blocked"
    return True, "draft" if pr.draft else "clean"


def mergeability(state: GitHubState, repo: FakeRepo, pr: PullRequest) -> tuple[bool | None, str]:
    """(`mergeable`, `mergeable_state`) as a read of the pull request shows them now."""
    if pr.state == "closed":
        return None, "unknown"
    head = github_git.branch_head(repo.path, pr.head_ref) or pr.head_sha
    base = github_git.branch_head(repo.path, pr.base_ref)
    if base is None or not head:
        return None, "unknown"
    key = f"{base}..{head}"
    if pr.mergeable_computed != key:  # GitHub starts computing now; this read sees null
        pr.mergeable_computed = key
        return None, "unknown"
    return _computed(state, repo, pr, base, head)
