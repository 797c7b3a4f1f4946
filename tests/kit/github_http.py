"""The loopback HTTP side of the fake GitHub: the request handler that reads each request (chunked
bodies included) and hands it to FakeGitHub.handle, answering 500 with the reason when the fake
itself fails, and closing the connection unanswered when a test injected a hang-up (HANG_UP)."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from tests.kit.github_injection import HANG_UP

if TYPE_CHECKING:
    from tests.kit.github import FakeGitHub


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    answered = 0  # requests answered on this connection

    def _serve(self) -> None:
        fake: FakeGitHub = self.server.fake  # type: ignore[attr-defined]
        headers = {k.lower(): v for k, v in self.headers.items()}
        body = read_body(self, headers)
        try:
            status, out_headers, data = fake.handle(self.command, self.path, headers, body)
        except Exception as error:  # a bug in the fake: answer 500 with the reason rather than hang up
            status, out_headers = 500, {"Content-Type": "application/json"}
            data = json.dumps({"message": f"fake GitHub error: {error!r}"}).encode()
        if status == HANG_UP:  # an injected fault: no answer, the connection dropped
            self.close_connection = True
            return
        self.send_response(status)
        for key, value in out_headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.answered += 1

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        return  # the requests served are in FakeGitHub.requests

    def log_error(self, format: str, *args: Any) -> None:
        """A connection the fake hangs up on without answering (no request within `timeout`) or
        answers with a protocol error is said on stderr, beside the failing test: a client's
        "server disconnected" then comes with its reason. A kept-alive connection closed after
        `timeout` idle, as GitHub's servers close them too, is not an error."""
        if self.answered and format.startswith("Request timed out"):
            return
        print(f"fake GitHub, connection from {self.client_address}: {format % args}",
              file=sys.stderr, flush=True)


def read_body(handler: BaseHTTPRequestHandler, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(headers.get("content-length") or 0)
    return handler.rfile.read(length) if length else b""
