"""Local mode's campaigns: `stepwise campaign --issue FILE.md REPO_DIR...` runs one spec over
several checkouts, each repository's job an ordinary local job; the campaign's record, the
per-repository issue file, the dashboard and each job's output live in a state folder beside
the issue file (`.stepwise-campaigns/<issue name>/`)."""

from __future__ import annotations

import functools
import json
import os
import shlex
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.basics.errors import BadInputError, StepwiseError
from jobs.basics.voice import shell_template
from jobs.engine import usecases
from jobs.engine.scope_preview import preview_scope
from jobs.engine.start import local_base
from jobs.features.campaigns.dashboard import render_dashboard
from jobs.features.campaigns.port import (
    JobView,
    LeftOut,
    Preview,
    apply_spec_change,
    baseline_word,
    carry_out,
    drive,
    gate_answers,
    job_state,
    plan_digest,
    preview_entry,
    preview_of,
    view_shapes,
)
from jobs.features.campaigns.record import (
    OPEN_STATES,
    Campaign,
    CampaignStatus,
    RepoEntry,
    RepoState,
)
from jobs.features.campaigns.selection import RepoFacts
from jobs.features.campaigns.settings import CampaignTask, parse_campaign_text
from jobs.features.campaigns.steering import (
    CampaignVerb,
    JobAction,
    apply,
    parse_command,
    quote_command,
)
from jobs.inputs.config_errors import InvalidConfigError
from jobs.inputs.spec import IssueTask
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.local import LocalSession, read_issue_text
from jobs.ports import Publication

RECORD, ISSUE, DASHBOARD, REPOS = "campaign.json", "issue.md", "dashboard.md", "repos.json"
_LANGUAGE_FILES = (("tsconfig.json", "TypeScript"), ("package.json", "JavaScript"),
                   ("pyproject.toml", "Python"), ("setup.py", "Python"), ("setup.cfg", "Python"),
                   ("go.mod", "Go"), ("Cargo.toml", "Rust"), ("pom.xml", "Java"))


@dataclass(frozen=True)
class CampaignResult:
    dashboard: str
    exit_code: int
    said: tuple[str, ...]


def default_state_dir(issue_file: Path) -> Path:
    return issue_file.resolve().parent / ".stepwise-campaigns" / issue_file.stem


def _names(repo_dirs: Sequence[Path]) -> dict[str, Path]:
    """Each checkout under its folder's name (its parent's too when two share a name)."""
    paths = [Path(d).expanduser().resolve() for d in repo_dirs]
    bases = [p.name for p in paths]
    return {(f"{p.parent.name}/{p.name}" if bases.count(p.name) > 1 else p.name): p
            for p in paths}


def parse_campaign_file(path: Path) -> CampaignTask:
    return parse_campaign_text(read_issue_text(path))


class LocalCampaignPort:
    """The campaign's port over local checkouts: previews read git, jobs are LocalSessions."""

    def __init__(self, repos: dict[str, Path], task: IssueTask, state_dir: Path,
                 clock: Callable[[], datetime], *, campaign_file: Path) -> None:
        self.repos, self.task, self.state_dir, self.clock = repos, task, state_dir, clock
        self.issue_file = state_dir / ISSUE
        self.part_of = str(campaign_file.resolve())  # each job's card and note name it

    def resolve(self, target: str) -> str:
        """`add <dir>`: the checkout joins under its folder's name."""
        path = Path(target).expanduser().resolve()
        if not path.is_dir():
            raise BadInputError(f"{target} is not a directory", hint="add a checkout by its path")
        for name, known in self.repos.items():
            if known == path:
                return name
        name = path.name if path.name not in self.repos else f"{path.parent.name}/{path.name}"
        self.repos[name] = path
        return name

    def _path(self, name: str) -> Path:
        return self.repos[name]

    def facts(self, name: str) -> RepoFacts:
        path = self._path(name)
        try:
            repo = Repository(path)
            sha = repo.resolve("HEAD")
            tracked = set(repo.tracked_modes(sha)) if sha else set()
        except StepwiseError:
            return RepoFacts(name=name, aliases=(str(path),), installed=False)
        language = next((lang for file, lang in _LANGUAGE_FILES if file in tracked), None)
        return RepoFacts(name=name, aliases=(str(path),), language=language)

    def preview(self, name: str) -> Preview:
        try:
            repo = Repository(self._path(name))
            base = local_base(repo)
            found = preview_scope(repo, base.sha, self.task, base.config)
        except InvalidConfigError as exc:
            raise LeftOut(f"its .github/stepwise.yml is invalid: {exc.message}") from None
        except StepwiseError as exc:
            raise LeftOut(exc.message) from None
        return preview_of(repo, base.sha, self.task, found.files, found.targets,
                          base.config.validate_commands)

    def _session(self, entry: RepoEntry, number: int) -> LocalSession:
        log = self.state_dir / "logs" / f"{entry.name.replace('/', '__')}.log"
        log.parent.mkdir(parents=True, exist_ok=True)

        def sink(kind: Publication, text: str) -> None:
            with log.open("a", encoding="utf-8") as out:
                out.write(f"--- {kind} {self.clock():%H:%M:%S}\n{text}\n")
        return LocalSession(self._path(entry.name), number, sink=sink, clock=self.clock)

    def start(self, entry: RepoEntry) -> JobView:
        path = self._path(entry.name)
        try:
            store = FileStore(Repository(path).state_dir)
            earlier = self._earlier_job(store)
            if earlier is not None:  # a re-run (its record lost): that job, not a duplicate
                entry.job = str(earlier)
                return self._view(entry, f"an earlier job of this change (issue #{earlier}) was "
                                         "found in the checkout and is followed instead of "
                                         "starting another")
            if (unmerged := self._unmerged_branch(path, store)) is not None:
                return JobView(state=RepoState.NEEDS_HUMAN, reason=unmerged)
            number = max([0, *store.numbers()]) + 1
            session = self._session(entry, number)
            # It stops at its own plan gate.
            session.run_file(self.issue_file, yes=False, part_of=self.part_of)
            entry.job = str(number)
            job = session.load()
            planned = [file for batch in job.batches for file in batch.files]
            if job.gate is not None and job.gate.kind == "plan":
                if plan_digest(planned) != entry.preview_digest:
                    return self._view(entry, "the plan differs from the approved preview; "
                                             "look at it and approve it in its repository")
                session.verb(Verb.APPROVE)
        except StepwiseError as exc:
            return JobView(state=RepoState.FAILED, job=entry.job, reason=exc.message)
        return self._view(entry)

    def _earlier_job(self, store: FileStore) -> int | None:
        """A job of the same change in this checkout, started by an earlier run of the campaign
        and not cancelled or failed (its branch may be unmerged): the newest one."""
        for number in sorted(store.numbers(), reverse=True):
            job = store.load(number)
            if job is not None and job.title == self.task.title and job.status not in (
                    JobStatus.CANCELLED, JobStatus.FAILED):
                return number
        return None

    def _unmerged_branch(self, path: Path, store: FileStore) -> str | None:
        """Why no job starts where an earlier job of the same change ended (cancelled or failed)
        and left its branch unmerged: another would duplicate its work. None: none did."""
        repository = Repository(path)
        head = repository.resolve("HEAD")
        for number in sorted(store.numbers(), reverse=True):
            job = store.load(number)
            if job is None or job.title != self.task.title:
                continue
            tip = repository.branch_head(job.branch)
            if tip is None or tip == job.base_sha or (head and repository.is_ancestor(tip, head)):
                continue
            # Printed for the person to paste (written out: git itself runs only through the
            # hardened runner, and no argv literal of git lives outside it).
            delete = f"git -C {shlex.quote(str(path))} branch -D {shlex.quote(job.branch)}"
            retry = steer_command(Path(self.part_of), "retry-failed")
            return (f"the checkout has `{job.branch}`, the unmerged branch of an earlier job of "
                    f"this change (#{number}, {job.status}); no second job was started: merge "
                    f"that branch, or delete it (`{delete}`), then `{retry}`")
        return None

    def read(self, entry: RepoEntry, *, passes_gates: bool) -> JobView:
        return self._view(entry)  # a local job's plan gate is passed only when it starts

    def act(self, entry: RepoEntry, action: JobAction) -> JobView:
        verbs = {JobAction.APPROVE: Verb.APPROVE, JobAction.RETRY: Verb.RETRY,
                 JobAction.CANCEL: Verb.CANCEL, JobAction.SKIP: Verb.CANCEL}
        if action is JobAction.SKIP and (not entry.job or entry.state not in OPEN_STATES):
            return self._view(entry)  # nothing started there to cancel
        if action is JobAction.RETRY and not entry.job:
            return self.start(entry)  # stopped before its job started (an unmerged branch)
        try:
            session = self._session(entry, int(entry.job))
            if action is JobAction.REPLAN:
                session.run_file(self.issue_file, yes=False)  # opens its spec_changed gate
                # The campaign's `resume` approved the new spec: pass the spec_changed gate,
                # then the plan gate of the re-plan (the files not done yet).
                for _ in range(2):
                    gate = session.load().gate
                    if gate is None or gate.kind not in ("spec_changed", "plan"):
                        break
                    session.verb(Verb.APPROVE)
            else:
                session.verb(verbs[action])
        except StepwiseError as exc:
            return self._view(entry, f"{action} refused: {exc.message}")
        return self._view(entry)

    def _view(self, entry: RepoEntry, reason: str = "") -> JobView:
        if not entry.job:
            return JobView(state=entry.state, reason=reason or entry.reason)
        session = self._session(entry, int(entry.job))
        job = session.mark_if_dead(session.load())  # read once: the state and the message
        message = usecases.status(job, resume_command=session.run_command(job),
                                  voice=session.voice).message
        done = [b for b in job.batches if b.status is BatchStatus.COMPLETED]
        gate = str(job.gate.kind) if job.gate is not None else ""
        where = f"--repo {quote_command(str(self._path(entry.name)))} --number {job.number}"
        state = job_state(job)
        # Only answers that run as printed (a `<reason>` placeholder would not).
        answers = tuple(f"stepwise {words} {where}" for words in gate_answers(job)
                        if "<" not in words) if state in (RepoState.NEEDS_HUMAN,
                                                          RepoState.WAITING) else ()
        return JobView(state=state, job=str(job.number), gate=gate, answers=answers,
                       reason=reason or (_first_line(message)
                                         if state is RepoState.NEEDS_HUMAN else ""),
                       batches_done=len(done), batches_total=len(job.batches),
                       files_done=sum(len(b.files) for b in done), link=job.branch,
                       baseline=baseline_word(job), shapes=view_shapes(job))


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _load(state_dir: Path) -> Campaign | None:
    try:
        return Campaign.model_validate_json((state_dir / RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def _save(state_dir: Path, campaign: Campaign, dashboard: str, repos: dict[str, Path]) -> None:
    """The record, the dashboard and the checkouts' paths, each written whole or not at all."""
    paths = json.dumps({name: str(path) for name, path in repos.items()})
    for name, text in ((RECORD, campaign.model_dump_json(indent=1)), (DASHBOARD, dashboard),
                       (REPOS, paths)):
        temporary = state_dir / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, state_dir / name)


def _exit_code(campaign: Campaign) -> int:
    if campaign.status is CampaignStatus.COMPLETED:
        return 0
    if campaign.status is CampaignStatus.CANCELLED:
        return 5
    if campaign.status is CampaignStatus.HALTED or campaign.entries(RepoState.NEEDS_HUMAN):
        return 4
    return 3


def steer_command(issue_file: Path, words: str) -> str:
    """The campaign command that says `words`, quoted for a POSIX shell: it runs as printed
    (a placeholder written as the CLI writes it: `skip REPO REASON`)."""
    return (f"stepwise campaign --issue {shlex.quote(str(issue_file))} "
            f"--command {shlex.quote(shell_template(words))}")


def run_campaign(issue_file: Path, repo_dirs: Sequence[Path], *, command: str | None = None,
                 yes: bool = False, state_dir: Path | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> CampaignResult:
    """Start (preview, then the plan gate), resume, or steer the campaign of `issue_file`;
    `yes` approves the campaign's plan gate (`approve all` while it is at its preview), as
    `run --yes` passes a job's."""
    parsed = parse_campaign_file(issue_file)
    folder = state_dir or default_state_dir(issue_file)
    folder.mkdir(parents=True, exist_ok=True)
    campaign = _load(folder)
    said: list[str] = []
    steered = parse_command(command) if command else None
    now = clock()
    issue_text = f"# {parsed.task.title}\n\n{parsed.task.body}"
    if campaign is None:
        if not repo_dirs:
            raise BadInputError("a new campaign needs the checkouts to run over",
                                hint="stepwise campaign --issue FILE.md REPO_DIR...")
        (folder / ISSUE).write_text(issue_text, encoding="utf-8")
        campaign = Campaign(id=uuid.uuid4().hex[:12], title=parsed.task.title,
                            spec_digest=parsed.task.spec.digest(), created_at=now, updated_at=now)
    stored = json.loads((folder / REPOS).read_text()) if (folder / REPOS).exists() else {}
    repos = {name: Path(path) for name, path in stored.items()}
    repos.update(_names(repo_dirs))
    port = LocalCampaignPort(repos, parsed.task, folder, clock, campaign_file=issue_file)
    if parsed.task.spec.digest() != campaign.spec_digest:
        (folder / ISSUE).write_text(issue_text, encoding="utf-8")
        said.append(apply_spec_change(campaign, parsed.task.spec.digest(), parsed.settings, port,
                                      now))
    for name in repos:
        if name not in campaign.repos:
            campaign.repos[name] = preview_entry(name, parsed.settings, port)
    commands = [steered] if steered is not None else []
    if yes and campaign.status is CampaignStatus.PLAN and (
            steered is None or steered.verb is not CampaignVerb.CANCEL):
        commands.append(parse_command("approve all"))
    for each in commands:
        result = apply(campaign, each, now)
        said.append(result.message)
        said += carry_out(campaign, parsed.settings, result, port, now)
    drive(campaign, parsed.settings, port, now)
    dashboard = render_dashboard(campaign, steer=functools.partial(steer_command, issue_file))
    _save(folder, campaign, dashboard, port.repos)
    return CampaignResult(dashboard, _exit_code(campaign), tuple(said))
