"""Where a job lives: its issue, pull request and commits on GitHub, and its task center page.
Only http(s) links built from validated parts reach a page (a record is untrusted input)."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from jobs.kernel.records import PullRequest

_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def safe_url(url: object) -> str | None:
    """Only http(s) links reach a page (a record is untrusted input)."""
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        return None
    return url


class Links:
    """Where a job lives on GitHub and in the task center."""

    def __init__(self, github_web: str, task_center: str | None = None) -> None:
        self.github_web = github_web.rstrip("/")
        self.task_center = (task_center or "").rstrip("/")

    def repo(self, repo: str) -> str | None:
        return f"{self.github_web}/{quote(repo, safe='/')}" if _REPO.match(repo) else None

    def issue(self, repo: str, number: int) -> str | None:
        base = self.repo(repo)
        return f"{base}/issues/{number}" if base else None

    def commit(self, repo: str, sha: str | None) -> str | None:
        base = self.repo(repo)
        return f"{base}/commit/{sha}" if base and sha and _SHA.match(sha) else None

    @staticmethod
    def pull(pull: PullRequest | None) -> tuple[int | None, str | None]:
        if pull is None:
            return None, None
        return pull.number, safe_url(pull.url)

    def job(self, job_id: str, batch: int | None = None) -> str:
        anchor = f"#batch-{batch}" if batch is not None else ""
        return f"{self.task_center}/jobs/{quote(job_id, safe='')}{anchor}"
