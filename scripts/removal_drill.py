"""The removal drill (issue 42): each loop feature and the `command` and `llm` recipes can be
taken out with its folder, its composition line and its tests, and what is left still
type-checks (mypy), keeps the import contracts (lint-imports) and passes the kernel, engine,
decisions and notes tests and the local end-to-end test.

For each removal the tree (the files git tracks or would track, as they are now) is copied into
a temporary directory with mypy's cache (so mypy checks only what changed; the drill waits for
the run scripts/test makes in the background, STEPWISE_MYPY_PENDING), the removal's
paths are deleted and its composition lines taken out, then the checks run there; one removal
per core at once (`--jobs`). `./scripts/test` runs it (tests/test_removal_drill.py, one test per
removal, each with `--jobs 1`: the suite's other workers keep the cores busy); by hand:

    .venv/bin/python scripts/removal_drill.py            # every removal
    .venv/bin/python scripts/removal_drill.py ci llm     # some of them
    .venv/bin/python scripts/removal_drill.py --list     # what each one deletes

A new feature or recipe gets a `Removal` below: its folder, its tests, the lines of
jobs/composition.py (or of another composition root) that name it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
COMPOSITION = "jobs/composition.py"
# What must still pass once a removal is made (those of these it deleted aside).
KEPT_TESTS = ("tests/jobs/kernel", "tests/jobs/engine", "tests/jobs/decisions", "tests/jobs/notes",
              "tests/jobs/test_local_mode.py")


@dataclass(frozen=True)
class Removal:
    """What goes when `name` goes: `paths` (folders and files, its tests among them), the lines
    of composition roots that name it (`lines`: file -> regular expressions, each matching
    whole lines), and `edits` (file -> (pattern, replacement)) where a line of another feature
    names it as an argument."""

    name: str
    paths: tuple[str, ...]
    lines: dict[str, tuple[str, ...]] = field(default_factory=dict)
    edits: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def feature(name: str, constant: str, *extra: str,
            edits: dict[str, tuple[tuple[str, str], ...]] | None = None) -> Removal:
    """A feature of jobs/features/: its folder, its tests, its import and its line in FEATURES."""
    return Removal(name, (f"jobs/features/{name}", f"tests/jobs/features/{name}", *extra),
                   {COMPOSITION: (rf"from jobs\.features\.{name}\.\w+ import .*",
                                  rf"    {constant},.*")}, edits or {})


REMOVALS: tuple[Removal, ...] = (
    feature("ci", "CI", edits={COMPOSITION: ((r"bisect_feature\(ci=CI_CANDIDATES\)",
                                              "bisect_feature(ci=None)"),)}),
    feature("base_moves", "BASE_MOVES"),
    feature("bisect", r"bisect_feature\(.*\)"),
    feature("environments", "ENVIRONMENTS"),
    feature("llm", "LLM"),
    feature("evidence", "EVIDENCE"),
    feature("check_runs", "CHECK_RUNS"),
    # A mode-level feature: its rules, then its modules in the hosts that plug it in (the
    # server's plug, the task center's pages, the comment verb, the CLI command, local mode's
    # runner) and their tests; one import and one line in each host's composition.
    Removal("campaigns", (
        "jobs/features/campaigns", "tests/jobs/features/campaigns", "jobs/local_campaigns.py",
        "bot/server/campaigns", "bot/plumbing/campaign_store.py",
        "bot/taskcenter/campaign_pages.py", "bot/taskcenter/templates/campaigns.html",
        "bot/taskcenter/templates/campaign.html", "bot/commands/campaign.py",
        "bot/cli/campaign.py", "bot/github/campaign_calls.py", "tests/kit/campaign_repos.py",
        "tests/bot/test_app_campaigns.py", "tests/bot/test_app_campaign_access.py",
        "tests/bot/test_app_campaign_close.py", "tests/bot/test_app_campaign_gates.py",
        "tests/bot/test_app_campaign_pacing.py", "tests/bot/test_app_campaign_shapes.py",
        "tests/bot/plumbing/test_campaign_store.py", "tests/bot/taskcenter/test_campaign_pages.py",
        "tests/bot/github/test_campaign_calls.py", "tests/bot/commands/test_campaign_verb.py",
        "tests/bot/test_printed_campaign_commands.py", "tests/bot/test_campaign_steer_path.py"),
        {"bot/server/plugs.py": (r"from bot\.server\.campaigns\.plug import PLUG as CAMPAIGNS",
                                 r"    CAMPAIGNS,.*"),
         "bot/commands/registry.py": (r"    campaign,", r"    campaign\.SPEC,"),
         "bot/cli/main.py": (r"from bot\.cli\.campaign import campaign",
                             r"app\.command\(\)\(campaign\)"),
         "bot/taskcenter/mount.py": (
             r"from bot\.taskcenter\.campaign_pages import router as campaigns_router",
             r"    app\.include_router\(campaigns_router\).*")}),
    Removal("recipe command", ("jobs/recipes/command.py",),
            {COMPOSITION: (r"    command\.RECIPE,",)},
            {COMPOSITION: ((r"from jobs\.recipes import RecipeDefinition, command, ",
                            "from jobs.recipes import RecipeDefinition, "),)}),
    # The llm feature is the recipe's ties to the loop: one home, removed together.
    Removal("recipe llm", ("jobs/recipes/llm", "tests/jobs/recipes/llm", "jobs/features/llm",
                           "tests/jobs/features/llm"),
            {COMPOSITION: (r"from jobs\.recipes\.llm import recipe as llm", r"    llm\.RECIPE,",
                           r"from jobs\.features\.llm\.\w+ import .*", r"    LLM,.*")}),
)


# Removals that do not pass yet, and why: the drill expects them to fail (and fails when one
# passes, so this list only shrinks). Issue 42's follow-up.
BLOCKED: dict[str, str] = {}


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0")
            if name and (ROOT / name).is_file() and not (ROOT / name).is_symlink()]


MYPY_WAIT_S = 900


def wait_for_mypy() -> None:
    """scripts/test runs mypy on the tree in the background (STEPWISE_MYPY_PENDING names the file
    it writes when that run ends): its cache is copied once it is whole."""
    pending = os.environ.get("STEPWISE_MYPY_PENDING")
    deadline = time.monotonic() + MYPY_WAIT_S
    while pending and not Path(pending).exists():
        if time.monotonic() > deadline:
            say(f"mypy's run (STEPWISE_MYPY_PENDING={pending}) did not end in {MYPY_WAIT_S} s: "
                "drilling without its cache")
            return
        time.sleep(0.2)


def copy_tree(into: Path, files: list[str]) -> None:
    for name in files:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)  # mtimes kept: mypy's cache stays valid
    (into / ".venv").symlink_to(ROOT / ".venv")  # tests run the `stepwise` command it holds
    wait_for_mypy()
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", into / ".mypy_cache", symlinks=True)


def remove(tree: Path, removal: Removal) -> list[str]:
    """Make `removal` in `tree`; what it did, or raise when something it names is not there
    (the drill would otherwise pass by deleting nothing)."""
    done = []
    for path in removal.paths:
        where = tree / path
        if where.is_dir():
            shutil.rmtree(where)
        elif where.exists():
            where.unlink()
        else:
            raise SystemExit(f"{removal.name}: {path} does not exist; update scripts/removal_drill.py")
        done.append(f"deleted {path}")
    for name, patterns in removal.lines.items():
        source = tree / name
        lines = source.read_text().splitlines(keepends=True)
        for pattern in patterns:
            kept = [line for line in lines if not re.fullmatch(pattern, line.rstrip("\n"))]
            if len(kept) == len(lines):
                raise SystemExit(f"{removal.name}: no line of {name} matches {pattern!r}")
            done.append(f"{name}: took out {len(lines) - len(kept)} line(s) matching {pattern!r}")
            lines = kept
        source.write_text("".join(lines))
    for name, edits in removal.edits.items():
        source = tree / name
        text = source.read_text()
        for pattern, replacement in edits:
            text, count = re.subn(pattern, replacement, text)
            if not count:
                raise SystemExit(f"{removal.name}: nothing in {name} matches {pattern!r}")
            done.append(f"{name}: {pattern!r} -> {replacement!r}")
        source.write_text(text)
    done += forget_in_contracts(tree, removal)
    return done


def forget_in_contracts(tree: Path, removal: Removal) -> list[str]:
    """Take the removed modules out of pyproject.toml's import contracts (import-linter refuses
    a contract naming a module that does not exist, and an ignored import that matches none),
    and the contracts only about them."""
    modules = [path.removesuffix(".py").replace("/", ".") for path in removal.paths
               if path.startswith(("jobs/", "bot/"))]
    source = tree / "pyproject.toml"
    head, marker, rest = source.read_text().partition("[[tool.importlinter.contracts]]")
    blocks = (marker + rest).split("[[tool.importlinter.contracts]]")[1:]
    module = r"(?:" + "|".join(re.escape(m) for m in modules) + r")(?:\.[\w.*]+)?"
    # a module, or an ignored import from or to one ("bot.x.* -> jobs.y.*")
    named = re.compile(rf'"(?:{module}(?: -> [\w.*]+)?|[\w.*]+ -> {module})",?\s*')
    kept, done = [], []
    for block in blocks:
        changed = named.sub("", block)
        if changed != block:
            name = re.search(r'name = "([^"]*)"', block)
            done.append(f"pyproject.toml: contract {name.group(1)[:60] if name else '?'!r} forgets it")
        if re.search(r"(source_modules|modules) = \[\s*\]", changed):
            continue  # the contract was only about what was removed
        kept.append("[[tool.importlinter.contracts]]" + changed)
    source.write_text(head + "".join(kept))
    return done


def checks(tree: Path) -> list[tuple[str, list[str]]]:
    tests = [path for path in KEPT_TESTS if (tree / path).exists()]
    return [
        ("mypy", [str(VENV / "mypy")]),
        ("lint-imports", [str(VENV / "lint-imports"), "--no-cache"]),
        ("tests", [str(VENV / "python"), "-m", "pytest", "-q", "-p", "no:xdist",
                   "-p", "no:cacheprovider", "-x", *tests]),
    ]


def drill(removal: Removal, files: list[str]) -> tuple[bool, str]:
    """Make one removal in a fresh copy and run the checks there: (passed, what happened)."""
    with tempfile.TemporaryDirectory(prefix="stepwise-drill-") as temp:
        tree = Path(temp)
        copy_tree(tree, files)
        done = remove(tree, removal)
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        report = [f"== {removal.name}", *(f"  {line}" for line in done)]
        for check, argv in checks(tree):
            started = time.monotonic()
            ran = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True,
                                 check=False)
            report.append(f"  {check}: {'ok' if ran.returncode == 0 else 'FAILED'} "
                          f"({time.monotonic() - started:.0f} s)")
            if ran.returncode != 0:
                report.append((ran.stdout + ran.stderr)[-4000:])
                return False, "\n".join(report)
        return True, "\n".join(report)


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="removals to make (default: all)")
    parser.add_argument("--list", action="store_true", help="say what each removal deletes")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="removals drilled at once (default: one per core)")
    args = parser.parse_args(argv)
    by_name = {r.name.replace(" ", "-"): r for r in REMOVALS}  # `recipe-llm`
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        sys.stderr.write(f"unknown removal(s) {unknown}; known: {sorted(by_name)}\n")
        return 2
    chosen = [by_name[n] for n in args.names] or list(REMOVALS)
    if args.list:
        for removal in chosen:
            say(f"{removal.name}: {', '.join(removal.paths)}; lines of "
                f"{', '.join(removal.lines) or 'nothing'}")
        return 0
    files, started = tracked_files(), time.monotonic()
    failed = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each in its own processes
        for removal, (passed, report) in zip(
                chosen, pool.map(lambda r: drill(r, files), chosen), strict=True):
            say(report)
            if not passed:
                failed.append(removal.name)
    say(f"removal drill: {len(chosen) - len(failed)} of {len(chosen)} removals pass in "
        f"{time.monotonic() - started:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    expected = {r.name for r in chosen if r.name in BLOCKED}
    for name in sorted(expected - set(failed)):
        say(f"{name} passes now: take it off BLOCKED in scripts/removal_drill.py")
    for name in sorted(expected & set(failed)):
        say(f"{name}: blocked, as known: {BLOCKED[name]}")
    return 0 if set(failed) == expected else 1


if __name__ == "__main__":
    sys.exit(main())
