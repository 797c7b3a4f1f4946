"""One TLS context for the tests' HTTP clients of their own loopback servers (the app under
uvicorn, `stepwise serve`, the fake GitHub): httpx builds a new one for every client it is not
given one, loading the CA bundle each time (~17 ms), and a story opens a client per delivery."""

from __future__ import annotations

import ssl

TLS = ssl.create_default_context()
