"""One tool-using attempt: the model reads, edits and checks with tools until `finish`, and
Stepwise's own guard, validation and completion check decide whether the batch is done."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from jobs.basics.redact import redact
from jobs.kernel.records import ModelCall, ToolUse
from jobs.recipes.base import BudgetSpentError, EditError, EditHooks, EditRequest, EditResult
from jobs.recipes.llm.accounting import BUDGET_HINT, Transcript, allowance, budget_reason
from jobs.recipes.llm.client import ModelError, ToolCall, ToolReply
from jobs.recipes.llm.summaries import file_summaries
from jobs.recipes.llm.tools import compaction
from jobs.recipes.llm.tools.editing import edit_file, write_file
from jobs.recipes.llm.tools.net import NetTripped, SafetyNet
from jobs.recipes.llm.tools.outline import outline
from jobs.recipes.llm.tools.prompt import first_messages, remaining_targets, restatement
from jobs.recipes.llm.tools.reading import list_files, read_file, search
from jobs.recipes.llm.tools.schemas import READ_TOOLS, TOOLS, parse_arguments
from jobs.recipes.llm.tools.scope import HARD, Scope, ToolFailure
from jobs.recipes.llm_settings import LlmSettings

NO_CALL = ("error: your answer called no tool. Work only through the tools: read with "
           "read_file/search/outline, change files with edit_file/write_file, and call finish "
           "when the batch is done.")
CUT = ("error: your answer was cut off at the output limit ({limit} tokens) before its tool "
       "call was complete. Make smaller edits: several edit_file calls instead of one large one.")
_DIFF_WORDS = [(re.compile(r"\s*(?:and )?[Ss]end the whole (?:corrected )?diff[^.]*\."), "."),
               (re.compile(r"Your diff"), "Your change")]
READERS: dict[str, Callable[..., str]] = {"list_files": list_files, "outline": outline,
                                         "search": search, "read_file": read_file}


class ToolsIgnoredError(Exception):
    """The first answer called no tool: the server took `tools` but does not do function
    calling (e.g. vLLM without `--enable-auto-tool-choice`); the editor falls back."""


class ToolClient(Protocol):
    def converse(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]],
                 max_tokens: int) -> ToolReply: ...


def for_tools(feedback: str) -> str:
    """The engine's check feedback, reworded for a conversation that edits with tools."""
    for pattern, replacement in _DIFF_WORDS:
        feedback = pattern.sub(replacement, feedback)
    return feedback.replace("..", ".")


class ToolAttempt:
    """Carries out one attempt; raises EditError when the safety net or the budget ends it."""

    def __init__(self, request: EditRequest, hooks: EditHooks, settings: LlmSettings,
                 client: ToolClient) -> None:
        self.request, self.hooks, self.settings, self.client = request, hooks, settings, client
        self.scope = Scope.of(request.worktree, hooks.readable, request.files)
        self.net = SafetyNet(restate_every=settings.restate_every)
        self.transcript = Transcript(hooks.transcript, title=hooks.title or "Stepwise transcript",
                                     secrets=settings.secrets(),
                                     ttl_days=settings.transcript_ttl_days)
        self.secrets = settings.secrets()
        self.messages: list[dict[str, Any]] = []
        self.unsent: list[dict[str, Any]] = []
        self.calls: list[ModelCall] = []
        self.spent = self.checks = self.finishes = self.compactions = 0
        self.reasons: dict[str, str] = {}
        self.summary = ""
        self.done = False
        self.outcome = ""

    def say(self, message: dict[str, Any]) -> None:
        if isinstance(message.get("content"), str):
            message["content"] = redact(message["content"], secrets=self.secrets)
        self.messages.append(message)
        self.unsent.append(message)

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> EditResult:
        self.hooks.restore()
        texts: dict[str, str | None] = {}
        for path in self.request.files:
            try:
                texts[path] = self.scope.read_text(path)
            except ToolFailure:
                texts[path] = None
        request = self.request
        for message in first_messages(goal=request.goal, spec=request.spec,
                                      standing=request.instructions, files=request.files,
                                      texts=texts, targets=request.targets,
                                      context_tokens=self.settings.context_tokens,
                                      feedback=request.feedback):
            self.say(message)
        try:
            for turn in range(1, self.settings.max_turns + 1):
                self.turn(turn)
                if self.done:
                    return self.result(turn)
        except NetTripped as tripped:
            self.hooks.restore()
            raise EditError(f"the attempt was ended by the safety net: {tripped.message}",
                            hint="read the transcript; sharpen `instructions` or lower "
                                 "`batch_size`, then retry or skip the batch",
                            code=tripped.code) from None
        report = self.hooks.check()
        if report.ok:
            return self.result(self.settings.max_turns)
        self.hooks.restore()
        raise EditError(f"the model did not finish the batch in {self.settings.max_turns} turns",
                        hint="raise STEPWISE_LLM_MAX_TURNS, sharpen `instructions` or lower "
                             "`batch_size`, then retry or skip the batch",
                        code="llm_turns_spent", evidence={"feedback": report.feedback[-2000:]})

    def turn(self, number: int) -> None:
        if self.net.restate_due(number):
            left = remaining_targets(self.request.spec, self.current_texts())
            self.say({"role": "user", "content": restatement(
                turn=number, goal=self.request.goal, spec=self.request.spec,
                files=self.request.files, left=left)})
        if compaction.size(self.messages) > self.settings.compact_at_tokens:
            compacted = compaction.compact(self.messages)
            if compacted is not self.messages:  # else nothing old enough to fold yet
                self.messages = compacted
                self.compactions += 1
                self.unsent = [compacted[2]]
                self.hooks.notify(f"turn {number}: compacted the conversation to fit the "
                                  "context")
        reply = self.ask(number)
        call = ModelCall(model=reply.model, round=number, files=list(self.request.files),
                         tokens_in=reply.tokens_in, tokens_out=reply.tokens_out,
                         latency_s=reply.latency_s, finish_reason=reply.finish_reason,
                         outcome="tools")
        self.spent += reply.tokens_in + reply.tokens_out
        self.calls.append(call)
        sent, self.unsent = self.unsent, []
        assistant: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            assistant["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.name, "arguments": c.arguments}} for c in reply.calls]
        self.messages.append(assistant)
        try:
            if not reply.calls and number == 1 and not reply.truncated:
                call.outcome = "no_tool_call"
                raise ToolsIgnoredError(reply.text)
            if not reply.calls:
                call.outcome = "no_tool_call"
                self.net.failed("soft", "truncated" if reply.truncated else "no_tool_call",
                                "(none)")
                self.say({"role": "user", "content": CUT.format(
                    limit=self.settings.max_output_tokens) if reply.truncated else NO_CALL})
            for tool_call in reply.calls:
                use = ToolUse(name=tool_call.name)
                call.tools.append(use)
                result = self.execute(tool_call, use)
                self.say({"role": "tool", "tool_call_id": tool_call.id, "content": result})
                if self.done:
                    call.outcome = self.outcome
                    break
        finally:
            if any(use.error for use in call.tools) and call.outcome == "tools":
                call.outcome = "tool_error"
            call.detail = ", ".join(u.name + (f" ({u.error})" if u.error else "")
                                    for u in call.tools)[:240]
            self.hooks.record_call(call)
            self.transcript.add(call, [_plain(m) for m in sent], _rendered(reply))
        self.hooks.notify(f"model turn {number}: {call.detail or call.outcome}")

    def ask(self, number: int) -> ToolReply:
        budget, grants = self.settings.token_budget, self.hooks.budget_grants
        used = self.hooks.tokens_used + self.spent
        if used >= allowance(budget, grants):
            raise BudgetSpentError(budget_reason(used, budget, grants),
                                   hint=BUDGET_HINT.format(budget=budget))
        try:
            return self.client.converse(self.messages, tools=TOOLS,
                                        max_tokens=self.settings.max_output_tokens)
        except ModelError as exc:
            call = ModelCall(model=self.settings.model or "", round=number,
                             files=list(self.request.files), outcome="error", detail=exc.code)
            self.hooks.record_call(call)
            self.transcript.add(call, [_plain(m) for m in self.unsent],
                                f"(no answer: {exc.message})")
            raise

    # -- the tools --------------------------------------------------------------------------
    def execute(self, tool_call: ToolCall, use: ToolUse) -> str:
        try:
            arguments = parse_arguments(tool_call.name, tool_call.arguments)
            use.path = str(arguments.get("path", ""))[:300]
            result = self.dispatch(tool_call.name, arguments, use)
        except ToolFailure as failure:
            use.error, use.severity = failure.kind, failure.severity
            self.net.failed(failure.severity, failure.kind, tool_call.name)
            return failure.text
        except (OSError, ValueError, RecursionError) as exc:
            use.error, use.severity = "crash", HARD
            self.net.failed(HARD, "crash", tool_call.name)
            return (f"error: {tool_call.name} failed ({type(exc).__name__}: {str(exc)[:200]}); "
                    "try another way")
        self.net.succeeded()
        return result

    def dispatch(self, name: str, arguments: dict[str, Any], use: ToolUse) -> str:
        if name in READ_TOOLS:
            warning = self.net.on_read(name, arguments)
            return str(READERS[name](self.scope, **arguments)) + warning
        if name in ("edit_file", "write_file"):
            use.reason = str(arguments.pop("reason", ""))[:300]
            tool = edit_file if name == "edit_file" else write_file
            path, result = tool(self.scope, **arguments)
            self.net.changed(path)
            self.reasons[path] = use.reason or self.reasons.get(path, "")
            return result
        if name == "run_checks":
            self.checks += 1
            if self.checks > self.settings.max_checks:
                raise ToolFailure("checks_spent", f"run_checks was used {self.settings.max_checks}"
                                  " times in this attempt; fix what it said, then call finish")
            report = self.hooks.check()
            passed = f" ({report.feedback})" if report.feedback else ""
            return f"checks pass: the guard, validation and targets are all fine{passed}; " \
                "call finish" if report.ok else \
                f"checks failed ({report.kind}):\n{for_tools(report.feedback)}"
        return self.finish(str(arguments.get("summary", "")))

    def finish(self, summary: str) -> str:
        self.finishes += 1
        report = self.hooks.check()
        self.summary = summary
        if report.ok or report.kind == "setup_failed" or self.finishes >= self.settings.max_rounds:
            # A failing candidate stays in the worktree: the runner checks it again and reports.
            self.done, self.outcome = True, report.kind
            return "done" if report.ok else f"not done ({report.kind})"
        return (f"error: the batch is not done ({report.kind}); Stepwise's check said:\n"
                f"{for_tools(report.feedback)}\nFix it, then call finish again.")

    # -- the result -------------------------------------------------------------------------
    def current_texts(self) -> dict[str, str]:
        texts = {}
        for path in self.request.files:
            try:
                texts[path] = self.scope.read_text(path)
            except ToolFailure:
                continue
        return texts

    def result(self, turns: int) -> EditResult:
        summaries = file_summaries(self.summary, self.request.files, self.reasons)
        tokens = sum(c.tokens_in + c.tokens_out for c in self.calls)
        tools = sum(len(c.tools) for c in self.calls)
        text = (f"{self.settings.model}: {len(summaries)} file(s) changed in {turns} turn(s), "
                f"{tools} tool call(s), {tokens:,} tokens (edit format tools)")
        if self.compactions:
            text += f"; compacted {self.compactions} time(s)"
        return EditResult(summary=text, file_summaries=summaries)


def _plain(message: dict[str, Any]) -> dict[str, str]:
    content = str(message.get("content") or "")
    return {"role": "tool result" if message["role"] == "tool" else message["role"],
            "content": content}


def _rendered(reply: ToolReply) -> str:
    parts = [reply.text] if reply.text else []
    parts += [f"→ {c.name} {c.arguments}" for c in reply.calls]
    return "\n".join(parts) or "(empty answer)"

