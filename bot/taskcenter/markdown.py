"""Job text fields (gate reasons and reports, batch summaries and reasons, notes) rendered from
Markdown to sanitized HTML for the task center's pages. The text is untrusted (it may quote a
model, an issue or a command's output), so: CommonMark with raw HTML disabled (any tag, comment
or entity-smuggled markup comes out escaped as text), links and images only to http, https or
relative addresses (every other scheme, `javascript:` and `data:` included, stays plain text),
images shown as their text (a page never loads what a record names), and every link opened
with `rel="nofollow noopener noreferrer"`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

MAX_MARKDOWN_CHARS = 100_000  # a longer field is cut (the record keeps it whole)
SAFE_SCHEMES = ("http", "https", "")  # "" is a relative link (#anchor, /path, path)


def safe_link(url: str) -> bool:
    """Whether a link may be followed from a page: http(s), or relative without a scheme."""
    cleaned = "".join(ch for ch in url if ch > " " and ch != "\x7f").lower()
    try:
        scheme = urlsplit(cleaned).scheme
    except ValueError:
        return False
    return scheme in SAFE_SCHEMES and not cleaned.startswith("//")


class _Renderer(RendererHTML):
    """Links get rel=nofollow noopener noreferrer; images become their alt text."""

    def link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict,
                  env: EnvType) -> str:
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict,
              env: EnvType) -> str:
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env)
        return str(Markup.escape(alt))


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False},
                    renderer_cls=_Renderer)
    md.validateLink = safe_link  # type: ignore[method-assign]
    return md


_MD = _parser()


def render_markdown(text: Any, *, inline: bool = False) -> Markup:
    """`text` as sanitized HTML, in paragraphs (or, `inline`, as a line's content: one-line
    fields such as a hint or a reason); empty for None."""
    if text is None:
        return Markup("")
    source = str(text)[:MAX_MARKDOWN_CHARS]
    html = _MD.renderInline(source) if inline else _MD.render(source)
    # S704: safe by construction: raw HTML is off, every text is escaped, links are checked
    return Markup(html)  # noqa: S704


def render_markdown_inline(text: Any) -> Markup:
    """A one-line field as sanitized inline HTML (no paragraph around it)."""
    return render_markdown(text, inline=True)
