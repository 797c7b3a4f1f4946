"""One TLS context per process for every GitHub client.

githubkit opens an httpx client for each request made outside `with github:` (the App's
clients are shared between threads, so they are never entered), and httpx builds a new SSL
context for each client it is not given one: loading the CA bundle again costs 30-60 ms of CPU
per GitHub call, most of what a worker spent on a step. The context is what httpx would build
for these clients (certifi's bundle; `trust_env=False`, as the clients are made), built once;
an SSL context is safe to share between threads and connections.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def shared_tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=True, trust_env=False)
