"""The benchmark's tasks: small Python and JavaScript repositories generated here, each with
instructions, the repository's own tests as validation, and an executable done-criterion (a
check of the branch's files: what must be gone, what must be there). `solution` is what a
correct model writes; the scripted model (protocol mode) sends it."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PY_VALIDATE = "python -m unittest discover -s tests -q"
JS_VALIDATE = "node test/run.js"
Files = Mapping[str, str]


@dataclass(frozen=True)
class Task:
    name: str
    language: str
    instructions: str
    files: Files  # the repository (batch files, the facts files, the tests)
    solution: Files  # the batch files as a correct edit leaves them
    find: tuple[str, ...] = ()
    done: Callable[[Files], bool] = field(default=lambda files: True)

    @property
    def batch(self) -> tuple[str, ...]:
        return tuple(sorted(self.solution))

    @property
    def validate(self) -> str:
        return PY_VALIDATE if self.language == "python" else JS_VALIDATE


def _none_match(pattern: str) -> Callable[[Files], bool]:
    return lambda files: not any(re.search(pattern, text) for text in files.values())


def _all(*checks: Callable[[Files], bool]) -> Callable[[Files], bool]:
    return lambda files: all(check(files) for check in checks)


def _has(pattern: str) -> Callable[[Files], bool]:
    return lambda files: all(re.search(pattern, text) for text in files.values())


def _annotated(files: Files) -> bool:
    for text in files.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and (node.returns is None or any(
                    a.annotation is None for a in node.args.args if a.arg != "self")):
                return False
    return True


def _py_test(imports: str, body: str) -> str:
    return (f"import unittest\n\n{imports}\n\n\nclass Checks(unittest.TestCase):\n"
            + "".join(f"    def test_{n}(self):\n        {line}\n\n"
                      for n, line in enumerate(body.strip().splitlines()))
            + 'if __name__ == "__main__":\n    unittest.main()\n')


def _js_test(lines: str) -> str:
    return ('const assert = require("assert");\n' + lines.strip() + '\nconsole.log("ok");\n')


UTILS = '''"""Loading helpers."""


def load_data(name):
    return f"data:{name}"


def fetch_data(name):
    """Deprecated: use load_data()."""
    return load_data(name)
'''
LOG_SETUP = '''"""The logger every module uses: `log = get_logger(__name__)`."""
import logging


def get_logger(name):
    return logging.getLogger(name)
'''
API = '''"""The HTTP client. `get(url)` is deprecated: call `request("GET", url, timeout=...)`;
every request needs a timeout in seconds (use DEFAULT_TIMEOUT)."""

DEFAULT_TIMEOUT = 10


def request(method, url, *, timeout):
    return f"{method} {url} ({timeout}s)"


def get(url):
    return request("GET", url, timeout=DEFAULT_TIMEOUT)
'''


def python_tasks() -> list[Task]:
    tasks = []
    users = {"app/users.py": ('from app import utils\n\n\ndef user(name):\n'
                              '    return utils.fetch_data(name)\n'),
             "app/orders.py": ('from app import utils\n\n\ndef order(n):\n'
                               '    return utils.fetch_data(f"order-{n}")\n')}
    tasks.append(Task(
        "py_rename_across_modules", "python",
        "Call utils.load_data() instead of the deprecated utils.fetch_data().",
        {"app/__init__.py": "", "app/utils.py": UTILS, **users, "tests/__init__.py": "",
         "tests/test_app.py": _py_test("from app.users import user\nfrom app.orders import order",
                                       'self.assertEqual(user("a"), "data:a")\n'
                                       'self.assertEqual(order(1), "data:order-1")')},
        {p: t.replace("fetch_data", "load_data") for p, t in users.items()},
        find=(r"fetch_data\(",), done=_none_match(r"fetch_data")))
    report = ('import sys\n\n\ndef check(values):\n    if not values:\n'
              '        print("no values given", file=sys.stderr)\n        return False\n'
              '    print(f"checked {len(values)} values")\n    return True\n')
    tasks.append(Task(
        "py_logger_keeps_levels", "python",
        "Replace print() with the module logger from app/logs.py (log = get_logger(__name__)); "
        "prints to stderr become log.error, the others log.info.",
        {"app/__init__.py": "", "app/logs.py": LOG_SETUP, "app/report.py": report,
         "tests/__init__.py": "",
         "tests/test_report.py": _py_test("from app.report import check",
                                          "self.assertFalse(check([]))\n"
                                          "self.assertTrue(check([1, 2]))")},
        {"app/report.py": ('from app.logs import get_logger\n\nlog = get_logger(__name__)\n\n\n'
                           'def check(values):\n    if not values:\n'
                           '        log.error("no values given")\n        return False\n'
                           '    log.info(f"checked {len(values)} values")\n    return True\n')},
        find=(r"\bprint\(",),
        done=_all(_none_match(r"\bprint\("), _has(r"log\.error\("), _has(r"log\.info\("))))
    fetchers = {"app/weather.py": ('from app import api\n\n\ndef weather(city):\n'
                                   '    return api.get(f"/weather/{city}")\n'),
                "app/news.py": ('from app import api\n\n\ndef news():\n'
                                '    return api.get("/news")\n')}
    tasks.append(Task(
        "py_api_migration_needs_second_file", "python",
        "Move the callers off the deprecated api.get(); app/api.py says what replaces it.",
        {"app/__init__.py": "", "app/api.py": API, **fetchers, "tests/__init__.py": "",
         "tests/test_api.py": _py_test("from app.weather import weather\nfrom app.news import news",
                                       'self.assertEqual(weather("oslo"), "GET /weather/oslo (10s)")\n'
                                       'self.assertEqual(news(), "GET /news (10s)")')},
        {p: t.replace('api.get(f"/weather/{city}")',
                      'api.request("GET", f"/weather/{city}", timeout=api.DEFAULT_TIMEOUT)')
         .replace('api.get("/news")', 'api.request("GET", "/news", timeout=api.DEFAULT_TIMEOUT)')
         for p, t in fetchers.items()},
        find=(r"api\.get\(",), done=_all(_none_match(r"api\.get\("), _has(r"timeout="))))
    shapes = ('def area(width, height):\n    return width * height\n\n\n'
              'def label(name, count):\n    return f"{name}: {count}"\n')
    tasks.append(Task(
        "py_type_annotations", "python",
        "Add type annotations to every parameter and return value (ints and strs).",
        {"app/__init__.py": "", "app/shapes.py": shapes, "tests/__init__.py": "",
         "tests/test_shapes.py": _py_test("from app.shapes import area, label",
                                          "self.assertEqual(area(2, 3), 6)\n"
                                          'self.assertEqual(label("a", 2), "a: 2")')},
        {"app/shapes.py": ('def area(width: int, height: int) -> int:\n    return width * height'
                           '\n\n\ndef label(name: str, count: int) -> str:\n'
                           '    return f"{name}: {count}"\n')},
        done=_annotated))
    clock = ('from datetime import datetime\n\n\ndef stamp():\n'
             '    return datetime.utcnow().year > 2000\n')
    tasks.append(Task(
        "py_utcnow_deprecation", "python",
        "Replace the deprecated datetime.utcnow() with datetime.now(timezone.utc).",
        {"app/__init__.py": "", "app/clock.py": clock, "tests/__init__.py": "",
         "tests/test_clock.py": _py_test("from app.clock import stamp", "self.assertTrue(stamp())")},
        {"app/clock.py": ('from datetime import datetime, timezone\n\n\ndef stamp():\n'
                          '    return datetime.now(timezone.utc).year > 2000\n')},
        find=(r"utcnow\(",), done=_none_match(r"utcnow")))
    greet = 'def greet(name, n):\n    return "hello %s, you have %d messages" % (name, n)\n'
    tasks.append(Task(
        "py_percent_to_fstring", "python", "Turn %-formatting into f-strings.",
        {"app/__init__.py": "", "app/greet.py": greet, "tests/__init__.py": "",
         "tests/test_greet.py": _py_test("from app.greet import greet",
                                         'self.assertEqual(greet("ann", 2), '
                                         '"hello ann, you have 2 messages")')},
        {"app/greet.py": 'def greet(name, n):\n    return f"hello {name}, you have {n} messages"\n'},
        find=(r'" % ',), done=_none_match(r'" % ')))
    opt = ('from typing import Optional\n\n\ndef first(values: list[int]) -> Optional[int]:\n'
           '    return values[0] if values else None\n')
    tasks.append(Task(
        "py_optional_to_union", "python",
        "Write Optional[X] as X | None and drop the unused typing import.",
        {"app/__init__.py": "", "app/first.py": opt, "tests/__init__.py": "",
         "tests/test_first.py": _py_test("from app.first import first",
                                         "self.assertIsNone(first([]))\n"
                                         "self.assertEqual(first([3]), 3)")},
        {"app/first.py": ('def first(values: list[int]) -> int | None:\n'
                          '    return values[0] if values else None\n')},
        find=(r"Optional\[",), done=_none_match(r"Optional")))
    return tasks


def javascript_tasks() -> list[Task]:
    tasks = []
    mathjs = ("var factor = 2;\n"
              "function double(x) {\n"
              "  var result = x * factor;\n"
              "  return result;\n"
              "}\n"
              "module.exports = { double };\n")
    tasks.append(Task(
        "js_var_to_const", "javascript", "Replace var with const (let where reassigned).",
        {"src/math.js": mathjs, "test/run.js": _js_test(
            'const { double } = require("../src/math");\nassert.strictEqual(double(4), 8);')},
        {"src/math.js": mathjs.replace("var ", "const ")},
        find=(r"\bvar\s",), done=_none_match(r"\bvar\s")))
    fmt = ('function formatValue(v) {\n'
           '  return `[${v}]`;\n'
           '}\n'
           'function oldFormat(v) {\n'
           '  return formatValue(v);\n'
           '}\n'
           'module.exports = { formatValue, oldFormat };\n')
    views = {"src/list.js": ('const { oldFormat } = require("./format");\n'
                             'module.exports = (xs) => xs.map(oldFormat).join(",");\n'),
             "src/item.js": ('const { oldFormat } = require("./format");\n'
                             'module.exports = (x) => "item " + oldFormat(x);\n')}
    tasks.append(Task(
        "js_rename_across_modules", "javascript",
        "Use formatValue instead of the deprecated oldFormat (src/format.js).",
        {"src/format.js": fmt, **views, "test/run.js": _js_test(
            'assert.strictEqual(require("../src/list")([1, 2]), "[1],[2]");\n'
            'assert.strictEqual(require("../src/item")(3), "item [3]");')},
        {p: t.replace("oldFormat", "formatValue") for p, t in views.items()},
        find=(r"oldFormat",), done=_none_match(r"oldFormat")))
    logger = 'module.exports = { info: () => {}, error: () => {} };\n'
    job = ('function run(items) {\n'
           '  if (!items.length) {\n'
           '    console.error("nothing to do");\n'
           '    return 0;\n'
           '  }\n'
           '  console.log(`ran ${items.length}`);\n'
           '  return items.length;\n'
           '}\n'
           'module.exports = { run };\n')
    tasks.append(Task(
        "js_logger_keeps_levels", "javascript",
        "Use the logger from src/logger.js (const logger = require(\"./logger\")) instead of "
        "console: console.error becomes logger.error, console.log logger.info.",
        {"src/logger.js": logger, "src/job.js": job, "test/run.js": _js_test(
            'const { run } = require("../src/job");\nassert.strictEqual(run([]), 0);\n'
            'assert.strictEqual(run([1]), 1);')},
        {"src/job.js": 'const logger = require("./logger");\n'
         + job.replace("console.error", "logger.error").replace("console.log", "logger.info")},
        find=(r"console\.",),
        done=_all(_none_match(r"console\."), _has(r"logger\.error"), _has(r"logger\.info"))))
    buf = ('function encode(text) {\n'
           '  return new Buffer(text).toString("base64");\n'
           '}\n'
           'module.exports = { encode };\n')
    tasks.append(Task(
        "js_buffer_deprecation", "javascript",
        "Replace the deprecated new Buffer(x) with Buffer.from(x).",
        {"src/encode.js": buf, "test/run.js": _js_test(
            'assert.strictEqual(require("../src/encode").encode("hi"), "aGk=");')},
        {"src/encode.js": buf.replace("new Buffer(text)", "Buffer.from(text)")},
        find=(r"new Buffer\(",), done=_none_match(r"new Buffer\(")))
    eq = ('function same(a, b) {\n'
          '  return a == b;\n'
          '}\n'
          'function differ(a, b) {\n'
          '  return a != b;\n'
          '}\n'
          'module.exports = { same, differ };\n')
    tasks.append(Task(
        "js_strict_equality", "javascript", "Use === and !== instead of == and !=.",
        {"src/eq.js": eq, "test/run.js": _js_test(
            'const { same, differ } = require("../src/eq");\nassert.strictEqual(same(1, 1), true);\n'
            'assert.strictEqual(differ(1, 2), true);')},
        {"src/eq.js": eq.replace("a == b", "a === b").replace("a != b", "a !== b")},
        find=(r"[^=!]==[^=]|!=[^=]",), done=_none_match(r"[^=!]==[^=]|!=[^=]")))
    return tasks


TASKS: list[Task] = python_tasks() + javascript_tasks()
