"""Harness text: what an agent harness writes into a conversation as "user" turns, not the person.

One place says what counts, so the session titles (``projections.sessions``), the fact
extractor (``processors.extract.text``) and the Codex parser (``eventlog.ingest.codex``)
agree:

* ``META_FLAGS``: the source's own marks on a message (Claude Code's ``isMeta``,
  ``isCompactSummary``, ``isApiErrorMessage``; the Codex parser sets ``isMeta`` too);
  ``subtype: "local_command"`` is a slash command's bookkeeping;
* ``HARNESS_PREFIXES``: how harness turns start (interrupt markers, the local-command
  caveat, the continuation and compaction prompts...), compared case-folded;
* ``CODEX_TURNS``: the turns Codex injects (``<environment_context>``, ``AGENTS.md``...);
* injected blocks: a tag whose name holds ``-`` or ``_`` (``<system-reminder>``,
  ``<command-name>``, ``<local-command-stdout>``, ``<environment_context>``) or a memory /
  context tag, with its content (``drop_blocks``); ``<command-args>`` is what the user typed.

``request_title`` turns one message into what a session list may show as its title.
"""

from __future__ import annotations

import re
from typing import Any

#: Harness text that arrives as a user message but was not typed by the user (case-folded starts).
HARNESS_PREFIXES = (
    "[request interrupted",
    "caveat: the messages below were generated",
    "[scheduled task]",
    "this session is being continued from a previous conversation",
    "your task is to create a detailed summary of the conversation",
    "read the output file to retrieve the result",
)
#: User turns Codex writes itself: how their text starts -> the name its parser stores in ``extra["harness"]``.
CODEX_TURNS = (("<environment_context>", "environment_context"), ("<user_instructions>", "user_instructions"),
               ("# AGENTS.md instructions for ", "agents_md"), ("<turn_aborted>", "turn_aborted"))
#: A message's extra fields that say the harness wrote it.
META_FLAGS = ("isMeta", "isCompactSummary", "isApiErrorMessage")

COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL | re.IGNORECASE)
COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>", re.IGNORECASE)
INJECTED_OPEN = re.compile(r"<([a-z][a-z0-9]*[-_][a-z0-9_-]*|memory|memories|context|system|instructions?)\b[^<>]*>",
                           re.IGNORECASE)
_TAG = re.compile(r"</?[a-z][a-z0-9_-]*\b[^>]*>", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CODEX_STARTS = tuple(p.casefold() for p, _ in CODEX_TURNS)
_HEAD_CHARS = max(map(len, HARNESS_PREFIXES + _CODEX_STARTS))
_LEADING_SPACE = re.compile(r"\s*")


def drop_blocks(text: str) -> str:
    """``text`` without injected blocks (an opening tag, its content and the closing tag; an
    unclosed one takes the rest of the text). Linear: each closing tag is searched once."""
    out: list[str] = []
    pos = 0
    while True:
        m = INJECTED_OPEN.search(text, pos)
        if not m:
            out.append(text[pos:])
            break
        out.append(text[pos:m.start()])
        c = re.compile(rf"</{re.escape(m.group(1))}\s*>", re.IGNORECASE).search(text, m.end())
        if not c:
            break  # unclosed: the rest is injected
        out.append("\n")
        pos = c.end()
    return "".join(out)


def flagged(extra: dict[str, Any]) -> bool:
    """Whether the source marked the message as written by the harness (``META_FLAGS``, a local command)."""
    if not extra:
        return False  # most messages: no extra fields at all
    for flag in META_FLAGS:
        if extra.get(flag) is True:
            return True
    return extra.get("subtype") == "local_command"


def starts_as_harness(text: str) -> bool:
    """Whether ``text`` starts the way a harness turn does (``HARNESS_PREFIXES``, ``CODEX_TURNS``).

    Only the start is case-folded (folding maps each character on its own, to at least one), not a
    long message whole: a replay asks this of every user message."""
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]  # (always matches)
    head = text[start : start + _HEAD_CHARS].casefold()
    return head.startswith(HARNESS_PREFIXES) or head.startswith(_CODEX_STARTS)


def request_title(role: str, content: str, extra: dict[str, Any], *, commands_only: bool = False) -> tuple[str, str]:
    """What a user message asks, as a title: ``(kind, text)``, whitespace folded.

    ``kind`` is ``"request"`` for text the person typed (a slash command with arguments
    gives ``"/name arguments"``), ``"command"`` for a bare slash command (``/init``,
    ``/clear``: a title only when nothing better exists), ``""`` for harness text
    (flagged, starting like a harness turn, or nothing left once injected blocks and tags
    are removed) and for every other role. ``commands_only``: a caller that has its request
    title already; a message that is no slash command gives ``("", "")`` without the work
    of taking its own text out of injected blocks and tags.
    """
    if role != "user" or (commands_only and "<" not in content):
        return "", ""  # a command is a <command-name> tag (an ANSI escape holds no "<", so removing them adds none)
    if flagged(extra) or starts_as_harness(content):
        return "", ""
    text = _ANSI.sub("", content)
    name = COMMAND_NAME.search(text)
    if name is not None:
        args = " ".join(" ".join(m.group(1).split()) for m in COMMAND_ARGS.finditer(text)).strip()
        command = name.group(1) if name.group(1).startswith("/") else "/" + name.group(1)
        return ("request", f"{command} {args}") if args else ("command", command)
    if commands_only:
        return "", ""
    own = " ".join(_TAG.sub(" ", drop_blocks(text)).split())
    return ("request", own) if own else ("", "")
