"""The memory an agent should start with in a directory: project facts, then facts about the user.

``memory_context(home, cwd)`` reads the MEMORY.md files (the projection files: what a user
sees and edits) and renders them as one block of text within a byte budget, for a Claude
Code ``SessionStart`` hook's ``additionalContext`` or any harness that injects context.
It never opens the log, so it costs a few file reads whatever the size of the workspace.

* The project is the registered-or-not project whose file exists for ``cwd`` or its
  closest parent directory (``memory/projects/<safe name>/MEMORY.md``; a session started in
  ``repo/src`` gets ``repo``'s facts).
* Project facts come first, then the global file's (facts about the user), each in file
  order; a fact that does not fit the budget is left out whole, with a last line saying how
  many were and where to find them.
* The block is wrapped in ``<evlog-memory>`` tags, which Dream's extractor treats as
  injected text: memory given back to an agent is never learned again as a new fact.
* Nothing inside the block can end or open it (INVARIANTS I27): every text placed in it (fact
  texts read from MEMORY.md files a branch or a pull request may change, project paths, recall
  hits) goes through ``neutralise``, which turns the ``<`` of anything that reads as an
  ``evlog-memory`` tag (any case, spacing, ``-``/``_``, fullwidth or small-form look-alikes,
  zero-width characters between) into ``‹`` and line breaks into spaces.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field

from eventlog.secrets import redact
from projections.memory import GLOBAL_FILE, parse_items, project_file

DEFAULT_CONTEXT_BYTES = 8000
MIN_CONTEXT_BYTES = 500
OPEN_TAG = "<evlog-memory>"
CLOSE_TAG = "</evlog-memory>"
_TAG_START = re.compile(r"<\s*/?\s*evlog[\s_-]*memory")  # matched on the folded text (see neutralise)
_LINE_BREAKS = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")
_SAFE_BRACKET = "\u2039"  # SINGLE LEFT-POINTING ANGLE QUOTATION MARK: reads as a bracket, folds to no '<'


@dataclass
class MemoryContext:
    """What ``memory_context`` found: the text, and what it took and left out."""

    text: str = ""
    project: str = ""  # the project whose facts were used ("" if none)
    facts: int = 0  # facts shown
    omitted: int = 0  # facts left out for the budget
    files: list[str] = field(default_factory=list)  # the MEMORY.md files read


def project_for(home: str, cwd: str | None) -> tuple[str, str] | None:
    """(project directory, its MEMORY.md path) for ``cwd`` or its closest parent that has one."""
    if not cwd:
        return None
    seen: set[str] = set()
    for start in (os.path.abspath(cwd), os.path.realpath(cwd)):
        cur = start
        while cur not in seen:
            seen.add(cur)
            path = os.path.join(home, project_file(cur))
            if os.path.isfile(path):
                return cur, path
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
    return None


def neutralise(text: str) -> str:
    """``text`` made safe to place inside the memory block: one line, and no ``evlog-memory`` tag can form.

    Tags are looked for in the text as a reader would see it: each character NFKC-normalised
    and case-folded (``\uff1c`` is ``<``, ``\uff25`` is ``e``), format characters (zero-width
    space, soft hyphen) dropped. The character that starts such a tag is replaced, so the text
    stays readable and ``Vec<T>`` is left alone.
    """
    text = _LINE_BREAKS.sub(" ", text)
    folded: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf":
            continue
        for c in unicodedata.normalize("NFKC", ch).casefold():
            folded.append(c)
            origin.append(i)
    starts = {origin[m.start()] for m in _TAG_START.finditer("".join(folded))}
    if not starts:
        return text
    return "".join(_SAFE_BRACKET if i in starts else ch for i, ch in enumerate(text))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return redact(f.read())[0]  # a hand edit may hold a secret: context goes to a model (I24)
    except OSError:
        return ""


def memory_context(home: str, cwd: str | None, *, budget: int = DEFAULT_CONTEXT_BYTES) -> MemoryContext:
    """The memory block for an agent working in ``cwd`` (see the module docstring); ``text`` is "" if none."""
    budget = max(budget, MIN_CONTEXT_BYTES)
    out = MemoryContext()
    parts: list[tuple[str, list[tuple[str, str]]]] = []
    found = project_for(home, cwd)
    if found is not None:
        out.project, path = found
        items = parse_items(_read(path))
        out.files.append(path)
        if items:
            parts.append((f"Project {neutralise(out.project)}", items))
    global_path = os.path.join(home, GLOBAL_FILE)
    if os.path.isfile(global_path):
        out.files.append(global_path)
        items = parse_items(_read(global_path))
        if items:
            parts.append(("About the user", items))
    total = sum(len(items) for _h, items in parts)
    if not total:
        return out
    intro = ("Memory from earlier sessions, kept by evlog: " + ("project facts first, then " if out.project else "")
             + "facts about the user. The evlog MCP tools recall and why find more, with sources.")
    lines = [OPEN_TAG, intro]
    used = _size(lines) + len(CLOSE_TAG.encode())
    reserve = 90  # room for the closing "n more facts" line
    for head, items in parts:
        section = None
        header = f"# {head}"
        for sec, text in items:
            heading = [f"## {neutralise(sec)}"] if sec != section else []
            add = ([header] if header else []) + heading + [f"- {neutralise(text)}"]
            cost = _size(add)
            if used + cost + reserve > budget:
                continue  # left out whole; a shorter one after it may still fit
            lines.extend(add)
            used += cost
            header = ""
            section = sec
            out.facts += 1
    out.omitted = total - out.facts
    if out.omitted:
        lines.append(f"({out.omitted} more fact{'s' if out.omitted != 1 else ''} not shown: the evlog MCP tool "
                     "recall, or 'evlog memory')")
    lines.append(CLOSE_TAG)
    text = "\n".join(lines)
    out.text = text if out.facts else ""
    return out


def _size(lines: list[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)
