"""No import cycle at module level in `jobs` or `bot` (issue 29, item 6): the graph grimp builds
holds every import, those under `TYPE_CHECKING` and inside functions included, so a cycle
cannot hide there. (Cycles between folders: the `acyclic_siblings` contract in pyproject.toml.)"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest


def cycles(*packages: str) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan's
    algorithm, iterative), each sorted; a module importing itself counts as one too."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1 or module in graph.find_modules_directly_imported_by(module):
                    found.append(sorted(component))
    return found


def test_jobs_and_bot_have_no_import_cycle() -> None:
    assert cycles("jobs", "bot") == []


@pytest.mark.parametrize(("a_imports", "b_imports"), [
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy import b\n", ""),
    ("def later():\n    from toy import b\n", ""),
    ("", "from toy import c\n"),
])
def test_the_check_sees_cycles_under_type_checking_and_inside_functions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, a_imports: str, b_imports: str) -> None:
    toy = tmp_path / "toy"
    toy.mkdir()
    (toy / "__init__.py").write_text('"""A toy package."""\n')
    (toy / "a.py").write_text(a_imports)
    (toy / "b.py").write_text(b_imports + "from toy import a\n")
    (toy / "c.py").write_text("from toy import b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = ["toy.a", "toy.b"] if a_imports else ["toy.b", "toy.c"]
    assert cycles("toy") == [expected]
