"""The `command` recipe: a codemod run as argv through the sandbox over the batch's files."""

from __future__ import annotations

from jobs.adapters.evidence import command_evidence
from jobs.adapters.safe_paths import require_regular
from jobs.domain.sandboxing import SandboxPolicy
from jobs.editors.base import CommandCancelled, EditError, EditRequest, EditResult
from jobs.ports import Sandbox

# Exit codes that mean the program never really ran (not executable, not found).
_DID_NOT_RUN = frozenset({126, 127})


class CommandEditor:
    name = "command"

    def __init__(self, *, sandbox: Sandbox, policy: SandboxPolicy) -> None:
        self.sandbox = sandbox
        self.policy = policy

    def apply(self, request: EditRequest) -> EditResult:
        for rel in request.files:  # a link handed to the codemod is refused before it runs
            require_regular(request.worktree, rel)
        argv = request.spec.run_argv(list(request.files))
        result = self.sandbox.run(argv, cwd=request.worktree, policy=request.policy or self.policy)
        if result.cancelled:
            raise CommandCancelled(result.summary())
        evidence = command_evidence(result)
        if result.timed_out or result.exit_code in _DID_NOT_RUN:
            raise EditError(
                f"the codemod {result.summary()}",
                hint="check the `run` command in the issue and that the program is installed",
                evidence={"command": evidence.model_dump(mode="json")},
            )
        # A codemod's non-zero exit (e.g. "fixed some, some remain") is evidence, not a verdict:
        # validation and the completion check decide.
        return EditResult(summary=f"ran `{evidence.display}` (exit {result.exit_code})",
                          commands=(evidence,))
