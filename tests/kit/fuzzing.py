"""Hypothesis strategies and checks for hostile input, shared by tests/security/test_fuzz.py
(a short run) and bench/fuzz.py (the long run).

Each target has a strategy and a `check_*` function that feeds one generated input to the real
code and raises `Unexpected` for any outcome the contract does not allow: a 5xx answer or an
uncaught exception from the web app, or an exception other than the documented error type from
a parser. `known_bugs=False` leaves out the input classes of the bugs reported (and pinned by
strict xfail tests) in test_fuzz.py, so that the short run stays green until they are fixed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import string
from dataclasses import dataclass
from typing import Any

import yaml
from hypothesis import strategies as st

from bot.commands import MAX_COMMANDS, ParsedCommand, parse_comment
from bot.commands.registry import COMMANDS
from jobs.domain.config import RepoConfig, load_config
from jobs.domain.errors import BadInputError
from jobs.domain.globs import unsafe_path_reason
from jobs.domain.guard import DiffParseError, GuardPolicy, GuardVerdict, check_diff
from jobs.domain.programs import BLOCKED_PROGRAMS
from jobs.domain.spec import IssueTask, TaskSpec, parse_issue_file, parse_spec
from tests.kit.webhooks import EVENT_NAMES, event_header, load

SECRET = "fuzz-webhook-secret"
SLUG = "stepwise"
WEBHOOK_PATH = "/webhooks/github"
EVENT_HEADERS = ("issues", "issue_comment", "pull_request", "push", "installation",
                 "installation_repositories", "ping", "check_run")
VERBS = [spec.verb for spec in COMMANDS]
SPEC_FIELDS = list(TaskSpec.model_fields)
CONFIG_FIELDS = [info.alias or name for name, info in RepoConfig.model_fields.items()]
NASTY_PATHS = ("../etc/passwd", "/etc/shadow", ".git/config", ".git/hooks/pre-commit",
               "src/../../x", "C:/Windows", "a\\b", "a\x00b", "", " ", "**", "src/**/*.py",
               ".github/workflows/ci.yml", "tests/test_x.py", "pyproject.toml", "ünï/cödé.py",
               "with space.py", 'quote"d.py', "tab\there.py", "new\nline.py", "-rf", "~/.ssh/id")


class Unexpected(AssertionError):
    """An outcome the contract does not allow (the fuzz failure)."""


# -- JSON values and webhook requests ----------------------------------------------------------
def json_values(*, nan: bool = True) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**80),
        st.floats(allow_nan=nan, allow_infinity=nan), st.text(max_size=40),
        st.sampled_from(["", "0", "-1", "stepwise", "/stepwise approve", "a/b", "refs/heads/x"]),
    )
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
        max_leaves=12)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


_READ_PATHS = {("action",), ("installation",), ("installation", "id"), ("repository",),
               ("repository", "full_name"), ("sender",), ("sender", "login"), ("sender", "type"),
               ("issue",), ("issue", "number"), ("issue", "title"), ("issue", "body"),
               ("issue", "user"), ("issue", "user", "login"), ("issue", "pull_request"),
               ("label",), ("label", "name"), ("changes",), ("changes", "body"), ("comment",),
               ("comment", "id"), ("comment", "body"), ("comment", "user"),
               ("comment", "created_at"), ("pull_request",), ("pull_request", "number"),
               ("pull_request", "merged"), ("pull_request", "head"),
               ("pull_request", "head", "ref"), ("ref",), ("after",)}


@st.composite
def mutated_payload(draw: st.DrawFn) -> tuple[str, Any]:
    """A recorded payload with a few keys deleted or their values replaced by odd ones."""
    name = draw(st.sampled_from(EVENT_NAMES))
    payload: Any = load(name)
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        paths = _paths(payload)
        if draw(st.booleans()):  # half the time, a field the normaliser reads
            paths = [p for p in paths if p in _READ_PATHS] or paths
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = payload
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(json_values())
    if draw(st.booleans()):  # commands and specs in the text fields, so workers get queued
        text = draw(st.sampled_from(["/stepwise approve", "/stepwise revert 1", "@stepwise skip x",
                                     "```stepwise\nrecipe: replace\n```", "x" * 70_000]))
        for holder in ("comment", "issue"):
            if isinstance(payload, dict) and isinstance(payload.get(holder), dict):
                payload[holder]["body"] = text
    return event_header(name), payload


@dataclass(frozen=True)
class WebhookRequest:
    event: str | None
    delivery: str | None
    body: bytes
    signature: bytes | str | None  # None: header missing
    signed: bool  # whether `signature` is the right one for `body`

    def headers(self) -> dict[str, str | bytes]:
        headers: dict[str, str | bytes] = {"Content-Type": "application/json"}
        for name, value in (("X-GitHub-Event", self.event), ("X-GitHub-Delivery", self.delivery),
                            ("X-Hub-Signature-256", self.signature)):
            if value is not None:
                headers[name] = value
        return headers


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


_HEADER_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-_.:/ ", min_size=1,
                       max_size=60)


def rarely_none(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str | None]:
    """`strategy`, or (one time in ten) None: the header is missing."""
    return st.sampled_from([False] * 9 + [True]).flatmap(
        lambda missing: st.none() if missing else strategy)


@st.composite
def webhook_requests(draw: st.DrawFn, *, known_bugs: bool = True) -> WebhookRequest:
    """A delivery: a mutated recorded payload, any JSON, raw bytes or a deeply nested document,
    signed (so it reaches the parser) or with a missing, wrong or garbled signature."""
    kind = draw(st.sampled_from(["mutated", "mutated", "json", "bytes", "deep", "unsigned"]))
    event = draw(rarely_none(st.sampled_from(EVENT_HEADERS) | _HEADER_TEXT))
    if kind == "mutated":
        event, value = draw(mutated_payload())
        body = json.dumps(value).encode()
    elif kind == "json":
        body = json.dumps(draw(json_values())).encode()
    elif kind == "deep" and known_bugs:  # known bug A: json.loads' RecursionError is a 500
        depth = draw(st.integers(min_value=1, max_value=200_000))
        body = b"[" * depth + b"]" * depth
    else:
        body = draw(st.binary(max_size=512))
    delivery = draw(rarely_none(st.uuids().map(str) | st.uuids().map(str) | _HEADER_TEXT))
    if kind != "unsigned":
        return WebhookRequest(event, delivery, body, sign(body), signed=True)
    garbage = st.one_of(
        st.none(), _HEADER_TEXT, st.just(sign(body, "wrong-secret")),
        st.just(sign(body).replace("sha256=", "sha1=")), st.just(sign(body + b" ")),
    )
    if known_bugs:  # known bug B: a non-ASCII signature header is a 500 before any check
        garbage = st.one_of(garbage, st.binary(min_size=1, max_size=80).map(
            lambda raw: b"sha256=" + bytes(b | 0x80 for b in raw.strip() or b"x")))
    return WebhookRequest(event, delivery, body, draw(garbage), signed=False)


def check_webhook_response(request: WebhookRequest, status: int) -> None:
    if status >= 500:
        raise Unexpected(f"the web app answered {status} to {request!r:.300}")
    if not request.signed and status != 401:
        raise Unexpected(f"an unsigned delivery got {status}, not 401: {request!r:.300}")


# -- comments ------------------------------------------------------------------------------------
_COMMENT_LINES = st.one_of(
    st.builds(lambda p, v, a: f"{p}{v} {a}".rstrip(),
              st.sampled_from(["/stepwise ", "/Stepwise ", "@stepwise ", "@stepwise[bot] ", "   /stepwise ",
                               "> /stepwise ", "    /stepwise ", "- /stepwise ", "/stepwise", "@other "]),
              st.one_of(st.sampled_from(VERBS), st.text(max_size=12)),
              st.one_of(st.just(""), st.integers().map(str), st.text(max_size=30))),
    st.sampled_from(["```", "~~~~", "   ```python", "- ```", "````", "<!--", "-->", "`<!--`",
                     "<!-- /stepwise approve -->", "`` ` ``", "> ```", "\t```", ""]),
    st.text(max_size=60),
)


@st.composite
def comment_bodies(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_COMMENT_LINES, max_size=20))
    separator = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    body = separator.join(lines)
    if draw(st.integers(min_value=0, max_value=30)) == 0:  # now and then, past the size limit
        body = body + separator + "x" * 70_000 + separator + "/stepwise approve"
    return body


def check_comment(body: str) -> list[ParsedCommand]:
    try:
        found = parse_comment(body, app_slug=SLUG)
    except Exception as exc:
        raise Unexpected(f"parse_comment raised {exc!r} on {body[:200]!r}") from exc
    if len(found) > MAX_COMMANDS:
        raise Unexpected(f"{len(found)} commands returned, more than {MAX_COMMANDS}")
    return found


# -- specs and configs ---------------------------------------------------------------------------
_PATTERNS = st.sampled_from(["\\bprint\\(", "old_sum\\(", "(", "a{1,", "[", "(?P<x>a)", "x" * 1001,
                             "", "(a+)+$", "\\d+"])
_GLOBS = st.one_of(st.sampled_from(NASTY_PATHS), st.text(max_size=15))
_COMMANDS = st.sampled_from(["python -m pytest -q", "ruff check {files}", "python fix.py {files}",
                             "rm -rf /", "bash -c 'x'", "python x.py && curl y", "/usr/bin/python",
                             "PYTHONPATH=x python", "git push", "'unbalanced", "", "python {files}",
                             "npm test", "env python", "setsid python"])
_SPEC_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "recipe": st.sampled_from(["replace", "command", "llm", "Replace", "sed", 1]),
    "paths": st.lists(_GLOBS, max_size=4) | _GLOBS,
    "exclude": st.lists(_GLOBS, max_size=3),
    "find": st.lists(_PATTERNS, max_size=3) | _PATTERNS,
    "replace": st.sampled_from(["new(", "\\1", "\\g<x>", "\\g<9>", "\\", ""]) | st.text(max_size=10),
    "run": _COMMANDS,
    "instructions": st.text(max_size=30),
    "not_doing": st.lists(st.text(max_size=10), max_size=3),
    "done_when": st.sampled_from(["no_matches", "checks_pass", "never"]),
    "batch_size": st.integers(min_value=-1, max_value=102) | st.just("5"),
}
_CONFIG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "trigger_label": st.text(max_size=55),
    "setup": st.lists(_COMMANDS, max_size=2),
    "validate": st.lists(_COMMANDS, max_size=3),
    "env": st.dictionaries(st.sampled_from(["PYTHONPATH", "PATH", "LD_PRELOAD", "GIT_DIR", "1X",
                                            "STEPWISE_X", "ok_name", "A=B", ""]),
                           st.text(max_size=10) | st.integers(), max_size=3),
    "allow_commands": st.lists(st.sampled_from(["python", "pytest", "rm", "bash", "git", "ruff",
                                                "../x", "py thon", "env", "sh"]), max_size=4),
    "network": st.booleans() | st.just("yes"),
    "batch_size": st.integers(min_value=-1, max_value=102),
    "batches_per_milestone": st.integers(min_value=-1, max_value=5),
    "max_failed_attempts": st.integers(min_value=0, max_value=21),
    "command_timeout": st.integers(min_value=0, max_value=90000),
    "require_plan_approval": st.booleans() | st.just("no"),
    "allow_deletions": st.sampled_from([True, False, "ask", "yes", None]),
    "allow_new_files": st.booleans(),
    "max_batch_lines": st.integers(min_value=-1, max_value=1000),
    "allow_test_edits": st.booleans(),
    "allow_manifest_edits": st.booleans(),
    "protected_paths": st.lists(_GLOBS, max_size=4),
    "approvers": st.lists(st.sampled_from(["octocat", "@org/team", "-bad", "a" * 40, "@x", "ok-1"]),
                          max_size=3),
    "notes_dir": _GLOBS,
}


def _plausible(values: dict[str, st.SearchStrategy[Any]], good: dict[str, Any]
               ) -> st.SearchStrategy[dict[str, Any]]:
    """A good document with a few fields set to values from each field's own (often bad) range."""
    chosen = st.lists(st.sampled_from(sorted(values)), max_size=3, unique=True)
    return chosen.flatmap(lambda keys: st.fixed_dictionaries(
        {key: values[key] for key in keys})).map(lambda extra: {**good, **extra})


def _yaml_document(fields: list[str], good: dict[str, Any],
                   values: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[str]:
    odd = st.one_of(json_values(nan=False), st.sampled_from(NASTY_PATHS),
                    st.lists(st.sampled_from(NASTY_PATHS), max_size=4))
    keys = st.one_of(st.sampled_from(fields), st.text(max_size=10))
    mapping = st.dictionaries(keys, odd, max_size=6)
    dumped = st.one_of(_plausible(values, good), _plausible(values, good), mapping,
                       mapping.map(lambda extra: {**good, **extra})).map(
        lambda data: yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    tricks = st.sampled_from([
        "a: &x [1]\nb: *x\n", "a: 1\na: 2\n", "!!python/object:os.system\n", "- 1\n- 2\n",
        "key: [unclosed\n", "\t- tab\n", "? complex\n: key\n", "recipe: !!binary aGVsbG8=\n",
        "paths: " + "[" * 200 + "]" * 200 + "\n", "x" * 70_000,
    ])
    return st.one_of(dumped, dumped, dumped, tricks, st.text(max_size=200))


_GOOD_SPEC = {"recipe": "replace", "paths": ["src/**/*.py"], "find": ["old\\("], "replace": "new("}


@st.composite
def issue_files(draw: st.DrawFn) -> str:
    block = draw(_yaml_document(SPEC_FIELDS, _GOOD_SPEC, _SPEC_VALUES))
    fence = draw(st.sampled_from(["```", "```", "~~~", "````", "   ```"]))
    info = draw(st.sampled_from(["stepwise", "stepwise", "Stepwise", " stepwise ", "stepwise yaml"]))
    close = draw(st.sampled_from([fence.strip(), fence.strip(), fence.strip(), "", "~~~"]))
    title = draw(st.sampled_from(["# Replace old() with new()"] * 3) | st.text(max_size=30))
    around = draw(st.lists(st.one_of(st.text(max_size=40), st.sampled_from(
        ["<!--", "-->", "```stepwise", "```", "> quote"])), max_size=4))
    return "\n".join([title, *around[:2], f"{fence}{info}", block, close, *around[2:]])


def check_spec_result(spec: TaskSpec) -> None:
    """What a spec that parses must satisfy: only safe, repository-relative paths."""
    for glob in (*spec.paths, *spec.exclude):
        if unsafe_path_reason(glob) is not None:
            raise Unexpected(f"an unsafe path was accepted in a spec: {glob!r}")
    spec.digest()


def check_issue_file(text: str) -> IssueTask | None:
    try:
        task = parse_issue_file(text)
    except BadInputError:
        task = None
    except Exception as exc:
        raise Unexpected(f"parse_issue_file raised {exc!r} on {text[:200]!r}") from exc
    try:
        spec = parse_spec(text)
    except BadInputError:
        return task
    except Exception as exc:
        raise Unexpected(f"parse_spec raised {exc!r} on {text[:200]!r}") from exc
    check_spec_result(spec)
    return task


_GOOD_CONFIG = {"validate": ["python -m pytest -q"], "allow_commands": ["python"]}


def config_texts() -> st.SearchStrategy[str]:
    return _yaml_document(CONFIG_FIELDS, _GOOD_CONFIG, _CONFIG_VALUES)


def check_config(text: str) -> RepoConfig | None:
    try:
        config = load_config(text)
    except BadInputError:
        return None
    except Exception as exc:
        raise Unexpected(f"load_config raised {exc!r} on {text[:200]!r}") from exc
    for path in (*config.protected_paths, config.notes_dir):
        if unsafe_path_reason(path) is not None:
            raise Unexpected(f"an unsafe path was accepted in a config: {path!r}")
    blocked = set(config.allow_commands) & BLOCKED_PROGRAMS
    if blocked:
        raise Unexpected(f"blocklisted programs were allowed: {blocked}")
    return config


# -- diffs ---------------------------------------------------------------------------------------
def _quoted(path: str) -> str:
    if any(c in path for c in '"\\\t\n') or not path.isascii():
        escaped = path.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        escaped = escaped.replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
        return f'"{escaped}"'
    return path


@st.composite
def _file_section(draw: st.DrawFn) -> list[str]:
    path = draw(st.one_of(st.sampled_from(["src/app.py", "src/util.py", *NASTY_PATHS]),
                          st.text(min_size=1, max_size=20)))
    other = draw(st.one_of(st.just(path), st.sampled_from(NASTY_PATHS)))
    a, b = _quoted(f"a/{path}"), _quoted(f"b/{other}")
    lines = [f"diff --git {a} {b}"]
    lines += draw(st.lists(st.sampled_from([
        "new file mode 100644", "new file mode 100755", "deleted file mode 100644",
        "old mode 100644", "new mode 100755", "new file mode 120000", "new file mode 160000",
        f"rename from {_quoted(path)}", f"rename to {_quoted(other)}", "similarity index 90%",
        f"copy from {_quoted(path)}", f"copy to {_quoted(other)}", "index 0000000..1111111 100644",
        "Binary files a/x and b/x differ", "dissimilarity index 80%",
    ]), max_size=3))
    if draw(st.booleans()):
        lines += [draw(st.sampled_from([f"--- {a}", "--- /dev/null", "--- a"])),
                  draw(st.sampled_from([f"+++ {_quoted('b/' + other)}", "+++ /dev/null", "+++ b"]))]
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            counts = draw(st.tuples(*[st.integers(min_value=0, max_value=5)] * 4))
            lines.append("@@ -{},{} +{},{} @@".format(*counts))
            lines += draw(st.lists(st.one_of(
                st.builds(lambda c, t: c + t, st.sampled_from(["+", "-", " "]), st.text(max_size=20)),
                st.just("\\ No newline at end of file")), max_size=6))
    return lines


@st.composite
def diffs(draw: st.DrawFn) -> str:
    sections = draw(st.lists(_file_section(), max_size=4))
    lines: list[str] = [line for section in sections for line in section]
    if draw(st.booleans()) and lines:  # now and then a foreign line, or a duplicated one
        at = draw(st.integers(min_value=0, max_value=len(lines)))
        lines.insert(at, draw(st.one_of(st.text(max_size=30), st.sampled_from(lines))))
    text = "\n".join(line.replace("\n", "") for line in lines)
    return text + ("\n" if draw(st.booleans()) else "")


policies = st.builds(
    GuardPolicy, allow_deletions=st.sampled_from([True, False, "ask"]),
    allow_new_files=st.booleans(), allow_test_edits=st.booleans(),
    allow_manifest_edits=st.booleans(), max_batch_lines=st.integers(min_value=1, max_value=50),
)


def check_guard(diff: str, policy: GuardPolicy) -> GuardVerdict | None:
    try:
        verdict = check_diff(diff, batch_files=["src/app.py"],
                             scope_files=["src/app.py", "src/util.py"], policy=policy)
    except DiffParseError:
        return None
    except Exception as exc:
        raise Unexpected(f"check_diff raised {exc!r} on {diff[:300]!r}") from exc
    for path in verdict.changed_files:
        if unsafe_path_reason(path) is not None and verdict.ok:
            raise Unexpected(f"an unsafe path passed the guard: {path!r}")
    return verdict


__all__ = ["SECRET", "Unexpected", "WebhookRequest", "check_comment", "check_config",
           "check_guard", "check_issue_file", "check_webhook_response", "comment_bodies",
           "config_texts", "diffs", "issue_files", "policies", "sign", "webhook_requests"]
