"""One attempt of the llm editor: bounded rounds of ask → parse → `git apply --check` → apply → check.

Every failure becomes precise feedback in the conversation for the next round. A truncated
answer is never applied; the batch is then asked for one file at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.adapters.safe_paths import read_regular
from jobs.kernel.records import ModelCall
from jobs.recipes.base import (
    BudgetSpentError,
    CandidateReport,
    EditError,
    EditHooks,
    EditRequest,
    EditResult,
)
from jobs.recipes.llm import feedback, formats
from jobs.recipes.llm.accounting import (
    BUDGET_HINT,
    Transcript,
    allowance,
    budget_reason,
    call_record,
)
from jobs.recipes.llm.answer import Answer, diff_paths, parse_problem, read_answer
from jobs.recipes.llm.apply import apply, check_applies
from jobs.recipes.llm.client import ChatClient, Message, ModelError
from jobs.recipes.llm.context import ANSWER_FORMAT, ContextTooLargeError, build_prompt
from jobs.recipes.llm.summaries import NO_SUMMARY
from jobs.recipes.llm_settings import LlmSettings

TRUNCATED = "truncated"


def headline(text: str, limit: int = 240) -> str:
    """Feedback flattened to one line, for notices and call records (the transcript has it all)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class Piece:
    """A conversation about some files of the batch (all of them, or one)."""

    files: tuple[str, ...]
    messages: list[Message]
    sent: int = 0  # messages already written to the transcript
    diff: str | None = None  # the diff accepted this round (parsed, applied)
    summaries: dict[str, str] = field(default_factory=dict)
    calls: list[ModelCall] = field(default_factory=list)


class Rounds:
    """Carries out one attempt for one batch; raises EditError when no usable diff came."""

    def __init__(self, request: EditRequest, hooks: EditHooks, settings: LlmSettings,
                 client: ChatClient, *, edit_format: str = "diff") -> None:
        self.request, self.hooks, self.settings, self.client = request, hooks, settings, client
        self.edit_format = edit_format
        self.spent = 0
        self.calls: list[ModelCall] = []
        self.split_reason = ""
        self.texts: dict[str, str | None] = {}
        for path in request.files:
            # Never through a link: what the model is sent is the batch's own regular file
            # (a link to a key or to `.git/config` stops the attempt with UnsafePathError).
            try:
                self.texts[path] = read_regular(request.worktree, path).decode("utf-8")
            except UnicodeDecodeError:
                self.texts[path] = None
        self.transcript = Transcript(hooks.transcript, title=hooks.title or "Stepwise transcript",
                                     secrets=settings.secrets(),
                                     ttl_days=settings.transcript_ttl_days)

    # -- pieces -----------------------------------------------------------------------------
    def piece(self, files: tuple[str, ...]) -> Piece:
        request = self.request
        prompt = build_prompt(
            goal=request.goal, spec=request.spec, standing=request.instructions,
            batch_files=request.files, files=files, texts=self.texts, targets=request.targets,
            context_tokens=self.settings.context_tokens, feedback=request.feedback,
            answer_format=formats.INSTRUCTIONS.get(self.edit_format, ANSWER_FORMAT),
        )
        return Piece(files, prompt.messages)

    def first_pieces(self) -> list[Piece]:
        try:
            return [self.piece(tuple(self.request.files))]
        except ContextTooLargeError as exc:
            if len(self.request.files) == 1:
                raise EditError(exc.message, hint=exc.hint, code=exc.code,
                                evidence=exc.evidence) from None
            self.split_reason = "the batch did not fit the context budget"
            self.hooks.notify(f"{self.split_reason}: asking the model one file at a time")
            return self.split(tuple(self.request.files))

    def split(self, files: tuple[str, ...]) -> list[Piece]:
        try:
            return [self.piece((path,)) for path in files]
        except ContextTooLargeError as exc:
            raise EditError(exc.message, hint=exc.hint, code=exc.code,
                            evidence=exc.evidence) from None

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> EditResult:
        pieces = self.first_pieces()
        last_problem = ""
        for number in range(1, self.settings.max_rounds + 1):
            self.hooks.restore()
            ready, index = True, 0
            while index < len(pieces):
                piece = pieces[index]
                if piece.diff is not None:  # accepted earlier; its file is untouched since
                    apply(self.request.worktree, piece.diff)
                    index += 1
                    continue
                problem = self.ask(piece, number)
                if problem == TRUNCATED and len(piece.files) > 1:
                    self.split_reason = "an answer was cut off at the output limit"
                    pieces[index:index + 1] = self.split(piece.files)
                    continue  # ask the single files in this same round
                if problem:
                    ready, last_problem = False, problem
                index += 1
            if not ready:
                continue
            report = self.hooks.check()
            self.settle(pieces, report)
            if report.ok:
                return self.result(pieces, number)
            last_problem = report.feedback
            if report.kind == "setup_failed" or number == self.settings.max_rounds:
                # The candidate stays in the worktree: the runner re-checks it and reports
                # the failure (or opens the gate) as for any editor.
                return self.result(pieces, number)
            for piece in pieces:
                piece.diff = None
                piece.messages.append({"role": "user", "content": self.reworded(report.feedback)})
        self.hooks.restore()
        first = headline(last_problem) or "no answer"
        raise EditError(
            f"the model gave no diff that applies in {self.settings.max_rounds} round(s); "
            f"last problem: {first}",
            hint="read the transcript; sharpen `instructions`, lower `batch_size`, or raise "
                 "STEPWISE_LLM_MAX_ROUNDS, then retry or skip the batch",
            code="llm_no_usable_diff", evidence={"feedback": last_problem[-2000:]},
        )

    def ask(self, piece: Piece, number: int) -> str:
        """One model call for `piece`; the diff applied, or the problem (fed back) / TRUNCATED."""
        self.ensure_budget()
        sent = piece.messages[piece.sent:]
        try:
            reply = self.client.complete(piece.messages, max_tokens=self.settings.max_output_tokens)
        except ModelError as exc:
            call = ModelCall(model=self.settings.model or "", round=number, files=list(piece.files),
                             outcome="error", detail=exc.code)
            self.hooks.record_call(call)
            self.transcript.add(call, sent, f"(no answer: {exc.message})")
            raise EditError(exc.message, hint=exc.hint, code=exc.code,
                            retry_class=exc.retry_class) from None
        call = call_record(reply, round_number=number, files=piece.files)
        self.spent += call.tokens_in + call.tokens_out
        self.calls.append(call)
        piece.calls.append(call)
        self.hooks.record_call(call)
        piece.messages.append({"role": "assistant", "content": reply.text})
        piece.sent = len(piece.messages)
        self.transcript.add(call, sent, reply.text)
        outcome, problem = self.judge(piece, reply.text, truncated=reply.truncated)
        call.outcome = outcome
        if problem == TRUNCATED:
            call.detail = "cut off at the output limit; not applied; asking one file at a time"
        elif problem:
            call.detail = headline(problem)
            piece.messages.append({"role": "user", "content": problem})
        self.transcript.write()
        self.hooks.notify(f"model round {number} ({', '.join(piece.files)}): {outcome}"
                          + (f" — {call.detail}" if call.detail else ""))
        return problem

    def reworded(self, text: str) -> str:
        """Check feedback in the words of this attempt's edit format."""
        if self.edit_format == "diff":
            return text
        return (text.replace("send the whole corrected diff against the original files",
                             "send all your edits again, against the original files")
                .replace("send the whole diff against the original files",
                         "send all your edits again, against the original files")
                .replace("Send the whole corrected diff.", "Send all your edits again.")
                .replace("Your diff", "Your edit"))

    def read(self, piece: Piece, text: str) -> tuple[Answer, str, str]:
        """The answer as a diff (search/replace blocks and whole files are converted), and the
        outcome and problem when it holds no usable edit."""
        if self.edit_format == "diff":
            return read_answer(text), "", ""
        edits = formats.read_edits(self.edit_format, text, self.request.worktree, piece.files)
        return Answer(edits.diff, edits.summaries), edits.kind, edits.problem

    def judge(self, piece: Piece, text: str, *, truncated: bool) -> tuple[str, str]:
        """(outcome, problem) for an answer; the diff is applied when there is no problem."""
        answer, kind, unusable = self.read(piece, text)
        if unusable and not truncated:
            return kind, unusable
        problem = parse_problem(answer.diff) if answer.diff is not None else None
        cut = truncated or (problem is not None and problem.cut_short and not answer.closed)
        if cut:
            if len(piece.files) > 1:
                return TRUNCATED, TRUNCATED
            return TRUNCATED, feedback.truncated(self.settings.max_output_tokens)
        if answer.diff is None:
            return "no_diff", feedback.NO_DIFF
        if problem is not None:
            return problem.kind, problem.message + "\nSend the whole corrected diff."
        refused = check_applies(self.request.worktree, answer.diff)
        if refused is not None:
            return refused.kind, refused.message
        apply(self.request.worktree, answer.diff)
        piece.diff, piece.summaries = answer.diff, answer.summaries
        return "applied", ""

    def settle(self, pieces: list[Piece], report: CandidateReport) -> None:
        """The check's verdict becomes the outcome of the calls whose diffs were checked."""
        for piece in pieces:
            if piece.calls and piece.calls[-1].outcome == "applied":
                piece.calls[-1].outcome = report.kind
                if not report.ok:
                    piece.calls[-1].detail = headline(report.feedback)
        self.transcript.write()
        self.hooks.notify(f"checked the candidate: {report.kind}"
                          + (f" — {headline(report.feedback)}" if report.feedback else ""))

    def ensure_budget(self) -> None:
        budget, grants = self.settings.token_budget, self.hooks.budget_grants
        used = self.hooks.tokens_used + self.spent
        if used >= allowance(budget, grants):
            raise BudgetSpentError(budget_reason(used, budget, grants),
                                   hint=BUDGET_HINT.format(budget=budget))

    def result(self, pieces: list[Piece], rounds: int) -> EditResult:
        summaries: dict[str, str] = {}
        for piece in pieces:
            for path in diff_paths(piece.diff or ""):
                summaries[path] = piece.summaries.get(path, NO_SUMMARY)
        tokens = sum(c.tokens_in + c.tokens_out for c in self.calls)
        text = (f"{self.settings.model}: {len(summaries)} file(s) changed in {rounds} round(s), "
                f"{len(self.calls)} call(s), {tokens:,} tokens")
        if self.edit_format != "diff":
            text += f" (edit format {self.edit_format})"
        if self.split_reason:
            text += f"; one file at a time because {self.split_reason}"
        return EditResult(summary=text, file_summaries=summaries)
