"""What the `stepwise` commands print: text verbatim (no rich markup), Markdown with names kept,
the engine's publications as they happen, the outcome's colour and exit code, and errors
turned into a message naming the fix and the contract's exit code."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from bot.observability.logs import setup_logging
from jobs.adapters.store import BusyError
from jobs.basics.errors import BadInputError, StepwiseError
from jobs.basics.markdown_safe import CELL_BREAK
from jobs.basics.voice import LOCAL
from jobs.engine.engine import Outcome
from jobs.ports import Publication

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)
# Lines that may hold a command are printed with soft_wrap=True: never wrapped by Stepwise (the
# terminal folds a long line only on screen), so a command copied from an 80-column terminal
# keeps its `--repo PATH`; Markdown is laid out as wide as its longest line (print_markdown),
# so neither a paragraph nor a table cell is wrapped or cut; and every command (a code span
# `stepwise …`) is put on a line of its own (commands_apart), so a triple-click copies it whole.
COMMAND_PREFIX = "stepwise "
WIDE = 4096  # the width Markdown is laid out at: wider than any line Stepwise writes

_CELL_EDGE = re.compile(r"(?<!\\)\|")  # a table cell's edge (an escaped `\|` is text)
# A line break in a cell, outside its code spans (an even number of backticks follows it).
_CELL_LINE = re.compile(re.escape(CELL_BREAK) + r"(?=(?:[^`]*`[^`]*`)*[^`]*$)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")  # a Markdown backslash escape
_BARE_UNDERSCORE = re.compile(r"(?<!\\)_")  # not escaped already
_TICK = "\x00"  # an escaped backtick while the line is split at code spans

EXIT_BAD_INPUT = 2
EXIT_BUSY = 6  # another process is advancing the job (DESIGN's codes are 0-5)


def commands_apart(line: str) -> list[str]:
    """`line` in pieces, each command code span (`stepwise …`) a piece of its own between the
    text before and after it (glue of punctuation alone, such as ", ", is dropped)."""
    parts = line.split("`")
    if len(parts) % 2 == 0 or not any(p.startswith(COMMAND_PREFIX) for p in parts[1::2]):
        return [line]
    pieces: list[str] = []
    current = ""
    for index, part in enumerate(parts):
        if index % 2 and part.startswith(COMMAND_PREFIX):
            if current.strip(" ,;.:"):
                pieces.append(current.rstrip() if not pieces else current.strip())
            pieces.append(f"`{part}`")
            current = ""
        else:
            current += f"`{part}`" if index % 2 else part
    if current.strip(" ,;.:"):
        pieces.append(current.strip())
    return pieces


def plain(text: str, style: str = "") -> Text:
    """Text printed exactly as written: nothing is read as rich markup, and a `code span`
    shows without its backticks (styled instead); fence lines of a code block are dropped; a
    command stands on a line of its own, indented."""
    out, fenced, first = Text(style=style), False, True
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        # Markdown escapes (jobs/basics/markdown_safe.py writes them for GitHub) are not shown.
        pieces = [raw] if fenced else commands_apart(raw.replace("\\`", _TICK))
        for piece in pieces:
            if not first:
                out.append("\n")
            first = False
            if fenced:  # command output: verbatim, backticks and all
                out.append(piece)
                continue
            if piece.startswith(f"`{COMMAND_PREFIX}"):
                piece = "  " + piece
            for index, part in enumerate(piece.split("`")):
                shown = part if index % 2 else _ESCAPED.sub(r"\1", part)
                out.append(shown.replace(_TICK, "`"), style="bold" if index % 2 else "")
    return out


def cell_rows(row: str) -> list[str]:
    """A table row whose cells hold line breaks (CELL_BREAK), which a terminal's table cannot
    show, as one row per line, the other cells empty below the first: each command in a cell
    stands whole on a row of its own."""
    if CELL_BREAK not in row or not row.lstrip().startswith("|"):
        return [row]
    cells = [_CELL_LINE.split(cell) for cell in _CELL_EDGE.split(row.strip())[1:-1]]
    depth = max(len(lines) for lines in cells)
    return ["|" + "|".join(lines[n] if n < len(lines) else " " for lines in cells) + "|"
            for n in range(depth)]


def verbatim(text: str) -> Markdown:
    """Markdown in which names print verbatim: `__init__.py` outside a code span is not bold."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            parts = line.split("`")
            line = "`".join(part if index % 2 else _BARE_UNDERSCORE.sub(r"\\_", part)
                            for index, part in enumerate(parts))
            if not line.lstrip().startswith("|"):  # a table cell keeps its commands
                line = "  \n".join(commands_apart(line))  # hard breaks around each command
            else:
                line = "\n".join(cell_rows(line))
        lines.append(line)
    # "default": paragraphs are not padded to the layout's width (print_markdown strips each
    # line's end anyway; padding 4,096 columns made a card's print take ~60 ms).
    return Markdown("\n".join(lines), justify="default")


def print_markdown(text: str) -> None:
    """Markdown laid out as wide as its longest line, each line printed with its trailing
    padding removed and soft_wrap: no paragraph, command or table cell is wrapped or cut."""
    wide = Console(width=WIDE, highlight=False, force_terminal=console.is_terminal,
                   no_color=console.no_color,
                   color_system="auto" if console.color_system else None)
    with wide.capture() as captured:
        wide.print(verbatim(text))
    for line in captured.get().splitlines():
        shown = Text.from_ansi(line)
        shown.rstrip()
        console.print(shown, soft_wrap=True)


def show(kind: Publication, text: str) -> None:
    if kind is Publication.GATE:
        return  # the command ends at the gate and prints its prompt, with the exact commands
    if kind is Publication.NOTICE:
        console.print(Text("→ ", style="cyan") + plain(text), soft_wrap=True)
        return
    if kind is Publication.PROGRESS:
        status_line = next((line for line in text.splitlines() if line.startswith("Status:")), "")
        console.print(Text("  ") + plain(status_line, style="dim"))
        return
    print_markdown(text)
    console.print()


def finish(outcome: Outcome, message: str | None = None) -> None:
    if message:
        console.print(plain(message, style="bold"), soft_wrap=True)
    waiting = outcome.exit_code in (3, 4)
    colour = "green" if outcome.exit_code == 0 else "yellow" if waiting else "red"
    console.print(plain(outcome.message, style=colour), soft_wrap=True)
    raise typer.Exit(outcome.exit_code)


def guarded(action: Callable[[], None]) -> None:
    """Turn engine errors into a message naming the fix and the contract's exit code (errors
    print verbatim, backticks included, on stderr; a busy job exits EXIT_BUSY)."""
    setup_logging(level=logging.WARNING)  # every command logs through the redaction filter
    try:
        action()
    except BadInputError as exc:
        errors.print(Text("error: ", style="red") + Text(LOCAL.speak(exc.message)), soft_wrap=True)
        if exc.hint:
            errors.print(Text("fix: ", style="dim") + Text(LOCAL.speak(exc.hint)), soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except BusyError as exc:
        errors.print(Text("busy: ", style="yellow") + Text(LOCAL.speak(exc.message)), soft_wrap=True)
        errors.print(Text("hint: ", style="dim") + Text(LOCAL.speak(exc.hint)), soft_wrap=True)
        raise typer.Exit(EXIT_BUSY) from None
    except StepwiseError as exc:
        errors.print(Text("error ", style="red") + Text(f"`{exc.code}` ({exc.retry_class}): "
                                                        f"{LOCAL.speak(exc.message)}"),
                     soft_wrap=True)
        if exc.hint:
            errors.print(Text("hint: ", style="dim") + Text(LOCAL.speak(exc.hint)), soft_wrap=True)
        raise typer.Exit(1) from None
