"""The long fuzz run: hypothesis-generated hostile input against every untrusted-input boundary.

    .venv/bin/python bench/fuzz.py                       # 2,500 inputs per target (12,500 in all)
    .venv/bin/python bench/fuzz.py --examples 10000 --seed 7
    .venv/bin/python bench/fuzz.py --no-known-bugs       # leave out the reported bugs' inputs

Targets: the webhook endpoint through the ASGI app (FastAPI TestClient, a real redis-server
started here unless --redis-url is given; bodies signed so they reach the parser, plus unsigned
garbage), bot.commands.parse_comment, jobs.inputs.spec.parse_issue_file/parse_spec,
jobs.inputs.config.load_config and jobs.decisions.guard.check_diff. For each target it prints the inputs
generated, the server errors (5xx answers), the uncaught exceptions (anything but the documented
error types), and how the inputs ended. The generators live in tests/kit/fuzz_*.py (listed by
tests/kit/fuzzing.py).
Exit status: 0 when no target had a server error or an uncaught exception, else 1.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", category=DeprecationWarning)

import redis  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bot.settings import Settings  # noqa: E402
from bot.web.app import create_app  # noqa: E402
from jobs.decisions.guard import GuardVerdict  # noqa: E402
from tests.kit import fuzzing as fz  # noqa: E402
from tests.kit.redis_server import running_redis  # noqa: E402

# The bugs found by this script and pinned by strict xfail tests in tests/security/test_fuzz.py:
# an uncaught exception whose text holds the key is counted under that bug.
KNOWN_BUGS = {
    "maximum recursion depth": "bug A (webhooks.py: deeply nested JSON)",
    "non-ASCII characters": "bug B (webhooks.py: non-ASCII signature header)",
}


@dataclass
class Tally:
    name: str
    inputs: int = 0
    server_errors: int = 0
    uncaught: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    samples: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def fail(self, kind: str, exc_or_text: BaseException | str, sample: str) -> None:
        text = exc_or_text if isinstance(exc_or_text, str) else f"{type(exc_or_text).__name__}: " \
            f"{str(exc_or_text)[:120]}"
        label = next((bug for key, bug in KNOWN_BUGS.items() if key in text), f"new: {text}")
        self.failures[f"{kind} — {label}"] += 1
        self.samples.setdefault(label, sample[:200])


def run(tally: Tally, strategy: st.SearchStrategy[object], check: Callable[[object], str],
        *, examples: int, seed_value: int) -> None:
    """Feed `examples` generated inputs to `check`, which returns how the input ended."""
    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(value=strategy)
    def body(value: object) -> None:
        tally.inputs += 1
        try:
            tally.outcomes[check(value)] += 1
        except fz.Unexpected as exc:
            kind = "server error" if "answered 5" in str(exc) else "uncaught"
            if kind == "server error":
                tally.server_errors += 1
            else:
                tally.uncaught += 1
            tally.fail(kind, str(exc.__cause__ or exc), repr(value))
        except Exception as exc:  # the web app raised through the test client
            tally.uncaught += 1
            tally.fail("uncaught", exc, repr(value))

    started = time.monotonic()
    body()
    tally.seconds = time.monotonic() - started


@contextmanager
def redis_at(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with running_redis() as started:
        yield started


def webhook_check(client: TestClient) -> Callable[[object], str]:
    def check(value: object) -> str:
        assert isinstance(value, fz.WebhookRequest)
        response = client.post(fz.WEBHOOK_PATH, content=value.body, headers=value.headers())
        fz.check_webhook_response(value, response.status_code)
        outcome = response.json().get("status", "") if response.content else ""
        return f"{response.status_code} {outcome}".strip()
    return check


def parser_check(check: Callable[..., object]) -> Callable[[object], str]:
    def run_one(value: object) -> str:
        args = value if isinstance(value, tuple) else (value,)
        result = check(*args)
        if result is None:
            return "refused with the documented error"
        if isinstance(result, list):  # parse_comment: how many commands, unknown or invalid
            kinds = sorted({type(item).__name__ for item in result})
            return f"{min(len(result), 3)}{'+' if len(result) > 3 else ''} found {kinds}"
        if isinstance(result, GuardVerdict):
            return "accepted: " + ("ok" if result.ok else f"gate {result.gate}" if result.gate
                                   else "violations refused")
        return "accepted"
    return run_one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2500, help="inputs per target")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--redis-url", default=None, help="use this Redis (default: start one)")
    parser.add_argument("--no-known-bugs", action="store_true",
                        help="leave out the input classes of the reported bugs")
    args = parser.parse_args()
    known = not args.no_known_bugs
    tallies: list[Tally] = []
    with redis_at(args.redis_url) as url:
        connection = redis.Redis.from_url(url)
        connection.flushdb()
        app_settings = Settings(app_id=1, private_key="unused", webhook_secret=fz.SECRET,
                                redis_url=url, app_slug=fz.SLUG)
        with TestClient(create_app(app_settings, connection)) as client:
            targets: list[tuple[str, st.SearchStrategy[object], Callable[[object], str]]] = [
                ("webhook endpoint (ASGI)", fz.webhook_requests(known_bugs=known),
                 webhook_check(client)),
                ("parse_comment", fz.comment_bodies(), parser_check(fz.check_comment)),
                ("parse_issue_file + parse_spec", fz.issue_files(),
                 parser_check(fz.check_issue_file)),
                ("load_config", fz.config_texts(), parser_check(fz.check_config)),
                ("check_diff", st.tuples(fz.diffs(), fz.policies), parser_check(fz.check_guard)),
            ]
            for name, strategy, check in targets:
                tally = Tally(name)
                run(tally, strategy, check, examples=args.examples, seed_value=args.seed)
                tallies.append(tally)
                report(tally)
        connection.flushdb()
    total = sum(t.inputs for t in tallies)
    errors = sum(t.server_errors for t in tallies)
    uncaught = sum(t.uncaught for t in tallies)
    print(f"\nTOTAL: {total:,} inputs, {errors} server errors (5xx), {uncaught} uncaught exceptions"
          f" (seed {args.seed}, known bugs {'included' if known else 'left out'})")
    return 0 if errors == 0 and uncaught == 0 else 1


def report(tally: Tally) -> None:
    print(f"\n== {tally.name}: {tally.inputs:,} inputs in {tally.seconds:.1f} s; "
          f"{tally.server_errors} server errors (5xx); {tally.uncaught} uncaught exceptions")
    for outcome, count in tally.outcomes.most_common(8):
        print(f"   {count:>6,}  {outcome}")
    for failure, count in tally.failures.most_common():
        print(f"   {count:>6,}  FAILURE {failure}")
    for label, sample in tally.samples.items():
        print(f"           e.g. [{label}] {sample}")


if __name__ == "__main__":
    sys.exit(main())
