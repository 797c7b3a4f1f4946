"""What the engine may import of jobs/adapters/ (issue 42, item 3): it reaches the store, the
sandbox, the forge and the environments only through their ports (jobs/ports.py; import-linter
forbids their adapters), and the adapter modules it does import are exactly those below, each
with why: constants that name a fixed place or identity, and the file caches the engine owns
(reading the repository through the `Workspace` port is the engine's own `discovery.py`; a
command's result as evidence is the kernel's `command_evidence`). A new one is a decision
written here, not an accident. Through the ports it asks for what it wants by name (`changes`,
`merge_base`, `revert`, ...), never with a git argv: the git behind each answer (and its
batching) is the adapter's."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

ALLOWED = {
    # Where every sandbox shows the repository (`REPO_MOUNT`), to read paths in its output.
    "jobs.adapters.sandbox_view": {"jobs.engine.attempt", "jobs.engine.attempt_outcome"},
    # The recorded baselines, a file cache beside the repository's state.
    "jobs.adapters.baselines": {"jobs.engine.baseline"},
    # The default egress allowlist of a commit (computed once, cached beside the repository).
    "jobs.adapters.allowlist_cache": {"jobs.engine.context"},
    "jobs.adapters.egress_defaults": {"jobs.engine.context"},
}


def test_the_engine_imports_exactly_the_adapters_its_contract_names() -> None:
    graph = grimp.build_graph("jobs")
    imported: dict[str, set[str]] = {}
    for module in graph.find_descendants("jobs.engine") | {"jobs.engine"}:
        for target in graph.find_modules_directly_imported_by(module):
            if target == "jobs.adapters" or target.startswith("jobs.adapters."):
                imported.setdefault(target, set()).add(module)
    assert imported == ALLOWED


def raw_git_calls(root: Path) -> list[str]:
    """`file:line` of every `.git(...)` call (a git argv handed to a port) under `root`."""
    found = []
    for source in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "git":
                found.append(f"{source.name}:{node.lineno}")
    return found


def test_the_engine_hands_no_git_argv_to_the_ports() -> None:
    engine = Path(__file__).resolve().parents[3] / "jobs" / "engine"
    assert raw_git_calls(engine) == []


def test_the_scan_finds_a_raw_git_call(tmp_path: Path) -> None:
    (tmp_path / "step.py").write_text('def f(repo):\n    return repo.git("merge-base", "a", "b")\n')
    assert raw_git_calls(tmp_path) == ["step.py:2"]
