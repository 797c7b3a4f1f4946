"""The documentation site's reference parts, generated from the code at build time, never by hand.

A page of docs/ names a part with a marker line `<!-- generated: NAME -->`; the site's build hook
(scripts/mkdocs_hooks.py) puts `PARTS[NAME]()` in its place. Each part reads the code that
defines what it documents (the typer app, the pydantic models, the command registry, the gate
table, the settings class, the metric definitions, the log context), so no entry can be
missing or name something that does not exist. `undocumented()` lists what exists without a
meaning in the code (tests/test_docs_site.py fails on it).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer.main

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def _composed() -> None:
    from jobs.composition import install

    install()  # the features' gates and the recipes' keys exist once installed


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- the command line ---------------------------------------------------------------------------

# typer builds its commands with the click it vendors: they are read by their click interface.
def _commands(group: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    context = group.context_class(group, info_name=prefix)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if command is None or command.hidden:
            continue
        yield f"{prefix} {name}", command
        if hasattr(command, "list_commands"):
            yield from _commands(command, f"{prefix} {name}")


def _cli_commands() -> Iterator[tuple[str, Any]]:
    from bot.cli.main import app

    return _commands(typer.main.get_command(app), "stepwise")


def cli_reference() -> str:
    out: list[str] = []
    for path, command in _cli_commands():
        context = command.context_class(command, info_name=path)
        out += [f"### `{path}`", "", _cell(command.help or command.short_help or ""), "",
                "```", command.get_usage(context).strip(), "```", ""]
        rows = []
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            record = param.get_help_record(context)
            if record is None:
                continue
            names, help_text = record
            rows.append(f"| `{_cell(names)}` | {_cell(help_text)} |")
        if rows:
            out += ["| option or argument | meaning |", "|---|---|", *rows, ""]
    return "\n".join(out)


def _undocumented_cli() -> list[str]:
    return [f"CLI command `{path}` has no help text"
            for path, command in _cli_commands() if not (command.help or "").strip()]


# --- the task spec, the repository config, the comment commands ----------------------------------

def spec_keys() -> str:
    from jobs.inputs.key_docs import spec_table

    _composed()
    return spec_table()


def config_keys() -> str:
    from jobs.inputs.key_docs import config_table

    _composed()
    return config_table()


def comment_commands() -> str:
    from bot.commands import help_table

    return help_table()


def undocumented_keys(models: tuple[type[Any], ...] = ()) -> list[str]:
    """Spec and config keys (nested blocks' keys too) without a docstring: their reference
    entry would have no meaning. Default: the repository config and the task spec."""
    from pydantic import BaseModel

    from jobs.inputs.config import RepoConfig
    from jobs.inputs.spec import TaskSpec

    _composed()
    missing: list[str] = []

    def walk(model: type[BaseModel], where: str) -> None:
        for name, info in model.model_fields.items():
            key = f"{where}{info.alias or name}"
            if not (info.description or "").strip():
                missing.append(f"key `{key}` of {model.__name__} has no docstring")
            annotation = info.annotation
            if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
                walk(annotation, f"{key}.")

    for model in models or (RepoConfig, TaskSpec):
        walk(model, "")
    return missing


# --- gates and exit codes -----------------------------------------------------------------------

def gates() -> str:
    from jobs.kernel.model import GATES

    _composed()
    rows = ["| gate | opened when | `approve` | other answers | local exit |", "|---|---|---|---|---|"]
    for kind, rule in GATES.items():
        others = ", ".join(f"`{choice}`" for choice in rule.other_choices)
        rows.append(f"| `{kind}` | {_cell(rule.opened_when)} | `{rule.verb}`: {_cell(rule.meaning)} "
                    f"| {others} | {rule.exit_code} |")
    return "\n".join(rows)


EXIT_CODES = (
    (0, "completed"), (1, "failed (not recoverable)"),
    (2, "bad input: spec, config or arguments, with a message naming the fix"),
    (3, "waiting at a decision gate (see the gate table)"),
    (4, "needs a human to fix or look (see the gate table); also `status` of a job whose process "
        "is gone"),
    (5, "cancelled"), (6, "busy: another `stepwise` process is advancing the same job"),
    (130, "interrupted with Ctrl-C (the job resumes with `run`, `approve` or `retry`)"),
)


def exit_codes() -> str:
    from jobs.kernel.model import GATES

    _composed()
    used = {rule.exit_code for rule in GATES.values()}
    unknown = used - {code for code, _ in EXIT_CODES}
    if unknown:
        raise LookupError(f"gate exit codes without a meaning in EXIT_CODES: {sorted(unknown)}")
    return "\n".join(["| exit | meaning |", "|---|---|",
                      *(f"| {code} | {meaning} |" for code, meaning in EXIT_CODES)])


# --- server settings ----------------------------------------------------------------------------

def _field_comments(source: str, class_name: str) -> dict[str, str]:
    """Each field of a class with the comment lines just above it and the comment on its line."""
    lines = source.splitlines()
    tree = ast.parse(source)
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == class_name):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            words: list[str] = []
            index = item.lineno - 2
            while index >= 0 and lines[index].strip().startswith("#"):
                words.insert(0, lines[index].strip().lstrip("#").strip())
                index -= 1
            trailing = lines[item.lineno - 1].partition("  # ")[2]
            if trailing and not trailing.startswith("noqa"):
                words.append(trailing.strip())
            found[item.target.id] = " ".join(words)
    return found


def _settings_rows() -> list[tuple[str, str, str]]:
    from bot.settings import ENV_PREFIX, Settings

    comments = _field_comments(inspect.getsource(inspect.getmodule(Settings)), "Settings")
    rows = []
    for name, info in Settings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        shown = "(secret)" if "secret" in str(info.annotation).lower() else repr(default)
        rows.append((f"{ENV_PREFIX}{name.upper()}", shown, comments.get(name, "")))
    return rows


def settings() -> str:
    out = ["| variable | default | meaning |", "|---|---|---|"]
    out += [f"| `{name}` | `{_cell(default)}` | {_cell(meaning)} |"
            for name, default, meaning in _settings_rows()]
    return "\n".join(out)


def _undocumented_settings() -> list[str]:
    return [f"setting `{name}` has no comment in bot/settings.py"
            for name, _, meaning in _settings_rows() if not meaning]


# --- metrics ------------------------------------------------------------------------------------

def _metric_definitions() -> list[tuple[str, str, str]]:
    """(name, labels, help) of every metric the App serves: the Redis-kept `Spec`s and the
    process's own prometheus collectors of bot/observability."""
    import importlib
    import pkgutil

    import prometheus_client

    import bot.observability as package
    from bot.observability.metrics import Spec

    found: dict[str, tuple[str, str, str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Spec):
                found[value.name] = (value.name, ", ".join(value.labels), value.help)
            elif isinstance(value, prometheus_client.metrics.MetricWrapperBase):
                for metric in value.describe():
                    found.setdefault(metric.name, (metric.name, ", ".join(value._labelnames),
                                                   metric.documentation))
    for name, labels, help_text in _scrape_time_families():
        found.setdefault(name, (name, labels, help_text))
    return sorted(found.values())


def _scrape_time_families() -> Iterator[tuple[str, str, str]]:
    """The metric families built at scrape time (`GaugeMetricFamily("stepwise_...", "help",
    labels=[...])` anywhere in bot/), read from the source: they exist only inside a scrape."""
    for path in sorted((ROOT / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id.endswith("MetricFamily") and len(node.args) >= 2
                    and all(isinstance(arg, ast.Constant) for arg in node.args[:2])):
                continue
            name, help_text = (arg.value for arg in node.args[:2])  # type: ignore[attr-defined]
            labels = next((keyword.value for keyword in node.keywords if keyword.arg == "labels"),
                          None)
            words = ", ".join(element.value for element in getattr(labels, "elts", ())
                              if isinstance(element, ast.Constant))
            yield str(name), words, str(help_text)


def metrics() -> str:
    out = ["| metric | labels | meaning |", "|---|---|---|"]
    out += [f"| `{name}` | {labels} | {_cell(help_text)} |"
            for name, labels, help_text in _metric_definitions()]
    return "\n".join(out)


def _undocumented_metrics() -> list[str]:
    return [f"metric `{name}` has no help text" for name, _, text in _metric_definitions()
            if not text.strip()]


# --- logs ----------------------------------------------------------------

def log_fields() -> str:
    from bot.log_context import CONTEXT_FIELDS

    return "\n".join(f"- `{field}`" for field in CONTEXT_FIELDS)


PARTS: dict[str, Callable[[], str]] = {
    "cli": cli_reference, "spec-keys": spec_keys, "config-keys": config_keys,
    "commands": comment_commands, "gates": gates, "exit-codes": exit_codes,
    "settings": settings, "metrics": metrics, "log-fields": log_fields,
}


def undocumented() -> list[str]:
    """Everything that exists without a meaning written in the code."""
    return [*_undocumented_cli(), *undocumented_keys(), *_undocumented_settings(),
            *_undocumented_metrics()]


def render(markdown: str) -> str:
    """A page's Markdown with each marker replaced by its generated part."""
    def part(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PARTS:
            raise KeyError(f"unknown generated part {name!r}: one of {', '.join(PARTS)}")
        return PARTS[name]().strip()

    return MARKER.sub(part, markdown)
