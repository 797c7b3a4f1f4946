"""How a surface writes a command: the vocabulary is a parameter of rendering (pure).

On GitHub every command is a comment, `/stepwise <verb> [argument]` (the server builds its
voice from the command registry, bot/commands/registry.py); locally it is the CLI,
`stepwise <verb> --repo PATH [--number N] [argument]`, which works exactly as printed.

A usage line's placeholder is written `<reason>` (DESIGN.md's comment commands); the CLI's
voice writes it `REASON`, as the CLI's own synopsis does (`shell_template`): pasted into a
shell, `<reason>` is a redirection, while `REASON` is a word, plainly a template, that the
command it fills refuses unedited (`is_placeholder`).

Text stored in the job record (a hint, a reason) cannot know which surface will show it, so it
names a command with `cmd("revert", "3")`, a token each renderer writes in its own voice with
`Voice.speak`. Renderers call `Voice.code` for the commands they name themselves.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

# The verbs a token may name: the comment commands and the CLI subcommands of the same meaning.
TOKEN_VERBS = ("approve", "retry", "skip", "cancel", "revert", "instruct", "status", "help",
               "reload-config", "resume", "retry-start")
# An argument holds only plain words, so a token found in untrusted text (a skip reason, an
# issue title) can only ever become a harmless code span, never markup.
_ARGUMENT = r"[\w <>.,:/-]*"
_TOKEN = re.compile(r"\{\{(" + "|".join(re.escape(v) for v in TOKEN_VERBS)
                    + rf")(?: ({_ARGUMENT}))?\}}\}}")


_PLACEHOLDER = re.compile(r"<([a-z][a-z/_-]*)>")


def shell_template(words: str) -> str:
    """A usage line's `<placeholder>`s as the CLI writes them (`skip <reason>` -> `skip
    REASON`, `approve <owner/repo>` -> `approve OWNER/REPO`): nothing a shell misreads."""
    return _PLACEHOLDER.sub(lambda match: match.group(1).upper(), words)


def is_placeholder(text: str, name: str) -> bool:
    """Whether `text` is still the placeholder `name` of a usage line, in either voice
    (`<reason>` or `REASON`): a command pasted without filling it in."""
    return text.strip() in (f"<{name}>", name.upper())


def shell_words(*words: str) -> str:
    """Words as one command line a POSIX shell takes back as exactly these words (each quoted
    with `shlex.quote` where it needs it): the one way Stepwise writes a command for pasting,
    e.g. `shell_words("stepwise", "campaign", "approve", "all")`."""
    return shlex.join(words)


def cmd(verb: str, argument: str = "") -> str:
    """A command named in stored text, written by each surface in its own voice when shown."""
    if verb not in TOKEN_VERBS:
        raise ValueError(f"{verb!r} is no command verb (known: {', '.join(TOKEN_VERBS)})")
    if not re.fullmatch(_ARGUMENT, argument):
        raise ValueError(f"{argument!r}: a command's argument here holds plain words only")
    return "{{" + verb + (f" {argument}" if argument else "") + "}}"


@dataclass(frozen=True)
class Voice:
    """The vocabulary of one surface: `prefix` starts every command, `options` (local mode:
    `--repo PATH --number N`) follow the verb, before its argument, as the CLI takes them."""

    prefix: str = "stepwise "
    options: str = ""
    on_github: bool = False
    verbs: frozenset[str] = frozenset(TOKEN_VERBS)  # the verbs this surface has

    def command(self, verb: str, argument: str = "") -> str:
        """The command as typed, e.g. `/stepwise revert 3` or `stepwise revert --repo . 3`
        (a placeholder as this surface writes it: `<batch>` on GitHub, `BATCH` in a shell)."""
        words = [f"{self.prefix}{verb}", self.options,
                 argument if self.on_github else shell_template(argument)]
        return " ".join(word for word in words if word)

    def code(self, verb: str, argument: str = "") -> str:
        """The command as a Markdown code span."""
        return f"`{self.command(verb, argument)}`"

    def typed(self, usage: str) -> str:
        """A usage line from the gate table (`skip <reason>`) as typed in this voice."""
        verb, _, argument = usage.partition(" ")
        return self.command(verb, argument)

    def usage(self, usage: str) -> str:
        """A usage line from the gate table (`skip <reason>`) as a code span."""
        return f"`{self.typed(usage)}`"

    def speak(self, text: str) -> str:
        """`text` with every `cmd(...)` token written in this voice (a verb this surface does
        not have is written as the bare verb in a code span)."""
        def say(match: re.Match[str]) -> str:
            verb, argument = match.group(1), match.group(2) or ""
            if verb not in self.verbs:
                return f"`{verb}{' ' + argument if argument else ''}`"
            return self.code(verb, argument)

        return _TOKEN.sub(say, text)


LOCAL = Voice()  # the CLI without options (tests, and texts printed in the checkout itself)


def local_voice(options: str) -> Voice:
    """The CLI's voice for one checkout and issue number (`--repo PATH --number N`)."""
    return Voice(prefix="stepwise ", options=options.strip())


def github_voice(prefix: str, verbs: frozenset[str]) -> Voice:
    """The comment commands' voice (`prefix` is `/stepwise`), for the registered `verbs`."""
    return Voice(prefix=f"{prefix.rstrip()} ", on_github=True, verbs=verbs)
