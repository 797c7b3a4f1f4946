"""What a sandboxed command may do (`SandboxPolicy`) and how it ended (`CommandResult`), and
the refusal of a program the policy does not allow: the data the sandbox port takes and gives
(jobs/ports.py), pure; the sandboxes themselves are jobs/adapters/sandbox.py."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from jobs.basics.errors import RetryClass, StepwiseError
from jobs.inputs.programs import program_name


class EnvironmentLayer(Protocol):
    """A built environment as a command sees it: entries laid read-only over the repository
    (jobs/adapters/environments.py's `Environment`)."""

    @property
    def key(self) -> str: ...

    @property
    def entries(self) -> tuple[str, ...]: ...

    @property
    def tree(self) -> Path: ...

    @property
    def caches(self) -> Path: ...  # the writable tool caches kept with it

    def program_dirs(self) -> list[str]: ...


@dataclass(frozen=True)
class SandboxPolicy:
    """What a command may do: which programs, network or not, how long, extra environment.

    `network` means Stepwise's egress proxy, admitting `network_allow` hosts at public addresses
    (never `network_deny_hosts`); `environment` is laid read-only over the repository."""

    allow_commands: tuple[str, ...]
    network: bool = False
    network_allow: tuple[str, ...] = ()
    network_deny_hosts: tuple[str, ...] = ()
    environment: EnvironmentLayer | None = None
    timeout: float = 600.0
    env: Mapping[str, str] = field(default_factory=dict)
    hidden_paths: tuple[Path, ...] = ()
    # The repository's own places beyond the worktree (its checkout): links there are its
    # content, never followed to show the sandbox more (jobs/adapters/sandbox_reach.py).
    repository_paths: tuple[Path, ...] = ()
    # Asked about twice a second while a command runs; True ends it with its whole group.
    should_stop: Callable[[], bool] | None = field(default=None, compare=False)
    # The command's writes are the edit (a codemod): they go into the worktree itself. Otherwise
    # they are kept apart where the sandbox can (an overlay dropped at the next restore,
    # jobs/adapters/scratch.py), and the worktree holds only what Stepwise wrote.
    writes_through: bool = False


@dataclass(frozen=True)
class CommandResult:
    """How one command ended, with the tail of its merged stdout+stderr."""

    argv: tuple[str, ...]
    exit_code: int
    duration_s: float
    output_tail: str
    output_lines: int
    timed_out: bool
    isolated: bool
    cancelled: bool = False  # ended because `should_stop` said so
    egress: tuple[str, ...] = ()  # each tunnel asked of the egress proxy, and its answer
    # The output as far as it was kept (head and tail, sandbox_process.py), unredacted: only
    # for a failed attempt's log (jobs/engine/attempt_outcome.py), never recorded as is.
    output_log: str = field(default="", repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled

    def summary(self) -> str:
        took = f"after {self.duration_s:.1f} s"
        ended = f"exited {self.exit_code} {took}"
        if self.timed_out:
            ended = f"timed out {took} and was killed"
        shown = min(self.output_lines, len(self.output_tail.splitlines()))
        noun = "line" if self.output_lines == 1 else "lines"
        output = f"{self.output_lines:,} {noun} of output, last {shown} shown"
        if not self.output_lines:
            output = "no output"
        return f"`{shlex.join(self.argv)}` {ended} ({output})"

    def evidence(self) -> dict[str, object]:
        fields = {k: v for k, v in asdict(self).items() if k != "output_log"}
        return {**fields, "argv": list(self.argv), "duration_s": round(self.duration_s, 3),
                "egress": list(self.egress)}


class CommandRefusedError(StepwiseError):
    """A command whose program is not allowed (or is blocklisted) was asked to run."""

    code = "command_refused"
    retry_class = RetryClass.NEEDS_HUMAN

    def __init__(self, argv: Sequence[str], reason: str) -> None:
        name = program_name(argv[0]) if argv else ""
        super().__init__(
            f"refused to run `{name}`: {reason}",
            hint="edit allow_commands in .github/stepwise.yml (blocklisted programs never run)",
            evidence={"argv": list(argv), "reason": reason},
        )
