"""Benchmark 3: planning a job on a large repository, beside `git grep -n -E` with the same pattern.

    .venv/bin/python -m bench.discovery [--sizes 1000,5000,20000] [--repeats 5]

A synthetic repository (files of mixed sizes in nested directories, about 15% of them holding
matches) is built once per size with `git fast-import`. Stepwise's discovery (scope from the
tracked files, candidate files from `git grep -F` on the pattern's literal, exact lines with
Python's `re`, batches and milestones) is timed against `git grep -n -E` alone, in the same
run; the median ratio is printed (target <= 1.5 at 20,000 files).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jobs.adapters.workspace import Repository  # noqa: E402
from jobs.decisions.plan import build_plan  # noqa: E402
from jobs.engine.discovery import contents_for_patterns, scope_at  # noqa: E402
from jobs.inputs.config import load_config  # noqa: E402
from jobs.inputs.spec import parse_spec  # noqa: E402

PATTERN = r"\bold_api\("
GREP_PATTERN = r"\bold_api\("
SPEC = parse_spec(f"```stepwise\nrecipe: replace\npaths: ['src/**/*.py']\n"
                  f"find: ['{PATTERN}']\nreplace: 'new_api('\n```\n")
LINE = "value = compute(alpha, beta)  # a line of ordinary code\n"


def build_repository(path: Path, files: int, *, seed: int = 7) -> int:
    """A repository of `files` Python files; returns how many lines match."""
    rng = random.Random(seed)
    stream: list[bytes] = []
    matches = 0
    for index in range(files):
        lines = [LINE] * rng.choice((5, 20, 80, 300))
        if rng.random() < 0.15:
            for where in rng.sample(range(len(lines)), rng.randint(1, 3)):
                lines[where] = "result = old_api(value)\n"
                matches += 1
        body = "".join(lines).encode()
        name = f"src/pkg{index % 40}/sub{index % 7}/module_{index}.py"
        stream.append(b"M 100644 inline " + name.encode() + b"\ndata " +
                      str(len(body)).encode() + b"\n" + body + b"\n")
    header = (b"commit refs/heads/main\ncommitter Bench <b@example.invalid> 0 +0000\n"
              b"data 5\nbench\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "fast-import", "--quiet"], input=header + b"".join(stream),
                   cwd=path, check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=path, check=True)
    return matches


def stepwise_discovery(repo: Repository, sha: str) -> int:
    config = load_config(None)
    scope = scope_at(repo, sha, SPEC, config)
    plan = build_plan(scope_files=scope,
                      contents=contents_for_patterns(repo, sha, scope, SPEC.find),
                      find=SPEC.find, batch_size=config.batch_size,
                      batches_per_milestone=config.batches_per_milestone)
    return plan.target_count


def git_grep(path: Path) -> int:
    done = subprocess.run(["git", "grep", "-n", "-E", GREP_PATTERN, "HEAD", "--", "src/"],
                          cwd=path, capture_output=True, check=False)
    return len(done.stdout.splitlines())


def timed(action: object, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = action()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"discovery vs git grep (median of {args.repeats}); Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"{'files':>7}{'matches':>9}{'stepwise':>11}{'git grep':>11}{'ratio':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "repo"
            expected = build_repository(path, size)
            repo = Repository(path)
            sha = repo.resolve("HEAD") or ""
            ours, found = timed(lambda r=repo, s=sha: stepwise_discovery(r, s), args.repeats)
            grep, lines = timed(lambda p=path: git_grep(p), args.repeats)
            assert found == lines == expected, (found, lines, expected)
            verdict = "" if size < 20000 else ("  met" if ours / grep <= 1.5 else "  NOT met")
            print(f"{size:>7}{expected:>9}{ours * 1e3:>8.0f} ms{grep * 1e3:>8.0f} ms"
                  f"{ours / grep:>8.2f}{verdict}")


if __name__ == "__main__":
    main()
