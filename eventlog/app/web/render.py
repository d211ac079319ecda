"""Message text for the web view: harness wrappers folded away, Markdown rendered safely.

``parts(text)`` splits a message into what its author wrote and what a harness wrapped
around it: a slash-command wrapper (``<command-name>``, ``<command-message>``,
``<command-args>``) becomes one ``command`` part (the command as typed); every other
harness block (a tag whose name holds ``-`` or ``_``, such as ``<system-reminder>``,
``<local-command-stdout>``, ``<environment_context>``, ``<user_instructions>``) becomes a
``harness`` part the page shows folded under its name. An unclosed tag stays text.

``markdown(text)`` renders what an author wrote as HTML with markdown-it-py (CommonMark,
tables, strikethrough) and **no raw HTML**: ``html`` is off, so ``<script>`` and every
other tag in the text come out as visible, escaped text; link targets go through
markdown-it's ``validateLink`` (no ``javascript:``, ``vbscript:``, ``file:``, ``data:``);
links get ``rel="nofollow noopener noreferrer"``; an image is shown as a link to it (the
page loads nothing from elsewhere, as its Content-Security-Policy also says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import markupsafe

#: Tags a harness writes: a name with "-" or "_" in it (what processors.extract.text also treats as injected).
_BLOCK = re.compile(r"<([a-z][a-z0-9]*[-_][a-z0-9_-]*)(?:\s[^<>]*)?>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMAND_TAGS = ("command-name", "command-message", "command-args")
MAX_MARKDOWN_CHARS = 100_000  # longer texts are shown as plain text (rendering stays cheap)


@dataclass(frozen=True)
class Part:
    """A piece of a message: ``text`` (the author's), ``command`` (a slash command) or ``harness`` (folded)."""

    kind: str
    text: str
    label: str = ""


def parts(text: str) -> list[Part]:
    """``text`` as the author's text, slash commands and harness blocks, in order (see the module docstring)."""
    out: list[Part] = []
    command: dict[str, str] = {}
    pos = 0

    def flush_command() -> None:
        if command:
            name = command.get("command-name", "").strip() or command.get("command-message", "").strip()
            typed = " ".join(x for x in (name, command.get("command-args", "").strip()) if x)
            out.append(Part("command", typed, "command"))
            command.clear()

    for m in _BLOCK.finditer(text):
        between = text[pos:m.start()]
        name = m.group(1).lower()
        if between.strip():
            flush_command()
            out.append(Part("text", between.strip("\n")))
        if name in _COMMAND_TAGS:
            if name in command:
                flush_command()
            command[name] = m.group(2)
        else:
            flush_command()
            out.append(Part("harness", m.group(2).strip("\n"), name.replace("_", " ").replace("-", " ")))
        pos = m.end()
    flush_command()
    rest = text[pos:]
    if rest.strip() or not out:
        out.append(Part("text", rest.strip("\n")))
    return out


@lru_cache(maxsize=1)
def _md() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return str(self.renderToken(tokens, idx, options, env))

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tok = tokens[idx]
        alt = self.renderInlineAsText(tok.children or [], options, env) or "image"
        src = markupsafe.escape(tok.attrGet("src") or "")
        return f'<a href="{src}" rel="nofollow noopener noreferrer" class="image-link">[image: {markupsafe.escape(alt)}]</a>'

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    return md


def markdown(text: str) -> markupsafe.Markup:
    """The author's text as safe HTML (Markdown, never raw HTML); very long texts as an escaped ``<pre>``."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return markupsafe.Markup(f'<pre class="plain">{markupsafe.escape(text)}</pre>')
    return markupsafe.Markup(_md().render(text))


__all__ = ["MAX_MARKDOWN_CHARS", "Part", "markdown", "parts"]
