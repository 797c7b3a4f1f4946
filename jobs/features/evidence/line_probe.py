"""Copied into the sandbox beside coverage_starter.py (as `stepwise_line_probe.py`; never
imported by Stepwise): before Python 3.12, where coverage.py's tracer would slow every line of
every module, only the batch's changed files are measured, by an import hook that compiles them
with a call before each statement recording its line. Nothing else runs slower. A file run as a
script rather than imported (`python path/to/file.py`) is not seen this way, and so not run.

It runs under the repository's interpreter, so it keeps to what Python 3.8 has."""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from collections.abc import Callable
from typing import Any

HIT = "__stepwise_hit__"
_DOCSTRING_HOLDERS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _hits(statement: ast.stmt) -> list[ast.stmt]:
    """The calls recording `statement`'s line (and its decorators', which coverage.py counts as
    statements of their own)."""
    lines = [d.lineno for d in getattr(statement, "decorator_list", [])] + [statement.lineno]
    return [ast.copy_location(ast.Expr(ast.Call(ast.Name(HIT, ast.Load()), [ast.Constant(line)],
                                                [])), statement) for line in lines]


def _leading(body: list[ast.stmt], holder: ast.AST) -> int:
    """How many statements must stay first: a docstring, and a module's `__future__` imports."""
    count = 0
    if isinstance(holder, _DOCSTRING_HOLDERS) and body and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        count = 1
    if isinstance(holder, ast.Module):
        while count < len(body) and isinstance(body[count], ast.ImportFrom) and \
                body[count].module == "__future__":  # type: ignore[attr-defined]
            count += 1
    return count


class _Recorder(ast.NodeTransformer):
    """Puts `__stepwise_hit__(line)` before every statement of every body."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                first = _leading(value, node)
                body = [*value[:first], *[hit for s in value[:first] for hit in _hits(s)]]
                for statement in value[first:]:
                    body += [*_hits(statement), statement]
                setattr(node, name, body)
        return node


def install(targets: set[str], hits: dict[str, set[int]]) -> None:
    """Measure the files in `targets` (real paths) when they are imported."""

    class Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname: str) -> Any:  # from the source always, never a cache
            path = self.get_filename(fullname)
            tree = _Recorder().visit(ast.parse(self.get_data(path), path))
            return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)

        def exec_module(self, module: Any) -> None:
            record: Callable[[int], None] = hits.setdefault(
                os.path.realpath(self.path), set()).add
            module.__dict__[HIT] = record
            super().exec_module(module)

    class Finder:
        @staticmethod
        def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) \
                    or not spec.origin or os.path.realpath(spec.origin) not in targets:
                return None  # not ours: the usual finders go on
            spec.loader = Loader(spec.loader.name, spec.loader.path)
            return spec

    sys.meta_path.insert(0, Finder)
