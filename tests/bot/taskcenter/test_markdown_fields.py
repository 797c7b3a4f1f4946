"""The task center renders job text (gate reasons and reports, batch summaries and reasons,
standing instructions) as sanitized Markdown: emphasis, code and http(s) or relative links
work; script tags, HTML comments, event handlers, javascript:/data:/vbscript: links and
images never reach the page as markup. Served by the app over a real Redis."""

from __future__ import annotations

import re

import pytest
import redis
from fastapi.testclient import TestClient

from bot.plumbing.redis_store import RedisStore
from bot.taskcenter.markdown import render_markdown, safe_link
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.kernel.job import OpenGate
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.taskcenter.conftest import START
from tests.kit.records import make_batch, make_job

HOSTILE = [
    '<script>alert("x")</script>',
    "<!-- hidden --><b onmouseover=alert(1)>hover</b>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](java\tscript:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "<javascript:alert(1)>",
    "[data](data:text/html;base64,PHNjcmlwdD4=)",
    "[vb](vbscript:msgbox(1))",
    "[proto](//evil.example/x)",
    "![pixel](https://tracker.example/p.png)",
    '<a href="https://ok.example" onclick="alert(1)">a</a>',
    "<iframe src=https://evil.example></iframe>",
]


def markup_tags(html: str) -> list[str]:
    """The tags of an HTML fragment (what a browser would build elements from)."""
    return re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>", html)


@pytest.mark.parametrize("inline", [False, True])
@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_markdown_renders_inert(text: str, inline: bool) -> None:
    html = str(render_markdown(f"Look: {text} **done**", inline=inline))
    for tag, attributes in markup_tags(html):
        assert tag in ("p", "strong", "a", "code", "em"), (tag, html)
        assert not re.search(r"\bon\w+\s*=", attributes), html
        if tag == "a":
            href = re.search(r'href="([^"]*)"', attributes)
            assert href is not None and href.group(1).startswith(("https://", "http://", "/")), html
    assert "<!--" not in html and "<script" not in html.lower() and "<img" not in html.lower()
    assert "<strong>done</strong>" in html


def test_plain_markdown_still_reads_as_markdown() -> None:
    html = str(render_markdown("Run `pytest -q`; see [the log](https://ci.example/run/1) and "
                               "[batch 2](#batch-2)."))
    assert "<code>pytest -q</code>" in html
    assert '<a href="https://ci.example/run/1" rel="nofollow noopener noreferrer">the log</a>' \
        in html
    assert '<a href="#batch-2" rel="nofollow noopener noreferrer">batch 2</a>' in html
    assert [safe_link(u) for u in ("https://a.example", "/jobs/1", "mailto:x@y.z",
                                   " javascript:x", "//evil.example")] == \
        [True, True, False, False, False]


def test_the_job_page_renders_each_text_field_sanitized(logged_in: TestClient,
                                                         connection: redis.Redis) -> None:
    evil = " ".join(HOSTILE)
    batch = make_batch(1, status=BatchStatus.FAILED, summary=f"Moved **callers**. {evil}")
    skipped = make_batch(2, status=BatchStatus.SKIPPED, reason=f"needs `a human` {evil}")
    job = make_job(batches=[batch, skipped], status=JobStatus.AWAITING_HUMAN, number=61)
    job.created_at = job.updated_at = START
    job.instructions = [f"keep *public* names {evil}"]
    job.gate = OpenGate(
        id="failure-1", kind=Gate.FAILURE, opened_at=START, batch=1,
        reason=f"batch 1 failed **twice** {evil}",
        report=ErrorInfo(code="validation_failed", retry_class=RetryClass.NEEDS_HUMAN,
                         message=f"`pytest` failed {evil}",
                         hint=f"see [the run](https://ci.example/1) {evil}"))
    job = RedisStore(connection).save(job)
    page = logged_in.get(f"/jobs/{job.id}").text
    assert "<strong>twice</strong>" in page and "<strong>callers</strong>" in page
    assert "<em>public</em>" in page and "<code>a human</code>" in page
    assert '<a href="https://ci.example/1" rel="nofollow noopener noreferrer">the run</a>' in page
    for tag, attributes in markup_tags(page):
        assert tag.lower() not in ("iframe", "img") or "evil" not in attributes, tag
        assert not re.search(r"\bon(error|click|mouseover)\s*=", attributes), (tag, attributes)
        assert not re.search(r"(href|src)\s*=\s*[\"']?\s*(javascript|data|vbscript):",
                             attributes, re.IGNORECASE), (tag, attributes)
    assert "<!-- hidden" not in page and '<script>alert("x")' not in page
    assert not [tag for tag, _ in markup_tags(page) if tag.lower() in ("img", "iframe")]
    scripts = [attributes for tag, attributes in markup_tags(page) if tag.lower() == "script"]
    assert all(re.search(r'src="/static/', attributes) for attributes in scripts), scripts
