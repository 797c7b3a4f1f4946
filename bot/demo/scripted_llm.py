"""A scripted OpenAI-compatible server on loopback, for the llm demo and the tests.

It answers `POST /v1/chat/completions` from a script (one reply per request, in order; a reply
may be a function of the request), records every request with its headers, and reports usage
tokens and the finish reason it is told to (`length` simulates a cut-off answer). A reply may
carry `tool_calls` (name and arguments), answered as OpenAI function calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    """One scripted answer; token counts default to a 4-characters-a-token estimate."""

    text: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    status: int = 200  # anything else answers with an OpenAI-style error body
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()  # (function name, arguments)


def call(name: str, **arguments: Any) -> Reply:
    """A reply holding one tool call (the tests' shorthand)."""
    return Reply("", tool_calls=((name, arguments),))


Step = Reply | Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages", []))

    @property
    def user_text(self) -> str:
        return "\n".join(m["content"] for m in self.messages if m["role"] == "user")

    @property
    def all_text(self) -> str:
        """Every message's text, tool results and tool-call arguments included."""
        parts: list[str] = []
        for message in self.body.get("messages", []):
            parts.append(str(message.get("content") or ""))
            for tool_call in message.get("tool_calls") or []:
                parts.append(str(tool_call.get("function", {}).get("arguments", "")))
        return "\n".join(parts)


@dataclass
class ScriptedServer:
    """Start with `start()` (or as a context manager); `url` is the base URL for the client."""

    script: list[Step] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    model: str = "scripted-model"
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def add(self, *steps: Step | Iterable[Step]) -> None:
        for step in steps:
            if isinstance(step, Reply) or callable(step):
                self.script.append(step)
            else:
                self.script.extend(step)

    @property
    def remaining(self) -> int:
        return len(self.script)

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(Recorded(body, headers))
            step = self.script.pop(0) if self.script else None
        if step is None:
            return 500, {"error": {"message": "the script has no reply left", "type": "server_error"}}
        reply = step if isinstance(step, Reply) else step(body)
        if reply.status != 200:
            return reply.status, {"error": {"message": reply.text, "type": "scripted_error"}}
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt // 4
        completion = reply.completion_tokens if reply.completion_tokens is not None \
            else len(reply.text) // 4
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        finish = reply.finish_reason
        if reply.tool_calls:
            count = len(self.requests)
            message["tool_calls"] = [
                {"id": f"call_{count}_{index}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for index, (name, arguments) in enumerate(reply.tool_calls)]
            finish = "tool_calls" if finish == "stop" else finish
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model") or self.model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                      "total_tokens": prompt_tokens + completion},
        }

    def start(self) -> ScriptedServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != CHAT_PATH:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                headers = {key.lower(): value for key, value in self.headers.items()}
                status, payload = owner.answer(json.loads(raw or b"{}"), headers)
                self._send(status, payload)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": owner.model,
                                                             "object": "model"}]})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: the demo prints its own story

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True, name="scripted-llm").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
