"""The repository's CI on GitHub (part of the GitHub adapter): the check runs and commit statuses of
a commit, what the base branch requires (branch protection and rulesets), a failing check's
annotations and Actions job log tail, re-running checks, and Stepwise's own check runs (found
again by external id; the job's run left behind on an old head is closed as superseded).

Every call goes through `Installation._call`, so faults become StepwiseErrors as everywhere in
the adapter (5xx, 429 and rate limits retryable; a missing permission needs a human). Endpoints
are the ones the App's permissions reach: `checks: write`, `statuses: read`, `actions: write`,
`administration: read` for branch protection and `metadata: read` for rulesets.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.github.client import MAX_PAGES, PER_PAGE, Installation, response_json
from bot.github.errors import ForgeError, refused
from jobs.basics.errors import RetryClass
from jobs.basics.redact import redact
from jobs.decisions.ci import CheckObservation, from_commit_status
from jobs.notes.annotations import MESSAGE_CHARS, Annotation
from jobs.notes.check_runs import JOB_CHECK_NAME
from jobs.ports import CiFailure, RerunRefused

log = logging.getLogger(__name__)
JOB_CHECK_SUFFIX = ":job"  # the external id of the job's `Stepwise` run ends so
ACTIONS_SLUG = "github-actions"
ACTIONS_RERUN_BY_HAND = (
    "`{name}`: Stepwise cannot re-run GitHub Actions (the App has no `actions: write` "
    "permission): press **Re-run failed jobs** on the workflow run's page, {link}")
OTHER_APP_BY_HAND = ("`{name}` ({app}): only its own app can re-run it: press **Re-run** on "
                     "{link}")
STATUS_BY_HAND = "`{name}` (a commit status): re-run it in the CI that reports it, {link}"
LOG_TAIL_LINES = 100
LOG_READ_CHARS = 2_000_000  # only the end of a larger log is looked at
MAX_READ_ANNOTATIONS = 200  # per failing check
# Actions prefixes every log line with its time: "2024-05-01T12:00:00.1234567Z ".
_LOG_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")


@dataclass(frozen=True)
class Required:
    """The base branch's required status checks (protection and rulesets together)."""

    names: tuple[str, ...] = ()
    strict: bool = False


class RepositoryCi:
    """One repository's CI, read and written as one installation."""

    def __init__(self, client: Installation, full_name: str) -> None:
        self.client = client
        self.owner, self.name = full_name.split("/", 1)

    def _pages(self, fetch: Any, key: str | None, *, poll: str | None = None) -> list[dict[str, Any]]:
        """Every item of a paged list (`key`: the list inside GitHub's `{total_count, key}`).
        `fetch(gh, page, headers)` makes one page's request. A `poll` read (one the CI wait
        repeats) is conditional: sent with the last answer's ETag, a 304 costs no rate limit."""
        found: list[dict[str, Any]] = []
        reads = self.client.app.conditional
        for page in range(1, MAX_PAGES + 1):

            def read(gh: Any, page: int = page) -> Any:
                if poll is None:
                    return response_json(fetch(gh, page, None))
                where = (self.client.installation_id, self.owner, self.name, poll, page)
                return reads.read(where, lambda headers: fetch(gh, page, headers or None))

            data = self.client._call(read)
            items = data.get(key, []) if key is not None and isinstance(data, dict) else data
            found.extend(item for item in items or [] if isinstance(item, dict))
            if len(items or []) < PER_PAGE:
                break
        return found

    # -- reading a commit's checks ----------------------------------------------------------------
    def check_runs(self, sha: str) -> list[CheckObservation]:
        """The newest check run of each name on `sha` (every app's), all pages."""
        runs = self._pages(lambda gh, page, headers: gh.checks.list_for_ref(
            self.owner, self.name, sha, filter_="latest", per_page=PER_PAGE, page=page,
            headers=headers), "check_runs", poll=f"check-runs:{sha}")
        return [CheckObservation(name=str(run.get("name", "")), status=str(run.get("status", "")),
                                 conclusion=run.get("conclusion"),
                                 url=str(run.get("html_url") or run.get("details_url") or ""),
                                 app_slug=str((run.get("app") or {}).get("slug", "")),
                                 run_id=int(run.get("id", 0)),
                                 app_id=int((run.get("app") or {}).get("id") or 0))
                for run in runs]

    def statuses(self, sha: str) -> list[CheckObservation]:
        """The newest commit status of each context on `sha` (the combined status), all pages."""
        statuses = self._pages(lambda gh, page, headers: gh.repos.get_combined_status_for_ref(
            self.owner, self.name, sha, per_page=PER_PAGE, page=page, headers=headers), "statuses",
            poll=f"statuses:{sha}")
        return [from_commit_status(str(s.get("context", "")), str(s.get("state", "")),
                                   str(s.get("target_url") or "")) for s in statuses]

    def required(self, branch: str) -> Required:
        """What `branch` requires before merging, from where GitHub reports it to an App: branch
        protection's required status checks (`administration: read`) and the rulesets' rules
        for the branch (`metadata: read`), merged. Either may be unreadable (a 403 for an
        installation that has not accepted the permission, a 404 where there is none): that
        source then adds nothing. `GET /branches` is not asked: GitHub does not show `strict`
        to every token there.

        Stepwise's own checks are left out (a job cannot wait for itself): a requirement pinned
        to Stepwise's App id, or an unpinned one named like Stepwise's runs (which they
        satisfy). A requirement pinned to another App stays, whatever its name."""
        pinned: list[tuple[str, Any]] = []  # (context, the App id it must come from, or None)
        strict = False
        checks = self._readable(lambda gh, headers: gh.repos.get_status_checks_protection(
            self.owner, self.name, branch, headers=headers), f"protection:{branch}")
        if isinstance(checks, dict):
            # `checks` says which App each must come from; `contexts` mirrors their names
            pinned += [(str(c.get("context")), c.get("app_id")) for c in checks.get("checks") or []
                       if isinstance(c, dict) and c.get("context")] or \
                [(str(c), None) for c in checks.get("contexts") or []]
            strict = bool(checks.get("strict", False))
        for rule in self._branch_rules(branch):
            if rule.get("type") != "required_status_checks":
                continue
            parameters = rule.get("parameters") or {}
            pinned += [(str(c.get("context")), c.get("integration_id"))
                       for c in parameters.get("required_status_checks") or []
                       if isinstance(c, dict) and c.get("context")]
            strict = strict or bool(parameters.get("strict_required_status_checks_policy"))
        own = self.client.app.app_id
        names = [name for name, app in pinned
                 if (app != own if isinstance(app, int) and app > 0 else not is_own_check(name))]
        return Required(tuple(dict.fromkeys(names)), strict)

    def _readable(self, fetch: Any, poll: str) -> Any:
        """One conditional read (polled with the CI wait); None when GitHub answers 403 or 404."""
        reads = self.client.app.conditional
        where = (self.client.installation_id, self.owner, self.name, poll)
        try:
            return self.client._call(lambda gh: reads.read(
                where, lambda headers: fetch(gh, headers or None)))
        except ForgeError as exc:
            if exc.evidence.get("status") in (403, 404):
                return None
            raise

    def _branch_rules(self, branch: str) -> list[dict[str, Any]]:
        """The rules that apply to `branch` (every active ruleset's); none when GitHub has no
        rulesets there (older GHES: 404) or does not show them (403)."""
        try:
            return self._pages(lambda gh, page, headers: gh.repos.get_branch_rules(
                self.owner, self.name, branch, per_page=PER_PAGE, page=page, headers=headers),
                None, poll=f"rules:{branch}")
        except ForgeError as exc:
            if exc.evidence.get("status") in (403, 404):
                return []
            raise

    # -- a failing check's details ---------------------------------------------------------------
    def annotations(self, run_id: int) -> list[Annotation]:
        items: list[dict[str, Any]] = []
        for page in range(1, MAX_PAGES + 1):

            def read(gh: Any, page: int = page) -> Any:
                return response_json(gh.checks.list_annotations(self.owner, self.name, run_id,
                                                        per_page=PER_PAGE, page=page))

            batch = self.client._call(read, missing=[])
            items += [item for item in batch if isinstance(item, dict)]
            if len(batch) < PER_PAGE or len(items) >= MAX_READ_ANNOTATIONS:
                break
        return [Annotation(path=str(item.get("path", "")), line=int(item.get("start_line") or 1),
                           message=redact(str(item.get("message") or ""))[:MESSAGE_CHARS],
                           level=str(item.get("annotation_level") or "failure"),
                           title=redact(str(item.get("title") or "")))
                for item in items[:MAX_READ_ANNOTATIONS] if item.get("path")]

    def job_log_tail(self, job_id: int, lines: int = LOG_TAIL_LINES) -> str:
        """The last `lines` lines of an Actions job's log (GitHub answers with a redirect to a
        short-lived download URL, which githubkit follows), without Actions' timestamps and
        redacted; "" when the log is gone."""
        text = self.client._call(lambda gh: gh.actions.download_job_logs_for_workflow_run(
            self.owner, self.name, job_id).text, missing="")
        tail = str(text)[-LOG_READ_CHARS:].splitlines()[-lines:]
        return redact("\n".join(_LOG_TIME.sub("", line) for line in tail))

    # -- re-running ------------------------------------------------------------------------------
    def rerun(self, checks: Sequence[CheckObservation]) -> tuple[list[str], list[RerunRefused]]:
        """Ask CI to run the failed `checks` again where GitHub lets the App: an Actions job's
        workflow run re-runs its failed jobs (`rerun-failed-jobs`, which needs `actions: write`;
        once per run). Another app's checks and commit statuses only their own CI can re-run
        (GitHub refuses to re-request another app's check suite, and Actions ignores it).
        Returns what was asked, and what was not with the button to press instead."""
        asked: list[str] = []
        refused: list[RerunRefused] = []
        done_runs: dict[int, bool] = {}
        for check in checks:
            if check.app_slug == ACTIONS_SLUG and check.run_id:
                job = self._job(check.run_id)
                run_id = int(job.get("run_id", 0)) if isinstance(job, dict) else 0
                if run_id not in done_runs:
                    done_runs[run_id] = bool(run_id) and self._rerun_failed_jobs(run_id)
                    if done_runs[run_id]:
                        asked.append(f"workflow run {run_id}: failed jobs")
                if not done_runs[run_id]:
                    page = _run_page(job, check.url)
                    refused.append(RerunRefused(check, ACTIONS_RERUN_BY_HAND.format(
                        name=check.name, link=page)))
                continue
            if check.app_slug:
                refused.append(RerunRefused(check, OTHER_APP_BY_HAND.format(
                    name=check.name, app=check.app_slug, link=check.url or "its page")))
            else:
                refused.append(RerunRefused(check, STATUS_BY_HAND.format(
                    name=check.name, link=check.url or "the CI that reports it")))
        return asked, refused

    def _job(self, job_id: int) -> Any:
        return self.client._call(lambda gh: response_json(gh.actions.get_job_for_workflow_run(
            self.owner, self.name, job_id)), missing={})

    def _rerun_failed_jobs(self, run_id: int) -> bool:
        try:
            self.client._call(lambda gh: gh.actions.re_run_workflow_failed_jobs(
                self.owner, self.name, run_id))
        except ForgeError as exc:
            if exc.evidence.get("status") in (403, 404):  # no `actions: write`, or the run is gone
                return False
            raise
        return True

    # -- Stepwise's own check runs ----------------------------------------------------------------
    def find_check_run(self, body: dict[str, Any], *, newer_than: int = 0) -> dict[str, Any] | None:
        """The newest run made for `body` before: same name and external id on the same commit
        (a completed run is never changed, so one name may have several; GitHub shows the newest)."""
        runs = self._pages(lambda gh, page, headers: gh.checks.list_for_ref(
            self.owner, self.name, body["head_sha"], check_name=body["name"], filter_="all",
            per_page=PER_PAGE, page=page), "check_runs")
        mine = [run for run in runs if run.get("external_id") == body["external_id"]
                and int(run.get("id", 0)) > newer_than]
        return max(mine, key=lambda run: int(run.get("id", 0)), default=None)

    def upsert_check_run(self, body: dict[str, Any]) -> int:
        """Make the check run `body` (a CheckRunDraft's payload) what GitHub shows; its id.

        A run still in progress is updated; a completed run is never changed (GitHub refuses it):
        a new state after completion is a new run of the same name on that commit, and a run that
        already shows `body` is left as it is (a repeated publication). A create that GitHub made
        but answered with a fault is found again before trying anew."""
        existing = self.find_check_run(body)
        if existing is not None:
            if existing.get("status") != "completed":
                return self._update(existing, body)
            if shows(existing, body):
                return int(existing["id"])
        newer_than = int(existing["id"]) if existing is not None else 0
        created = self.client._create_once(
            lambda: self.client._call(lambda gh: response_json(gh.checks.create(self.owner, self.name,
                                                                        data=body))),
            lambda: self.find_check_run(body, newer_than=newer_than))
        return int(created["id"])

    def supersede_check_run(self, run_id: int, head_sha: str, *, old_sha: str, external_id: str,
                            completed: bool) -> None:
        """Close the job's run that the branch head left behind on `old_sha`: a run in progress is
        updated (gone already: nothing to do); a completed one (asking at a gate) is kept as
        GitHub keeps it, and a newer `neutral` run of the same name on that commit supersedes it."""
        output = {"title": f"Superseded by {head_sha[:7]}",
                  "summary": f"The branch moved on: see the run on `{head_sha[:7]}`."}
        if not completed:
            self.client._call(lambda gh: gh.checks.update(self.owner, self.name, run_id, data={
                "status": "completed", "conclusion": "neutral", "output": output}), missing=None)
            return
        self.upsert_check_run({"name": JOB_CHECK_NAME, "head_sha": old_sha, "external_id": external_id,
                               "status": "completed", "conclusion": "neutral", "output": output})

    def _update(self, existing: dict[str, Any], body: dict[str, Any]) -> int:
        update = {k: v for k, v in body.items() if k != "head_sha"}
        output = dict(update.get("output") or {})
        if (existing.get("output") or {}).get("annotations_count"):
            output.pop("annotations", None)  # GitHub adds annotations to those already there
        update["output"] = output
        if update.get("status") != "completed":
            update.pop("conclusion", None)
        run_id = int(existing["id"])
        self.client._call(lambda gh: gh.checks.update(self.owner, self.name, run_id, data=update))
        return run_id


def shows(run: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether GitHub's `run` already says what `body` would make it say."""
    output, wanted = run.get("output") or {}, body.get("output") or {}
    return (run.get("status"), run.get("conclusion"), output.get("title"), output.get("summary")) == (
        body.get("status"), body.get("conclusion"), wanted.get("title"), wanted.get("summary"))


def ci_failures(ci: RepositoryCi, failing: Sequence[CheckObservation]) -> list[CiFailure]:
    """Each failing check with its annotations and (Actions) log tail; a detail GitHub cannot
    give now is left empty: the verdict stands without it."""
    found: list[CiFailure] = []
    for check in failing:
        annotations: list[Annotation] = []
        tail = ""
        if check.run_id:
            try:
                annotations = ci.annotations(check.run_id)
                if check.app_slug == ACTIONS_SLUG:
                    tail = ci.job_log_tail(check.run_id)
            except ForgeError as exc:
                if exc.retry_class is RetryClass.DO_NOT_RETRY and not refused(exc):
                    raise  # the installation or repository is gone
                log.warning("could not read a failing check's details", extra={
                    "check": check.name, "code": exc.code})
        found.append(CiFailure(check=check.name, conclusion=check.conclusion or "failure",
                               url=check.url, annotations=tuple(annotations), log_tail=tail))
    return found


def is_own_check(name: str) -> bool:
    """`Stepwise` (the job's run) and `Stepwise / batch K`."""
    return name == JOB_CHECK_NAME or name.startswith(f"{JOB_CHECK_NAME} / ")


def _run_page(job: Any, fallback: str) -> str:
    """The workflow run's page (where "Re-run failed jobs" is) from an Actions job's record."""
    url = str(job.get("html_url") or "") if isinstance(job, dict) else ""
    page = url.split("/job/", 1)[0] if "/job/" in url else ""
    return page or fallback
