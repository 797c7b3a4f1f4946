"""Drafting a ```stepwise spec from an issue's free text and a listing of the repository.

The draft is checked like a spec a person wrote (and must select some files); a maintainer
reviews it at the plan gate before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from jobs.basics.errors import BadInputError, StepwiseError
from jobs.decisions.plan import select_scope
from jobs.inputs.spec import IssueTask, Recipe, parse_issue
from jobs.kernel.records import ModelCall
from jobs.recipes.llm.accounting import call_record
from jobs.recipes.llm.client import ChatClient, Message

MAX_LISTED = 400
DRAFT_ROUNDS = 3
_YAML = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*(?:stepwise|ya?ml)?\s*\n(.*?)^ {0,3}\1\s*$",
                   re.IGNORECASE | re.MULTILINE | re.DOTALL)

SYSTEM = """You draft task specs for Stepwise, which makes one maintenance change across a
repository in small validated batches, each edited by a language model. From the issue and the
repository listing, write the spec as YAML in one ```stepwise block:

```stepwise
recipe: llm
paths: ["src/**/*.py"]          # repository-relative globs of the files to change
exclude: ["src/vendor/**"]      # optional
find: ['\\bprint\\(']           # optional regexes marking the lines to change
instructions: |
  What to change in each file, precisely.
not_doing: ["what is out of scope"]
```

Rules: recipe is always `llm`; `paths` must match files of the listing; never include tests,
CI configuration, dependency manifests or secrets; with `find`, the job is done when no match
is left, so use patterns that the change removes (else add `done_when: checks_pass`). Answer
with the block only."""

DRAFT_NOTICE = ("Stepwise drafted this spec from the issue text. Nothing runs until a maintainer "
                "approves it{how}; to change it, put a corrected ```stepwise block in the issue.")


@dataclass
class Draft:
    spec_text: str  # the YAML, as the model wrote it
    task: IssueTask  # the issue with the drafted block appended, parsed and checked
    calls: list[ModelCall] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)


def listing_text(files: Sequence[str]) -> str:
    shown = list(files[:MAX_LISTED])
    more = len(files) - len(shown)
    tail = [f"… and {more} more files, not listed"] if more > 0 else []
    return "\n".join([*shown, *tail]) or "(the repository has no files)"


def with_block(body: str, spec_text: str) -> str:
    return f"{body.rstrip()}\n\n```stepwise\n{spec_text.rstrip()}\n```\n"


def check_draft(title: str, body: str, spec_text: str, files: Sequence[str]) -> IssueTask:
    """The issue with the drafted spec, or StepwiseError saying what is wrong with it."""
    task = parse_issue(title, with_block(body, spec_text))
    if task.spec.recipe is not Recipe.LLM:
        raise StepwiseError("recipe must be `llm`", hint="write `recipe: llm`")
    if not select_scope(list(files), paths=task.spec.paths, exclude=task.spec.exclude, never=[]):
        raise StepwiseError("`paths` match no file of the repository listing",
                            hint="use globs of files in the listing")
    return task


def draft_spec(*, title: str, body: str, files: Sequence[str], client: ChatClient,
               max_tokens: int = 1500) -> Draft:
    """Ask the model for a spec; a spec that does not check out is sent back with the reason."""
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"# Issue: {title}\n\n{body.strip() or '(no body)'}\n\n"
                                    f"# Repository files\n{listing_text(files)}"},
    ]
    calls: list[ModelCall] = []
    problem = "no answer"
    for number in range(1, DRAFT_ROUNDS + 1):
        reply = client.complete(messages, max_tokens=max_tokens)
        call = call_record(reply, round_number=number, files=[])
        calls.append(call)
        messages.append({"role": "assistant", "content": reply.text})
        match = _YAML.search(reply.text)
        if reply.truncated or match is None:
            problem = "the answer was cut off" if reply.truncated else "no ```stepwise block"
        else:
            try:
                task = check_draft(title, body, match[2], files)
            except StepwiseError as exc:
                problem = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
            else:
                call.outcome = "drafted"
                return Draft(match[2].strip() + "\n", task, calls, messages)
        call.outcome, call.detail = "rejected", problem[:200]
        messages.append({"role": "user", "content": f"That spec cannot be used: {problem}. "
                                                    "Answer with a corrected ```stepwise block."})
    raise BadInputError(
        f"the issue has no ```stepwise block and the model could not draft a usable one in "
        f"{DRAFT_ROUNDS} tries (last problem: {problem})",
        hint="add a ```stepwise block to the issue yourself", code="draft_failed",
        evidence={"calls": [c.model_dump(mode="json") for c in calls]},
    )


def draft_comment(draft: Draft, *, approve: str = "/stepwise approve") -> str:
    """Server mode: the comment that shows a drafted spec to the maintainers."""
    return (f"### Drafted spec\n\n```stepwise\n{draft.spec_text.rstrip()}\n```\n\n"
            + DRAFT_NOTICE.format(how=f" with `{approve}`"))
