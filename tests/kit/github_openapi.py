"""GitHub's own REST API description as the fake's referee: every request body the fake receives
and every JSON answer it gives are checked against the pinned npm `@octokit/openapi` description
(api.github.com, or GHES 3.17 for a fake in enterprise mode).

The description is read once per process; an operation's validators are compiled on first use and
kept. `check_request` and `check_response` return the problems found as readable lines (empty:
the call is one GitHub documents); FakeGitHub records them, and tests/conftest.py fails the test
that made the call at its teardown.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from jsonschema import Draft4Validator, validators
from jsonschema.exceptions import best_match
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from tests.kit.npm_fixtures import OPENAPI, OPENAPI_VERSION, package_dir

DESCRIPTION_FILES = {False: "api.github.com.json", True: "ghes-3.17.json"}
GREEDY = frozenset({"{path}", "{ref}", "{branch}"})  # last parameters that may hold slashes
MAX_REPORTED = 3  # schema errors quoted per mismatch
_LOCK = threading.Lock()


def _nullable(keyword: str) -> Any:
    """`keyword` letting null through where the schema says `nullable: true`: GitHub's description
    puts `nullable` beside an enum without null (`state_reason`) or an `anyOf` (a commit's author),
    and GitHub sends null there."""
    # anyOf/oneOf as JSON Schema has them: openapi-schema-validator lets a `discriminator` pick the
    # alternative, which fails where GitHub's description lists a list among them (GET /contents).
    check = (Draft4Validator if keyword in ("anyOf", "oneOf") else OAS30Validator).VALIDATORS[keyword]

    def nullable_keyword(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Any:
        if instance is None and schema.get("nullable") is True:
            return
        yield from check(validator, value, instance, schema)

    return nullable_keyword


GitHubSchemaValidator = validators.extend(
    OAS30Validator, {keyword: _nullable(keyword) for keyword in ("enum", "anyOf", "oneOf", "allOf")})


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


@dataclass
class Operation:
    """One documented (method, path template): its JSON Pointer in the document and its validators."""

    method: str
    template: str
    node: dict[str, Any]
    pointer: str
    description: Description
    _validators: dict[str, Any] = field(default_factory=dict)

    def _validator(self, key: str, pointer: str) -> Any:
        with _LOCK:
            if key not in self._validators:
                schema = {"$ref": f"{self.description.uri}#{pointer}"}
                self._validators[key] = GitHubSchemaValidator(schema, registry=self.description.registry)
            return self._validators[key]

    def request_problems(self, body: Any) -> list[str]:
        request = self.description.resolve(self.node.get("requestBody"), f"{self.pointer}/requestBody")
        if request is None:
            return [] if body is None else ["GitHub documents no request body for this operation"]
        json_body = (request[0].get("content") or {}).get("application/json")
        if json_body is None:
            return []
        if body is None:
            return ["the request has no body, but GitHub requires one"] if request[0].get("required") else []
        pointer = f"{request[1]}/content/application~1json/schema"
        return _errors(self._validator("request", pointer), body)

    def response_problems(self, status: int, body: Any) -> list[str]:
        responses = self.node.get("responses") or {}
        key = str(status) if str(status) in responses else "default" if "default" in responses else None
        if key is None:
            if status >= 300:
                return []  # GitHub may fail anywhere; only documented errors are checked
            return [f"GitHub documents no {status} answer for this operation "
                    f"(documented: {', '.join(sorted(responses))})"]
        response = self.description.resolve(responses[key],
                                            f"{self.pointer}/responses/{_escape(key)}")
        assert response is not None
        content = (response[0].get("content") or {}).get("application/json")
        if content is None or "schema" not in content:
            return []
        pointer = f"{response[1]}/content/application~1json/schema"
        return _errors(self._validator(f"response {key}", pointer), body)


def _errors(validator: Any, instance: Any) -> list[str]:
    found = []
    for error in validator.iter_errors(instance):
        where = "/".join(str(part) for part in error.absolute_path) or "(the whole body)"
        message = error.message if len(error.message) <= 300 else \
            f"fails {error.validator} {json.dumps(error.validator_value)[:200]}"
        if error.context:  # oneOf/anyOf: the alternative that came closest, and why it failed
            closest = best_match(error.context)
            inner = "/".join(str(part) for part in closest.absolute_path) or "(the whole body)"
            message += f"; closest: at {inner}: {closest.message[:200]}"
        found.append(f"at {where}: {message}")
        if len(found) >= MAX_REPORTED:
            break
    return found


class Description:
    """One OpenAPI document: operations found by method and concrete path, refs resolved."""

    def __init__(self, document: dict[str, Any], uri: str) -> None:
        self.document, self.uri = document, uri
        self.registry: Registry[Any] = Registry().with_resource(
            uri, Resource.from_contents(document, default_specification=DRAFT4))
        # A trie of path segments: literal children first, then the one parameter child "{}".
        self._trie: dict[str, Any] = {}
        for template, item in document["paths"].items():
            node = self._trie
            for segment in template.strip("/").split("/"):
                node = node.setdefault("{}" if segment.startswith("{") else segment, {})
            node.setdefault("", {})[template] = item
        self._operations: dict[tuple[str, str], Operation] = {}

    def resolve(self, node: Any, pointer: str = "") -> tuple[dict[str, Any], str] | None:
        """`node` with its local `$ref`s followed, and the pointer where it lives."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            pointer = node["$ref"].removeprefix("#")
            node = self.document
            for part in pointer.strip("/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return (node, pointer) if isinstance(node, dict) else None

    def operation(self, method: str, path: str) -> Operation | None:
        segments = path.strip("/").split("/")
        for template, item in self._match(self._trie, segments):
            if method.lower() in item:
                key = (method.lower(), template)
                if key not in self._operations:
                    pointer = f"/paths/{_escape(template)}/{method.lower()}"
                    self._operations[key] = Operation(method.upper(), template, item[method.lower()],
                                                      pointer, self)
                return self._operations[key]
        return None

    def knows_path(self, path: str) -> bool:
        return any(True for _ in self._match(self._trie, path.strip("/").split("/")))

    def _match(self, node: dict[str, Any], segments: list[str]) -> Any:
        if not segments:
            yield from (node.get("") or {}).items()
            return
        head, rest = segments[0], segments[1:]
        if head in node:
            yield from self._match(node[head], rest)
        if "{}" in node:
            yield from self._match(node["{}"], rest)
            # A last parameter may hold slashes (a file path, a ref or branch name).
            tail = node["{}"].get("") or {}
            if rest:
                yield from ((t, item) for t, item in tail.items() if t.rsplit("/", 1)[-1] in GREEDY)


@cache
def description(enterprise: bool = False) -> Description:
    """The pinned description (read once per process)."""
    path = package_dir(OPENAPI, OPENAPI_VERSION) / "generated" / DESCRIPTION_FILES[enterprise]
    document = json.loads(path.read_text())
    return Description(document, f"urn:github-openapi:{DESCRIPTION_FILES[enterprise]}")


def _api_path(path: str) -> str | None:
    """The path as the description names it: `/repositories/ID/...` (the form of GitHub's Link
    headers) as `/repos/{owner}/{repo}/...`; None for what is not the REST API (GHES web paths the
    fake serves as `/-...`, the fake's log download links)."""
    if path.startswith(("/-", "/_fake/")):
        return None
    if match := re.match(r"/repositories/\d+(/.*)?$", path):
        return "/repos/-/-" + (match[1] or "")
    return path


def check_request(enterprise: bool, method: str, path: str, body: Any) -> list[str]:
    """Problems with a request GitHub would refuse (an unknown operation or a body off its schema)."""
    if (api_path := _api_path(path)) is None:
        return []
    path, spec = api_path, description(enterprise)
    operation = spec.operation(method, path)
    if operation is None:
        known = spec.knows_path(path)
        return [f"{method} {path}: " + ("GitHub documents other methods on this path, not this one" if known
                                        else "GitHub documents no such path")]
    return [f"{method} {operation.template} request {line}" for line in operation.request_problems(body)]


def check_response(enterprise: bool, method: str, path: str, status: int, body: Any) -> list[str]:
    """Problems with an answer the fake gave (a status or a JSON body GitHub does not document)."""
    api_path = _api_path(path)
    operation = None if api_path is None else description(enterprise).operation(method, api_path)
    if operation is None or isinstance(body, bytes):
        return []
    return [f"{method} {operation.template} answer {status} {line}"
            for line in operation.response_problems(status, body)]
