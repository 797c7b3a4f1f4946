"""`outline`: a file's top-level signatures and docstrings (Python via `ast`, JavaScript and
TypeScript via a line scanner that skips strings, comments and nested blocks)."""

from __future__ import annotations

import ast
import re

from jobs.recipes.llm.tools.scope import Scope, ToolFailure

PYTHON = (".py", ".pyi")
SCRIPT = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
MAX_ENTRIES = 300
_JS_DECL = re.compile(
    r"^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?"
    r"(?:function\*?\s*[\w$]*\s*[<(]|class\s+[\w$]+|interface\s+[\w$]+|type\s+[\w$]+\s*[=<]"
    r"|enum\s+[\w$]+|(?:const|let|var)\s+[\w${}\[\], ]+\s*[:=]|module\.exports|exports\.[\w$]+)")
_JS_METHOD = re.compile(
    r"^(?:(?:public|private|protected|static|async|readonly|get|set|override)\s+)*"
    r"[#\w$]+\s*(?:<[^>]*>)?\s*\([^)]*\)?\s*(?::\s*[^{=]+)?\{?\s*$")
_NOT_METHODS = {"if", "for", "while", "switch", "catch", "return", "function", "else", "do"}


def outline(scope: Scope, *, path: str) -> str:
    name = scope.readable_path(path)
    text = scope.read_text(name)
    if name.endswith(PYTHON):
        entries = python_outline(text, name)
    elif name.endswith(SCRIPT):
        entries = script_outline(text)
    else:
        raise ToolFailure("unsupported_outline", f"outline reads Python and JavaScript/"
                          f"TypeScript files; read `{name}` with read_file instead")
    if not entries:
        return f"{name}: no top-level definitions"
    shown = entries[:MAX_ENTRIES]
    more = [f"… {len(entries) - MAX_ENTRIES} more"] if len(entries) > MAX_ENTRIES else []
    return f"{name} ({len(text.splitlines())} lines) outline:\n" + "\n".join([*shown, *more])


def _doc(node: ast.AST) -> str:
    if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        doc = ast.get_docstring(node)
        if doc:
            return f'  """{doc.strip().splitlines()[0][:160]}"""'
    return ""


def _header(lines: list[str], node: ast.stmt) -> str:
    """The source of a definition up to its body (decorators left out), one line."""
    body = getattr(node, "body", None)
    end = max(node.lineno, body[0].lineno - 1) if body else node.lineno  # one-liners: the line
    return " ".join(line.strip() for line in lines[node.lineno - 1:end])[:300]


def python_outline(text: str, name: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ToolFailure("syntax_error", f"`{name}` does not parse as Python (line "
                          f"{exc.lineno}: {exc.msg}); read it with read_file") from None
    lines = text.splitlines()
    entries = [f"(module){_doc(tree)}"] if _doc(tree) else []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            entries.append(f"{node.lineno:>5}| {_header(lines, node)}{_doc(node)}")
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                        entries.append(f"{member.lineno:>5}|     {_header(lines, member)}"
                                       f"{_doc(member)}")
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.Import | ast.ImportFrom):
            entries.append(f"{node.lineno:>5}| {lines[node.lineno - 1].strip()[:160]}")
    return entries


def _strip_code(line: str, state: dict[str, bool]) -> str:
    """`line` without strings and comments (block comments may span lines: `state`)."""
    out: list[str] = []
    index, quote = 0, ""
    while index < len(line):
        char, pair = line[index], line[index:index + 2]
        if state["comment"]:
            if pair == "*/":
                state["comment"] = False
                index += 1
        elif quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif pair == "//":
            break
        elif pair == "/*":
            state["comment"] = True
            index += 1
        elif char in "'\"`":
            quote = char
        else:
            out.append(char)
        index += 1
    return "".join(out)


def script_outline(text: str) -> list[str]:
    """Declarations at depth 0 (and methods at depth 1 inside classes), with a JSDoc line."""
    entries: list[str] = []
    state = {"comment": False}
    depth = 0
    class_depth: int | None = None
    doc = ""
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("/**") and not state["comment"]:
            doc = stripped.removeprefix("/**").removesuffix("*/").strip(" *")
        elif state["comment"] and stripped.startswith("*") and not doc:
            doc = stripped.strip(" */")
        was_comment = state["comment"]
        code = _strip_code(raw, state)
        if not was_comment and code.strip():
            shown = f"  /** {doc[:120]} */" if doc else ""
            if depth == 0 and _JS_DECL.match(stripped):
                entries.append(f"{number:>5}| {stripped[:200]}{shown}")
                if re.match(r"^(?:export\s+(?:default\s+)?)?(?:abstract\s+)?class\b", stripped):
                    class_depth = 1
            elif class_depth is not None and depth == class_depth \
                    and _JS_METHOD.match(stripped) \
                    and stripped.split("(")[0].split()[-1] not in _NOT_METHODS:
                entries.append(f"{number:>5}|     {stripped[:200]}{shown}")
            doc = ""
        depth += code.count("{") - code.count("}")
        depth = max(depth, 0)
        if class_depth is not None and depth < class_depth:
            class_depth = None
    return entries
