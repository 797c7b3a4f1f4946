"""The documentation site's build hooks (mkdocs.yml `hooks:`): each page's generated parts are
made from the code as the page is read (scripts/docs_reference.py), and the CHANGELOG and
CONTRIBUTING files at the top of the repository are pages of the site without a copy in docs/."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from docs_reference import render  # noqa: E402 - after the path the build runs from

# Pages of the site whose text is a file at the top of the repository.
TOP_LEVEL_PAGES = {"contributing/changelog.md": "CHANGELOG.md",
                   "contributing/index.md": "CONTRIBUTING.md"}


def on_page_read_source(page: Any, config: Any) -> str | None:
    source = TOP_LEVEL_PAGES.get(page.file.src_uri)
    return (ROOT / source).read_text(encoding="utf-8") if source else None


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return render(markdown)
