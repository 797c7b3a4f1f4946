"""Fixtures for the llm tests: a scripted OpenAI-compatible server on loopback per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.demo.scripted_llm import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted
