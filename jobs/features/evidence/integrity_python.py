"""What a Python test file checks, read through `ast` (pure): each test function (module-level
`test*`, and `test*` methods of classes) with its assertions (`assert`, `self.assert*`,
`pytest.raises`/`warns`/`fail`, any `assert_*` call), its skip/xfail markers (decorators, calls
in its body, the class's and the module's `pytestmark`), the assertions a handler swallows and
those an early return or skip leaves unreachable.

An assertion's shape keeps its own words (`assertEqual`, `raises`, the comparison operators) and
turns every other name and every literal into a placeholder, so a codemod that renames the code
under test leaves the shape alone, while `== 5` -> `== 6` changes only the literals (the expected
value changed) and `assertEqual` -> `assertTrue` changes the shape (the assertion loosened).
"""

from __future__ import annotations

import ast
import copy

from jobs.features.evidence.integrity_shapes import Assertion, CheckedTest, FileTests

ASSERTING_CALLS = frozenset({"raises", "warns", "fail", "approx", "deprecated_call"})
SKIPPING = ("skip", "xfail", "expectedFailure")  # in a decorator's or a call's name
SWALLOWING = frozenset({"Exception", "BaseException", "AssertionError"})


def _name_of(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Call):
        return _name_of(func.func)
    return ""


def _is_assertion_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = _name_of(node.func)
    return name.startswith("assert") or name in ASSERTING_CALLS


class _Placeholders(ast.NodeTransformer):
    """Names and literals to placeholders; an assertion's own words kept."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id="_", ctx=ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        keep = node.attr.startswith("assert") or node.attr in ASSERTING_CALLS
        return ast.Attribute(value=node.value, attr=node.attr if keep else "_", ctx=ast.Load())

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value="<literal>")


def _literals(node: ast.AST) -> tuple[str, ...]:
    return tuple(repr(n.value) for n in ast.walk(node) if isinstance(n, ast.Constant))


def _assertion(node: ast.AST, source: str) -> Assertion:
    shape = ast.dump(_Placeholders().visit(copy.deepcopy(node)), annotate_fields=False)
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    return Assertion(shape, _literals(node), text)


def _assertions(nodes: list[ast.stmt], source: str) -> list[Assertion]:
    found: list[Assertion] = []
    for statement in nodes:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assert) or _is_assertion_call(node):
                found.append(_assertion(node, source))
    return found


def _skips(node: ast.AST) -> set[str]:
    """The skip/xfail words named by a decorator or a call."""
    text = ast.unparse(node)
    return {word for word in SKIPPING if word in text}


def _swallowing_handler(handler: ast.ExceptHandler) -> bool:
    if any(isinstance(n, ast.Raise) for n in ast.walk(handler)):
        return False
    return handler.type is None or _name_of(handler.type) in SWALLOWING or (
        isinstance(handler.type, ast.Tuple)
        and any(_name_of(e) in SWALLOWING for e in handler.type.elts))


def _swallowed(function: ast.AST, source: str) -> int:
    count = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Try) and any(_swallowing_handler(h) for h in node.handlers):
            count += len(_assertions(node.body, source))
        if isinstance(node, ast.With) and any(
                _name_of(item.context_expr) == "suppress" for item in node.items):
            count += len(_assertions(node.body, source))
    return count


def _ends_test(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Return):
        return True
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
        (_name_of(statement.value.func) in ("skip", "skipTest", "xfail", "fail"))


def _unreachable(body: list[ast.stmt], source: str) -> int:
    for index, statement in enumerate(body):
        if _ends_test(statement):
            return len(_assertions(body[index + 1:], source))
    return 0


def _body_shape(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return "\n".join(ast.dump(statement) for statement in function.body)


def _test(name: str, function: ast.FunctionDef | ast.AsyncFunctionDef, source: str,
          inherited: set[str]) -> CheckedTest:
    markers = set(inherited)
    for decorator in function.decorator_list:
        markers |= _skips(decorator)
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _name_of(node.func) in ("skip", "skipTest", "xfail"):
            markers.add("xfail" if _name_of(node.func) == "xfail" else "skip")
    return CheckedTest(name=name, assertions=_assertions(function.body, source), markers=markers,
                     swallowed=_swallowed(function, source),
                     unreachable=_unreachable(function.body, source), body=_body_shape(function))


def _pytestmark(body: list[ast.stmt]) -> set[str]:
    marks: set[str] = set()
    for statement in body:
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) \
                else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) \
                    and statement.value is not None:
                marks |= _skips(statement.value)
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
                _name_of(statement.value.func) == "skip":
            marks.add("skip")  # pytest.skip(..., allow_module_level=True)
    return marks


def read_tests(source: str) -> FileTests:
    """The test functions of a Python file (unreadable: why, with no tests)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return FileTests({}, unreadable=f"{type(exc).__name__}: {exc}")
    tests: dict[str, CheckedTest] = {}
    others: dict[str, str] = {}
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    for node in tree.body:
        if isinstance(node, functions):
            if node.name.startswith("test"):
                tests[node.name] = _test(node.name, node, source, set())
            else:
                others[node.name] = _body_shape(node)
        elif isinstance(node, ast.ClassDef):
            inherited: set[str] = set()
            for decorator in node.decorator_list:
                inherited |= _skips(decorator)
            inherited |= _pytestmark(node.body)
            for item in node.body:
                if not isinstance(item, functions):
                    continue
                name = f"{node.name}::{item.name}"
                if item.name.startswith("test"):
                    tests[name] = _test(name, item, source, inherited)
                else:
                    others[name] = _body_shape(item)
    return FileTests(tests, others, frozenset(_pytestmark(tree.body)))
