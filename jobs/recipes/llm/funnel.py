"""The residue funnel (`recipe: command` with `fallback: llm`): the codemod edits the batch
first; the files where `find` still matches, or whose validation fails, go to the model with
the codemod's findings; each file's summary says which engine changed it."""

from __future__ import annotations

import dataclasses
import re

from jobs.adapters.safe_paths import read_regular, write_regular
from jobs.recipes.base import CandidateReport, Editor, EditRequest, EditResult
from jobs.recipes.llm.editor import LlmEditor
from jobs.recipes.llm.feedback import TAIL_LINES
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings

BY_CODEMOD = "changed by the codemod (`run`)"
LEFT_AS_IS = ("setup_failed", "gate")  # the runner reports these as for any codemod


class FunnelEditor:
    """The codemod, then the model on what it left; the codemod's edits stay as the model's
    starting point (the model's `restore` puts them back, not the job's head)."""

    name = "command"

    def __init__(self, codemod: Editor, llm: LlmSettings | None) -> None:
        self.codemod = codemod
        self.llm = llm
        self._model: LlmEditor | None = None

    @property
    def model(self) -> LlmEditor:
        if self._model is None:
            self._model = LlmEditor((self.llm or load_llm_settings()).require())
        return self._model

    def apply(self, request: EditRequest) -> EditResult:
        worktree = request.worktree
        before = {path: read_regular(worktree, path) for path in request.files}
        done = self.codemod.apply(request)
        after = {path: read_regular(worktree, path) for path in request.files}
        by_codemod = [path for path in request.files if after[path] != before[path]]
        hooks = request.hooks
        codemod_only = EditResult(summary=done.summary, commands=done.commands,
                                  file_summaries={path: BY_CODEMOD for path in by_codemod})
        if hooks is None:
            return codemod_only
        report = hooks.check()
        if report.ok or report.kind in LEFT_AS_IS:
            return dataclasses.replace(codemod_only, summary=done.summary + "; nothing left "
                                       "for the model")
        residue = self.residue(request, report, after)
        if not residue:
            return codemod_only

        def restore() -> None:
            hooks.restore()
            for path in by_codemod:
                write_regular(worktree, path, after[path])

        restore()
        handed = dataclasses.replace(
            request, files=tuple(residue), feedback=findings(done, report, by_codemod),
            targets=tuple(t for t in request.targets if t.path in residue),
            hooks=dataclasses.replace(hooks, restore=restore))
        edited = self.model.apply(handed)
        final = {path: read_regular(worktree, path) for path in request.files}
        summaries: dict[str, str] = {}
        for path in request.files:
            by_model = final[path] != after[path]
            said = edited.file_summaries.get(path, "changed by the model")
            if by_model and path in by_codemod:
                summaries[path] = f"the codemod (`run`), then the model: {said}"
            elif by_model:
                summaries[path] = f"the model: {said}"
            elif path in by_codemod and final[path] == after[path]:
                summaries[path] = BY_CODEMOD
        return EditResult(summary=f"{done.summary}; then the model on {len(residue)} file(s) "
                                  f"it left: {edited.summary}",
                          file_summaries=summaries, commands=done.commands + edited.commands)

    @staticmethod
    def residue(request: EditRequest, report: CandidateReport,
                texts: dict[str, bytes]) -> list[str]:
        """The batch's files the model gets: `find` matches left, else the files a failing
        check names (all of the batch when it names none)."""
        patterns = [re.compile(p) for p in request.spec.find]
        matching = [path for path, data in texts.items()
                    if any(p.search(data.decode("utf-8", errors="replace")) for p in patterns)]
        if report.kind == "targets_remain" or (matching and report.kind != "validation_failed"):
            return matching
        named = [path for path in request.files if path in report.feedback]
        return sorted({*matching, *named}) or list(request.files)


def findings(done: EditResult, report: CandidateReport, by_codemod: list[str]) -> str:
    """What the codemod did and left, for the model's first message."""
    parts = [f"A codemod ran first: {done.summary}. It changed "
             + (", ".join(by_codemod) if by_codemod else "no file of this batch") + "; its "
             "edits are in the files now. Finish what it left; keep its changes."]
    for command in done.commands:
        tail = command.output_tail.rstrip().splitlines()[-TAIL_LINES:]
        if tail:
            parts.append(f"Its output (`{command.display}`, exit {command.exit_code}):\n```\n"
                         + "\n".join(tail) + "\n```")
    parts.append(f"Stepwise's check after the codemod ({report.kind}):\n{report.feedback}")
    return "\n\n".join(parts)
