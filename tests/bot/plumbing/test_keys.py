"""Every Redis key is spelled in one place, bot/plumbing/keys.py: the keys themselves, the lease
and lock names inside them, and RQ's task ids. A key literal anywhere else in bot/ or bench/
fails here, and the spellings that Redis holds across versions (a queued task's id, a record's
key) stay exactly what older workers wrote."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bot.plumbing import keys
from tests.kit.spelled import spelled_strings

ROOT = Path(__file__).resolve().parents[3]
BOT = ROOT / "bot"
SCANNED = (BOT, ROOT / "bench")  # the benchmarks read the same keys
KEYS_MODULE = BOT / "plumbing" / "keys.py"
KEY_LITERAL = re.compile(r"^stepwise:\S")  # `stepwise: <title>` is a pull request's title
BUILDING_BLOCKS = {"PREFIX", "METRICS", "rq_id"}  # what builds a key: only keys.py composes them
NAMED_BY_KEYS = {"Lease", "job_lock", "lease_key", "lock_key", "RepoSlots", "enqueue_step"}
QUEUE_MODULE = BOT / "plumbing" / "queue.py"  # a task queued without an id gets a random one


def key_spellings(source: str, path: Path) -> list[str]:
    """Where `source` spells a Redis key, a lease or lock name or an RQ id by itself."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    found += [(line, f"key literal {text!r}") for line, text in spelled_strings(tree)
              if KEY_LITERAL.match(text)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "bot.plumbing.keys":
            used = {alias.name for alias in node.names} & BUILDING_BLOCKS
            allowed = {"rq_id"} if path == QUEUE_MODULE else set()
            if used - allowed:
                found.append((node.lineno, f"builds keys from {sorted(used - allowed)}"))
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if name in NAMED_BY_KEYS and any(isinstance(arg, ast.JoinedStr) for arg in node.args):
                found.append((node.lineno, f"{name}() of an f-string"))
    return [f"{path}:{line}: {what}" for line, what in sorted(found)]


def test_no_redis_key_is_spelled_outside_the_keys_module() -> None:
    found = [hit for root in SCANNED for path in sorted(root.rglob("*.py")) if path != KEYS_MODULE
             for hit in key_spellings(path.read_text(), path)]
    assert found == [], "spell these in bot/plumbing/keys.py and call its functions:\n" + \
        "\n".join(found)


def test_the_scan_finds_each_way_of_spelling_a_key() -> None:
    """The scan above is not vacuous: each way a key used to be spelled is caught."""
    source = '\n'.join([
        'ROUND_KEY = "stepwise:reconcile:round"',
        'key = f"stepwise:installation:{installation_id}"',
        'from bot.plumbing.keys import PREFIX',
        'with Lease(redis, f"start-{repo}#{number}") as lease: pass',
        'with job_lock(redis, f"comment:{comment_id}") as held: pass',
        'title = f"stepwise: {job.title}"',  # a pull request's title: not a key
    ])
    found = key_spellings(source, Path("sample.py"))
    assert [hit.split(": ", 1)[1] for hit in found] == [
        "key literal 'stepwise:reconcile:round'",
        "key literal 'stepwise:installation:{}'",
        "builds keys from ['PREFIX']",
        "Lease() of an f-string",
        "job_lock() of an f-string",
    ]


def test_the_keys_keep_the_spelling_older_versions_wrote() -> None:
    assert keys.job_key("12-ab") == "stepwise:job:12-ab"
    assert keys.batches_key("12-ab") == "stepwise:job:12-ab:batches"
    assert keys.issue_key("o/r", 12) == "stepwise:issue:o/r#12"
    assert keys.pull_key("o/r", 3) == "stepwise:pull:o/r#3"
    assert keys.lease_key(keys.event_lease("d-1")) == "stepwise:lease:event-d-1"
    assert keys.lease_key(keys.start_lease("o/r", 12)) == "stepwise:lease:start-o/r#12"
    assert keys.lock_key(keys.comment_lock(77)) == "stepwise:lock:comment:77"
    assert keys.lock_key(keys.rebuild_lock("o/r", 12)) == "stepwise:lock:rebuild:o/r#12"
    assert keys.slots_key(keys.installation_line(9)) == "stepwise:slots:installation:9"
    assert keys.installation_key(9) == "stepwise:installation:9"
    assert keys.suspended_key(9) == "stepwise:installation:9:suspended"
    assert keys.trigger_label_key("o/r") == "stepwise:trigger-label:o/r"
    assert keys.campaign_label_key("o/r") == "stepwise:campaign-label:o/r"
    assert keys.reconcile_cursor_key("gate") == "stepwise:reconcile:after:gate"
    assert keys.metric_key("jobs_total") == "stepwise:metrics:jobs_total"
    assert keys.RECONCILE_ROUND == "stepwise:reconcile:round"
    assert keys.RETENTION_ROUND == "stepwise:retention:round"
    assert keys.RETENTION_CURSOR == "stepwise:retention:after"
    assert keys.INSTALLATIONS_LOG == "stepwise:installations:log"
    # RQ task ids: a task is not queued twice under one id, across versions
    assert keys.step_task_id("12-ab", "7") == "advance-12-ab-7"
    assert keys.event_task_id("7f0c-11e3") == "event-7f0c-11e3"
    assert keys.cancelled_task_id("12-ab") == "cancelled-12-ab"
    assert keys.reconcile_task_id() == "reconcile-round"
    assert keys.rq_id("advance", "o/r#1", "x y") == "advance-o-r-1-x-y"  # RQ's alphabet only
