"""The campaign port on GitHub: repositories are the installation's, those its viewer may see
(access.py); a preview reads a mirror; each repository's job is an ordinary job on a tracking
issue the App opens there, started and steered as a labelled issue's would be: nothing is
created or rewritten in a repository unless the person who steers the campaign may steer there,
and its plan gate is passed only for the plan the campaign approved."""

from __future__ import annotations

from bot.github.campaign_calls import create_issue_once, update_issue_body
from bot.github.client import Installation
from bot.github.installed_repos import InstalledRepo, installation_repositories
from bot.github.write_budget import WriteBudgetWait
from bot.plumbing.campaign_store import CampaignDoc
from bot.server.campaigns.access import Audience
from bot.server.context import ServerContext
from bot.server.steer import Actor, ServerWiring, may_steer, steer, verb
from bot.server.steps import queue_next_step
from bot.steering import resolve_approvers
from jobs.basics.errors import StepwiseError
from jobs.engine import usecases
from jobs.engine.engine import Base, create_job
from jobs.engine.scope_preview import preview_scope
from jobs.features.campaigns.port import (
    PACED_ROW,
    JobView,
    LeftOut,
    Preview,
    baseline_word,
    gate_answers,
    job_state,
    plan_digest,
    preview_of,
    view_shapes,
)
from jobs.features.campaigns.record import OPEN_STATES, RepoEntry, RepoState
from jobs.features.campaigns.selection import RepoFacts
from jobs.features.campaigns.steering import JobAction
from jobs.inputs.config import CONFIG_PATH, load_config
from jobs.inputs.config_errors import InvalidConfigError
from jobs.inputs.spec import IssueTask, parse_issue
from jobs.kernel.gates import Verb, note_spec_change
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate

REPO_MARKER = "<!-- stepwise-campaign-repo:{id} -->"
NO_ACCESS = ("waiting for someone with access: @{who} may not start a job here ({why}); "
             "`approve {repo}` by someone who may")
_VERBS = {JobAction.APPROVE: Verb.APPROVE, JobAction.RETRY: Verb.RETRY,
          JobAction.CANCEL: Verb.CANCEL}


def _unchanged(job: Job) -> str:
    """The change that changes nothing (`skip` of a repository whose job has ended)."""
    return ""


def web_host(api_url: str) -> str:
    """https://github.com for api.github.com; https://HOST for GHES's https://HOST/api/v3."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/api/v3")
    return base.replace("://api.", "://", 1)


class ServerCampaignPort:
    """`viewer`: who the previews and `add` answer (the starter, or who said `add`); only
    repositories they may see (access.py) are previewed or added."""

    def __init__(self, ctx: ServerContext, doc: CampaignDoc, *, viewer: str = "") -> None:
        self.ctx, self.doc, self.viewer = ctx, doc, viewer
        self.client: Installation = ctx.installation(doc.installation_id)
        self._installed: dict[str, InstalledRepo] | None = None
        self._audience: Audience | None = None
        self.web = web_host(ctx.settings.github_api_url)

    def audience(self) -> Audience:
        if self._audience is None:
            self._audience = Audience(self.client, viewer=self.viewer,
                                      control=self.installed().get(self.doc.control.lower()))
        return self._audience

    def visible(self) -> list[InstalledRepo]:
        """The installation's repositories the viewer may see in this campaign."""
        return [repo for repo in self.installed().values() if self.audience().may_see(repo)]

    def task(self) -> IssueTask:
        return parse_issue(self.doc.title, self.issue_body())

    def issue_body(self) -> str:
        return (f"{self.doc.task_body}\nPart of the Stepwise campaign "
                f"{self.doc.control}#{self.doc.number}.\n"
                + REPO_MARKER.format(id=self.doc.campaign.id))

    def installed(self) -> dict[str, InstalledRepo]:
        if self._installed is None:
            self._installed = {r.full_name.lower(): r for r in installation_repositories(
                self.client)}
        return self._installed

    def resolve(self, target: str) -> str | None:
        """None alike for a repository that does not exist, the App does not reach, or the
        viewer or the control issue's readers may not see: the answer reveals none of them."""
        found = self.installed().get(target.strip().lower())
        return found.full_name if found is not None and self.audience().may_see(found) else None

    def facts(self, name: str) -> RepoFacts:
        found = self.installed().get(name.lower())
        if found is None:
            return RepoFacts(name=name, installed=False)
        return RepoFacts(name=found.full_name, topics=found.topics, language=found.language,
                         archived=found.archived, fork=found.fork)

    def preview(self, name: str) -> Preview:
        found = self.installed()[name.lower()]
        owner, repo = name.split("/", 1)
        try:
            config = load_config(self.client.file(owner, repo, CONFIG_PATH, found.default_branch))
            mirror = self.ctx.mirror(self.client, name, found.clone_url, found.default_branch)
            sha = mirror.branch_head(found.default_branch)
            if sha is None:
                raise LeftOut("the default branch has no commits")
            scope = preview_scope(mirror, sha, self.task(), config)
        except InvalidConfigError as exc:
            raise LeftOut(f"its .github/stepwise.yml is invalid: {exc.message}") from None
        except StepwiseError as exc:
            raise LeftOut(exc.message) from None
        return preview_of(mirror, sha, self.task(), scope.files, scope.targets,
                          config.validate_commands)

    def may_start(self, repo: str, approvers: list[str]) -> tuple[str, dict[str, int]]:
        """'' when the person steering the campaign may start a job in `repo`, else why not in
        words; and the repository's approvers' account ids, as every job records them."""
        approver_ids = resolve_approvers(self.client, approvers)
        decision = may_steer(self.client, repo, self.steerer(), approvers=approvers,
                             action="start a campaign job", approver_ids=approver_ids)
        return ("" if decision.allowed else decision.reason), approver_ids

    def start(self, entry: RepoEntry) -> JobView:
        owner, name = entry.name.split("/", 1)
        try:
            info = self.client.repo(owner, name)
            config = load_config(self.client.file(owner, name, CONFIG_PATH, info.default_branch))
            refused, approver_ids = self.may_start(entry.name, list(config.approvers))
            if refused:  # checked before anything is created there
                return JobView(state=RepoState.NO_ACCESS, reason=NO_ACCESS.format(
                    who=self.doc.approved_by or "nobody", why=refused, repo=entry.name))
            number = create_issue_once(
                self.client, owner, name, title=self.doc.title, body=self.issue_body(),
                marker=REPO_MARKER.format(id=self.doc.campaign.id),
                creator=f"{self.ctx.settings.app_slug}[bot]")
            entry.job = f"{entry.name}#{number}"
            if self.ctx.store.find(entry.name, number) is None:
                forge = self.ctx.forge(self.client, entry.name, squash_only=info.squash_only)
                mirror = self.ctx.mirror(self.client, entry.name, info.clone_url,
                                         info.default_branch)
                sha = mirror.branch_head(info.default_branch)
                if sha is None:
                    return JobView(state=RepoState.FAILED, reason="the default branch is empty")
                job = create_job(self.task(), number,
                                 self.ctx.engine_services(mirror, forge, repo=entry.name),
                                 repo_name=entry.name,
                                 base=Base(branch=info.default_branch, sha=sha, config=config))
                job.server.installation_id = self.doc.installation_id
                job.server.approver_ids = approver_ids  # matched by account id, as every job
                job.part_of = f"{self.doc.control}#{self.doc.number}"  # card and note
                job.untrusted_spec = True  # written by the App: only an approval passes `plan`
                self.ctx.store.save(job)
                queue_next_step(self.ctx, job)
        except WriteBudgetWait:  # GitHub's write limit: it starts in a later pass, by itself
            return JobView(state=RepoState.APPROVED, job=entry.job, reason=PACED_ROW)
        except StepwiseError as exc:
            return JobView(state=RepoState.FAILED, job=entry.job, reason=exc.message)
        return JobView(state=RepoState.WORKING, job=entry.job,
                       link=f"{self.web}/{entry.name}/issues/{number}")

    def _job(self, entry: RepoEntry) -> Job | None:
        if "#" not in entry.job:
            return None
        repo, number = entry.job.rsplit("#", 1)
        return self.ctx.store.find(repo, int(number))

    def read(self, entry: RepoEntry, *, passes_gates: bool) -> JobView:
        """The job as it is now; its plan gate passed when `passes_gates` (the campaign runs)
        and its plan is the approved preview's, in the name of who approved the campaign."""
        job = self._job(entry)
        if job is None:
            return JobView(state=entry.state, job=entry.job, reason=entry.reason, link=entry.link)
        if job.gate is None or job.gate.kind is not Gate.PLAN or job.gate.while_planning:
            return self._view(job)
        if entry.plan_passed and not entry.replanning:  # never approved twice in a loop
            return self._view(job, "its plan gate opened again after the campaign passed "
                                   "it: " + job.gate.reason.strip().split("\n")[0][:160],
                              needs_human=True)
        if not passes_gates:
            return self._view(job)  # paused, halted or ended: nothing is approved in its name
        planned = [file for batch in job.batches for file in batch.files]
        if not entry.replanning and plan_digest(planned) != entry.preview_digest:
            return self._view(job, "its plan differs from the approved preview: approve it "
                                   "in its pull request or issue")
        entry.replanning = False
        refused = self._steer(job, Verb.APPROVE)
        if refused:
            return self._view(job, refused)
        entry.plan_passed = True
        return self._view(self._job(entry) or job)

    def act(self, entry: RepoEntry, action: JobAction) -> JobView:
        job = self._job(entry)
        if action is JobAction.SKIP:
            return self._skip(entry, job)
        if job is None:
            return self.read(entry, passes_gates=False)
        if action is JobAction.REPLAN:
            return self._replan(entry, job)
        refused = self._steer(job, _VERBS[action])
        return self._view(self._job(entry) or job, refused)

    def _replan(self, entry: RepoEntry, job: Job) -> JobView:
        """The campaign's spec changed and `resume` applied it: the tracking issue gets the new
        text and the job re-plans its files not done (its spec_changed gate passed in the name
        of whoever resumed; its next plan gate passes because of `replanning`)."""
        owner, name = job.repo.split("/", 1)
        who, body, wiring = self.steerer(), self.issue_body(), ServerWiring(self.ctx)

        def replan(current: Job) -> str:
            note_spec_change(current, title=self.doc.title, body=body, now=self.ctx.clock())
            if current.gate is not None and current.gate.kind is Gate.SPEC_CHANGED:
                return usecases.steer(wiring, current, Verb.APPROVE, by=who.mention)
            wiring.save(current)
            wiring.go_on(current)
            return ""

        steered = steer(self.ctx, self.client, job, who, replan, action="`resume`")
        if not steered.permitted:  # nothing is rewritten where the person who resumed may not
            return self._view(job, f"@{who.login} may not steer in {job.repo}: "
                                   f"{steered.refused}")
        entry.replanning = True
        if not steered.done:
            return self._view(job, f"`{Verb.APPROVE}` refused: {steered.refused}")
        update_issue_body(self.client, owner, name, job.number, body)
        return self._view(self._job(entry) or job)

    def _skip(self, entry: RepoEntry, job: Job | None) -> JobView:
        """`skip`: refused unless whoever said it may steer in that repository; its open job is
        cancelled first."""
        who = self.steerer()
        if job is None:
            decision = may_steer(self.client, entry.name, who, action="`skip`")
            return JobView(state=entry.state) if decision.allowed else JobView(
                state=entry.state, refused=f"@{who.login} may not steer in {entry.name}: "
                                           f"{decision.reason}")
        change = verb(self.ctx, Verb.CANCEL) if entry.state in OPEN_STATES else _unchanged
        steered = steer(self.ctx, self.client, job, who, change, action="`skip`")
        if not steered.permitted:
            return JobView(state=entry.state, refused=f"@{who.login} may not steer in "
                                                      f"{entry.name}: {steered.refused}")
        return self._view(steered.job or job)

    def steerer(self) -> Actor:
        """Who steered the campaign last: the repositories' jobs are steered in their name."""
        return Actor(self.doc.approved_by, self.doc.approved_by_id)

    def _steer(self, job: Job, answer: Verb) -> str:
        """Answer the job's gate in the name of the person who steered the campaign; '' when
        done, else why not (their permission in that repository comes first)."""
        who = self.steerer()
        steered = steer(self.ctx, self.client, job, who, verb(self.ctx, answer, by=who.mention),
                        action=f"`{answer}`")
        if not steered.permitted:
            return f"@{who.login} may not steer in {job.repo}: {steered.refused}"
        return "" if steered.done else f"`{answer}` refused: {steered.refused}"

    def _view(self, job: Job, reason: str = "", *, needs_human: bool = False) -> JobView:
        done = [b for b in job.batches if b.status is BatchStatus.COMPLETED]
        pull = job.server.pull
        where = f"{job.repo}#{pull.number if pull is not None else job.number}"
        issue = f"{self.web}/{job.repo}/issues/{job.number}"
        pull_link = f"{self.web}/{job.repo}/pull/{pull.number}" if pull is not None else ""
        gate = str(job.gate.kind) if job.gate is not None else ""
        state = RepoState.NEEDS_HUMAN if needs_human else job_state(job)
        answers = tuple(f"/stepwise {words}" for words in gate_answers(job)) if state in (
            RepoState.NEEDS_HUMAN, RepoState.WAITING) else ()
        return JobView(state=state, job=f"{job.repo}#{job.number}", gate=gate,
                       answers=answers, where=where if answers else "", pull=pull_link,
                       reason=reason or (job.gate.reason.splitlines()[0][:200]
                                         if job.gate is not None and state is
                                         RepoState.NEEDS_HUMAN and job.gate.reason else ""),
                       batches_done=len(done), batches_total=len(job.batches),
                       files_done=sum(len(b.files) for b in done), link=pull_link or issue,
                       baseline=baseline_word(job), shapes=view_shapes(job))
