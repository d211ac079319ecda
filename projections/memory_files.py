"""Where the MEMORY.md files live in a workspace and how their text reads: no fold, no log.

The layout and the line grammar of the memory projection (``projections.memory``), kept apart
so a reader of the files (a context hook, ``eventlog.app.agents.context``) pays for a few
names and two regular expressions, not for the projection and its dependencies.
``projections.memory`` re-exports every name here.
"""

from __future__ import annotations

import os
import re

from projections.naming import safe_name

GLOBAL_FILE = os.path.join("memory", "MEMORY.md")
PROJECTS_DIR = os.path.join("memory", "projects")
USER_SECTION = "User Profile"
PROJECT_SECTION = "Project Context"
#: The sections a MEMORY.md shows first, in this order (see processors.extract.model).
SECTIONS = ("User Profile", "Preferences", "Events", "Project Context")
_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")


def project_file(project: str) -> str:
    """Where a project's canonical MEMORY.md lives inside the workspace."""
    return os.path.join(PROJECTS_DIR, safe_name(project), "MEMORY.md")


def item_text(fact_text: str) -> str:
    """A fact's text as one list item (a multi-line text is indented under its dash)."""
    item = " ".join(fact_text.strip().splitlines()) if "\n" in fact_text.strip() else fact_text.strip()
    return item[2:] if item.startswith(("- ", "* ")) else item


def parse_items(text: str) -> list[tuple[str, str]]:
    """``(section, item text)`` for every list item of a MEMORY.md, in file order."""
    out = []
    section = USER_SECTION
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            section = m.group(1)
            continue
        m = _ITEM.match(line)
        if m:
            out.append((section, m.group(1)))
    return out
