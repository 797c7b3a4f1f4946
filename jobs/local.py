"""Local mode: the engine on a git checkout, with the JSON file store and no GitHub or Redis.

Its composition root: `LocalSession` installs the recipes and the features (jobs/composition.py)
and gives the features to the engine explicitly; nothing is registered by importing a module."""

from __future__ import annotations

import getpass
import shlex
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from jobs.adapters.environments import EnvironmentCache, cache_limit_bytes
from jobs.adapters.local_forge import LocalForge
from jobs.adapters.sandbox import Sandbox, make_sandbox
from jobs.adapters.store import BusyError, FileStore
from jobs.adapters.workspace import Repository
from jobs.basics.errors import BadInputError, WorkspaceError
from jobs.basics.voice import local_voice
from jobs.composition import FEATURES, drafting, install, resume_notices
from jobs.engine import usecases
from jobs.engine.context import Drafting, Feature, Outcome, Services, outcome_of
from jobs.engine.discovery import plan_scope
from jobs.engine.engine import Engine
from jobs.engine.revert import revert_batch
from jobs.engine.start import create_job, start_checks
from jobs.inputs.spec import InvalidSpecError, IssueTask, parse_issue_file, split_issue_text
from jobs.inputs.spec_block import has_spec_block
from jobs.kernel.gates import Verb, note_spec_change
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.kernel.records import Event
from jobs.notes.progress import render_card
from jobs.ports import Publication
from jobs.recipes.llm_settings import LlmSettings

Sink = Callable[[Publication, str], None]
NO_BLOCK_HINT = ("\nor set STEPWISE_LLM_BASE_URL and STEPWISE_LLM_MODEL (or --llm-base-url and "
                 "--llm-model) to have the model draft one for you to review")
UNCOMMITTED = ("your checkout has {count} uncommitted change(s); they are not part of the job, "
               "which starts from commit {sha}")


def read_issue_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot read the issue file {path}: {exc.strerror}",
                            hint="pass --issue with the path of a markdown file") from exc


def local_environments(state_dir: Path) -> EnvironmentCache:
    """The checkout's environment cache, `.git/stepwise/envs/` (STEPWISE_ENV_CACHE_MB)."""
    try:
        limit = cache_limit_bytes()
    except ValueError as exc:
        raise BadInputError(str(exc), hint="set STEPWISE_ENV_CACHE_MB to a size in MB, "
                            "e.g. 4096, or unset it") from None
    return EnvironmentCache(state_dir / "envs", limit_bytes=limit)


def read_issue(path: Path) -> IssueTask:
    return parse_issue_file(read_issue_text(path))


def local_user() -> str:
    """Who answers a gate locally, as the record names them: the user running the CLI."""
    try:
        return f"{getpass.getuser()} (local)"
    except (KeyError, OSError):
        return "the local user"


class LocalWiring:
    """Local mode's side of the shared use cases: save to the file store, run the engine now
    (the caller holds the job's lock); `outcome` and `message` are what it came to."""

    def __init__(self, session: LocalSession, *, carry_on: bool = True) -> None:
        self.session, self.carry_on = session, carry_on
        self.message = ""
        self._outcome: Outcome | None = None

    @property
    def outcome(self) -> Outcome:
        if self._outcome is None:  # every use case saves or advances the job it changed
            raise RuntimeError("the use case left no outcome")
        return self._outcome

    def save(self, job: Job) -> None:
        self.session.store.save(job)
        self._outcome = outcome_of(job, voice=self.session.voice)

    def go_on(self, job: Job) -> None:
        if not self.carry_on:
            return
        engine = Engine(self.session.services, job)
        self._outcome = engine.cancel_now() if job.status is JobStatus.CANCELLED \
            else engine.run()

    def revert(self, job: Job, batch: int) -> None:
        engine = Engine(self.session.services, job)
        try:
            self.message = revert_batch(engine, batch)
        finally:
            engine.close()
        self._outcome = outcome_of(engine.job, voice=self.session.voice)


class LocalSession:
    """One CLI invocation against one repository and issue number."""

    def __init__(self, repo: Path, number: int, *, sink: Sink,
                 sandbox: Sandbox | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 llm: LlmSettings | None = None,
                 features: tuple[Feature, ...] = FEATURES) -> None:
        install(features)
        if number < 0:
            raise BadInputError("--number must be 0 or a positive issue number",
                                hint="e.g. --number 42")
        self.number = number
        try:
            repository = Repository(repo)
        except WorkspaceError as exc:  # a wrong --repo is bad input (exit 2), not a failure
            raise BadInputError(exc.message, hint=exc.hint, code=exc.code) from None
        self.repository = repository
        self.store = FileStore(repository.state_dir)
        # Gate prompts print commands that work as printed, from any directory.
        self.suffix = f" --repo {shlex.quote(str(repository.root))}" + (
            f" --number {number}" if number else "")
        self.voice = local_voice(self.suffix)
        self.services = Services(
            repository=repository, store=self.store,
            sandbox=sandbox or make_sandbox(require_isolation=False),
            forge=LocalForge(sink), clock=clock, voice=self.voice, llm=llm,
            environments=local_environments(repository.state_dir),
            features=features,
        )

    def load(self) -> Job:
        job = self.store.load(self.number)
        if job is None:
            others = self.store.numbers()
            listed = ", ".join(f"#{n}" for n in others[:10])
            raise BadInputError(
                f"there is no job for issue #{self.number} in this repository"
                + (f"; jobs here: {listed}" if others else ""),
                hint=(f"pass --number {others[0]} (all jobs: `stepwise jobs --repo "
                      f"{shlex.quote(str(self.services.repository.root))}`)") if others
                else "start one with `stepwise run --issue FILE.md`",
                code="no_job")
        return job

    def run(self, issue: IssueTask, *, yes: bool, issue_file: Path | None = None,
            part_of: str = "") -> Outcome:
        """Start or resume the job of `issue`; `part_of`: the campaign a new job belongs to."""
        with self.store.lock(self.number):
            job = self.store.load(self.number)
            started_from = str(issue_file.resolve()) if issue_file is not None else None
            if job is not None:
                self._refuse_other_issue(job, started_from)
            if job is None or not job.is_terminal:
                self.commit_as_user(job)  # no identity: refused before anything is made
            if job is None:
                job = create_job(issue, self.number, self.services)
                self.repository.signoff = job.config.signoff
                job.issue_file, job.part_of = started_from, part_of
                job = self.store.save(job)
                self._mention_uncommitted(job)
            elif job.is_terminal:
                return self._ended(job, started_from)
            elif issue.spec.digest() != job.spec_digest:
                plan_scope(self.services.repository, job.head_sha, issue.spec, job.config)
                job = self._spec_changed(job, issue)
            start_checks(self.services, job.spec)  # an llm job without an endpoint: exit 2
            engine = Engine(self.services, job, auto_approve=yes)
            for notice in resume_notices(engine):  # said before a gate is shown (base moved)
                self.services.forge.publish(job, Publication.NOTICE, notice)
            return engine.run()

    def run_file(self, path: Path, *, yes: bool, part_of: str = "") -> Outcome:
        """`stepwise run --issue FILE`: the file's spec, or (recipe llm enabled) a drafted one."""
        text = read_issue_text(path)
        drafter = drafting(self.services.features)
        if has_spec_block(text) or drafter is None or not drafter.local(self.services):
            try:
                return self.run(parse_issue_file(text), yes=yes, issue_file=path,
                                part_of=part_of)
            except InvalidSpecError as exc:
                if has_spec_block(text) or exc.field is not None:
                    raise
                raise InvalidSpecError(exc.message, hint=exc.hint + NO_BLOCK_HINT) from None
        title, body = split_issue_text(text)
        if not title:
            parse_issue_file(text)  # raises the error naming the missing `# Title` line
        return self.run_draft(drafter, title, body, yes=yes)

    def run_draft(self, drafter: Drafting, title: str, body: str, *, yes: bool) -> Outcome:
        """An issue without a ```stepwise block: the model drafts one, the job stops at `plan`."""
        with self.store.lock(self.number):
            job = self.store.load(self.number)
            if job is None or not job.is_terminal:
                self.commit_as_user(job)
            if job is None:
                job, comment = drafter.draft(self.services, title, body, self.number)
                job = self.store.save(job)
                self.services.forge.publish(job, Publication.PLAN, comment)
            elif job.is_terminal:
                return outcome_of(job, voice=self.voice)
            start_checks(self.services, job.spec)
            # A drafted spec is shown to a person first: --yes applies only once it is approved.
            return Engine(self.services, job,
                          auto_approve=yes and job.approved_digest is not None).run()

    def commit_as_user(self, job: Job | None) -> None:
        """Local commits are the person's, author and committer, as `git commit` makes them (a
        DCO or CLA check reads them), with their Signed-off-by when the config's `signoff` asks;
        git without an identity is refused before anything is made (exit 2, naming the fix)."""
        self.repository.commit_as_its_user(signoff=job is not None and job.config.signoff)

    def free_number(self) -> int:
        return max([0, *self.store.numbers()]) + 1

    def run_command(self, job: Job, issue_file: str | None = None, number: int | None = None
                    ) -> str:
        """The `stepwise run` command line for `job` (or for a new job numbered `number`)."""
        root = shlex.quote(str(self.services.repository.root))
        issue = shlex.quote(issue_file or job.issue_file or "FILE.md")
        chosen = self.number if number is None else number
        return f"stepwise run --repo {root} --issue {issue}" + \
            (f" --number {chosen}" if chosen else "")

    def _refuse_other_issue(self, job: Job, started_from: str | None) -> None:
        """One number, one issue: another issue file would silently replace the job."""
        if started_from is None or job.issue_file is None or started_from == job.issue_file:
            return
        raise BadInputError(
            f"job #{job.number} was started from {job.issue_file}, not {started_from}; "
            "an issue number holds one job",
            hint="start a new job with its own number: "
                 f"`{self.run_command(job, started_from, self.free_number())}`; "
                 f"to edit this job's spec, edit {job.issue_file} and run it again",
            code="other_issue")

    def _ended(self, job: Job, started_from: str | None) -> Outcome:
        """`run` on a job that ended: its outcome, and for a cancelled or failed one how to
        start again."""
        outcome = outcome_of(job, voice=self.voice)
        if job.status is JobStatus.COMPLETED:
            return outcome
        again = self.run_command(job, started_from, self.free_number())
        return Outcome(outcome.status, outcome.exit_code,
                       f"{outcome.message}; job #{job.number} has ended and is not run again. "
                       f"To start again, give the new job its own number: `{again}`")

    def _mention_uncommitted(self, job: Job) -> None:
        """The job starts from a commit: say so when the checkout has changes not in it."""
        changed = self.services.repository.git("status", "--porcelain",
                                                "--untracked-files=no").strip()
        if changed:
            self.services.forge.publish(job, Publication.NOTICE, UNCOMMITTED.format(
                sha=job.base_sha[:7], count=len(changed.splitlines())))

    def _spec_changed(self, job: Job, issue: IssueTask) -> Job:
        note_spec_change(job, title=issue.title, body=issue.body, now=self.services.clock())
        return self.store.save(job)

    def verb(self, verb: Verb, *, reason: str = "",
             files: Sequence[str] = ()) -> tuple[str, Outcome]:
        """Apply a gate verb; `approve`, `retry` and `skip` carry on until the next gate."""
        if verb is Verb.CANCEL and self.store.is_locked(self.number):
            # The process running the job stops at its next safe point and writes the ending.
            wiring = LocalWiring(self, carry_on=False)
            message = usecases.steer(wiring, self.load(), verb)
            return message, wiring.outcome
        with self.store.lock(self.number):
            job = self.load()
            self.commit_as_user(job)
            if verb is not Verb.CANCEL:
                start_checks(self.services, job.spec)
            if verb in (Verb.APPROVE, Verb.RETRY) and job.status in RESUMABLE:
                # Nobody else holds the lock: the job's process is gone. Resume it.
                return "resuming the interrupted job", Engine(self.services, job).run()
            wiring = LocalWiring(self)
            message = usecases.steer(wiring, job, verb, reason=reason, files=files,
                                     by=local_user())
            return message, wiring.outcome

    def revert(self, batch: int) -> tuple[str, Outcome]:
        with self.store.lock(self.number):
            wiring = LocalWiring(self)
            job = self.load()
            self.commit_as_user(job)
            usecases.revert(wiring, job, batch)
            return wiring.message, wiring.outcome

    def instruct(self, text: str) -> str:
        with self.store.lock(self.number):
            return usecases.instruct(LocalWiring(self, carry_on=False), self.load(), text)

    def status(self) -> tuple[str, Outcome]:
        """The card, and the job's exit code (0 while it is still working; 4 when the process
        that ran it is gone)."""
        job = self.mark_if_dead(self.load())
        report = usecases.status(job, resume_command=self.run_command(job), voice=self.voice)
        return render_card(job, voice=self.voice), Outcome(job.status, report.exit_code,
                                                             report.message)

    def mark_if_dead(self, job: Job) -> Job:
        """A job recorded as working whose process is gone (nobody holds its lock) is
        `interrupted`: record that, so every reader tells it from a running one."""
        if job.status not in LIVE_STATUSES:
            return job
        try:
            with self.store.lock(self.number):
                job = self.load()
                if job.status in LIVE_STATUSES:
                    job.set_status(JobStatus.INTERRUPTED)
                    job.events.append(Event(at=self.services.clock(), kind="interrupted",
                                            message="the process running the job is gone"))
                    job = self.store.save(job)
        except BusyError:
            pass  # a live process holds it: it really is working
        return job


# Statuses in which a process must be advancing the job.
LIVE_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.PLANNING, JobStatus.RUNNING})
# What `approve` and `retry` resume when no process holds the job (killed, or Ctrl-C).
RESUMABLE = LIVE_STATUSES | {JobStatus.INTERRUPTED}


def local_jobs(repo: Path) -> list[Job]:
    """Every job recorded in the checkout at `repo`, by number (dead ones marked interrupted)."""
    found: list[Job] = []
    store = LocalSession(repo, 0, sink=lambda _kind, _text: None).store
    for number in store.numbers():
        job = store.load(number)
        if job is not None:
            found.append(LocalSession(repo, number, sink=lambda _k, _t: None).mark_if_dead(job))
    return found
