"""The project's documentation as the tests read it: the README and the site's pages (docs/)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """One page of the site, by its path under docs/ (`guides/llm.md`)."""
    return (DOCS / name).read_text(encoding="utf-8")


def documentation() -> str:
    """The README and every page of the site (the change notes under docs/agent-changes/ are
    a job's output, not documentation)."""
    pages = [path for path in sorted(DOCS.rglob("*.md")) if "agent-changes" not in path.parts]
    return "\n".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *pages])
