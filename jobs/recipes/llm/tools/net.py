"""The safety net of a tool-using attempt: repeated reads, runs of failed calls, restatements.

The same read a 3rd time gets a warning; a 7th ends the attempt. 6 soft errors in a row (no
match, a bad range) or 3 hard errors (a refused path, a crash) end it too.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from jobs.recipes.llm.tools.scope import HARD

WARN_AT = 3
END_AT = 7
SOFT_LIMIT = 6
HARD_LIMIT = 3


class NetTripped(Exception):
    """The attempt is ended by the safety net; `code` and `message` say why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SafetyNet:
    def __init__(self, *, restate_every: int) -> None:
        self.restate_every = restate_every
        self.reads: Counter[str] = Counter()
        self.soft_streak = 0
        self.hard = 0

    @staticmethod
    def read_key(name: str, arguments: dict[str, Any]) -> str:
        return name + json.dumps(arguments, sort_keys=True)

    def on_read(self, name: str, arguments: dict[str, Any]) -> str:
        """A warning to append to the result ("" when none); NetTripped at the 7th."""
        key = self.read_key(name, arguments)
        self.reads[key] += 1
        count = self.reads[key]
        if count >= END_AT:
            raise NetTripped("llm_repeated_read", f"the model asked for the same {name} "
                             f"{count} times ({json.dumps(arguments, sort_keys=True)[:200]})")
        if count >= WARN_AT:
            return (f"\n\nwarning: this is the {_ordinal(count)} time you asked for exactly this "
                    f"and nothing changed since; at the {_ordinal(END_AT)} the attempt ends. "
                    "Use what you read: edit, run_checks or finish.")
        return ""

    def changed(self, path: str) -> None:
        """A file changed: reading it again is no longer a repeat."""
        for key in [k for k in self.reads if f'"{path}"' in k]:
            del self.reads[key]

    def succeeded(self) -> None:
        self.soft_streak = 0

    def failed(self, severity: str, kind: str, tool: str) -> None:
        if severity == HARD:
            self.hard += 1
            if self.hard >= HARD_LIMIT:
                raise NetTripped("llm_tool_errors", f"{self.hard} hard tool errors (the last: "
                                 f"{tool} {kind})")
            return
        self.soft_streak += 1
        if self.soft_streak >= SOFT_LIMIT:
            raise NetTripped("llm_tool_errors", f"{self.soft_streak} failed tool calls in a row "
                             f"(the last: {tool} {kind})")

    def restate_due(self, turn: int) -> bool:
        return self.restate_every > 0 and turn > 1 and (turn - 1) % self.restate_every == 0


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
