"""What a module spells as text, for the tests that hold a name to one home (Redis keys:
tests/bot/plumbing/test_keys.py; commit trailers: tests/jobs/kernel/test_trailers.py): its
string literals, each f-string read whole with `{}` for each field."""

from __future__ import annotations

import ast


def rendered(node: ast.AST) -> str | None:
    """The text of a string constant, or of an f-string with `{}` for each field."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}"
                       for part in node.values)
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def spelled_strings(tree: ast.AST, *, docstrings: bool = True) -> list[tuple[int, str]]:
    """(line, text) of each string `tree` spells: an f-string once, whole (its pieces are not
    read on their own); with `docstrings=False`, the docstrings are left out."""
    skipped = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
               for part in node.values}
    if not docstrings:
        skipped |= _docstrings(tree)
    return [(getattr(node, "lineno", 0), text) for node in ast.walk(tree)
            if id(node) not in skipped and (text := rendered(node)) is not None]
