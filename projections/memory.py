"""The memory projection: layered MEMORY.md files, from ``memory.appended`` events.

Facts about the user go to the global ``memory/MEMORY.md``; facts about a project go to
that project's ``<project>/memory/MEMORY.md``. The canonical copy of a project's file is
kept inside the workspace at ``memory/projects/<safe project name>/MEMORY.md`` (so
``replay --check`` can compare it). A live workspace mirrors it to
``<project>/memory/MEMORY.md`` only for projects the user registered (``evlog project
add DIR``, or an explicit ``--project``; listed in ``evlog.json``): a project named by
data (a transcript's ``cwd``, an event) never decides where evlog writes (INVARIANTS I22). A project fact without a project goes to the
global file, under its section: nothing is dropped.

A file is rendered from its facts alone: one ``## <section>`` heading per section, in
the order the sections first appeared, each fact as a list item (``- `` is added unless
the text already is a list item). ``route_layered`` splits free text the way the seed's
``appendLayeredMemory`` does: what follows ``## User Profile`` is the user's, what
follows ``## Project Context`` is the project's, and anything else is the user's too.
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

from eventlog.events import Event, MemoryAppended
from projections.base import Projection
from projections.naming import safe_name

GLOBAL_FILE = os.path.join("memory", "MEMORY.md")
PROJECTS_DIR = os.path.join("memory", "projects")
USER_SECTION = "User Profile"
PROJECT_SECTION = "Project Context"
_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)


class Fact(msgspec.Struct, kw_only=True):
    """One fact as the projection keeps it."""

    fact_id: str
    seq: int
    section: str
    text: str
    run_id: str = ""


def route_layered(text: str) -> list[tuple[str, str, str]]:
    """Split text into ``(scope, section, body)`` parts by its ``##`` headings.

    ``## User Profile`` -> scope "user"; ``## Project Context`` -> scope "project"; text
    before any heading or under another heading -> scope "user" (nothing is dropped).
    """
    parts: list[tuple[str, str, str]] = []
    pos = 0
    section = ""
    for m in _HEADING.finditer(text):
        body = text[pos : m.start()].strip()
        if body:
            parts.append(_scoped(section, body))
        section = m.group(1)
        pos = m.end()
    body = text[pos:].strip()
    if body:
        parts.append(_scoped(section, body))
    return parts


def _scoped(section: str, body: str) -> tuple[str, str, str]:
    if section.lower() == PROJECT_SECTION.lower():
        return "project", PROJECT_SECTION, body
    if section.lower() == USER_SECTION.lower() or not section:
        return "user", USER_SECTION, body
    return "user", section, body


def project_file(project: str) -> str:
    """Where a project's canonical MEMORY.md lives inside the workspace."""
    return os.path.join(PROJECTS_DIR, safe_name(project), "MEMORY.md")


def render(facts: list[Fact]) -> bytes:
    """A MEMORY.md from its facts (see module docstring)."""
    sections: dict[str, list[str]] = {}
    for f in facts:
        item = f.text.strip()
        if not item.startswith(("- ", "* ")):
            item = "- " + item.replace("\n", "\n  ")
        sections.setdefault(f.section, []).append(item)
    out = ["# Memory\n"]
    for name, items in sections.items():
        out.append(f"\n## {name}\n\n" + "\n".join(items) + "\n")
    return "".join(out).encode()


class MemoryProjection(Projection):
    """Global and per-project MEMORY.md files (see the module docstring)."""

    name = "memory"
    consumes = frozenset({"memory.appended"})

    def __init__(self, root: str, fs, *, live: bool = True) -> None:  # noqa: ANN001
        super().__init__(root, fs, live=live)
        self.mirror_projects: frozenset[str] = frozenset()  # registered project directories (see module docstring)
        self.load(None)

    def load(self, state: Any) -> None:
        # file key: "" for the global file, else the project path
        self.files: dict[str, list[Fact]] = {} if state is None else msgspec.convert(state, dict[str, list[Fact]])
        self.dirty: set[str] = set()

    def state(self) -> Any:
        return self.files

    def outputs(self) -> list[str]:
        return [GLOBAL_FILE if not p else project_file(p) for p in self.files]

    def owned_dirs(self) -> list[str]:
        return [PROJECTS_DIR]

    def apply(self, ev: Event) -> None:
        assert isinstance(ev, MemoryAppended)
        target = ev.project if ev.scope == "project" and ev.project else ""
        self.files.setdefault(target, []).append(Fact(fact_id=ev.fact_id, seq=ev.seq, section=ev.section, text=ev.text, run_id=ev.run_id))
        self.dirty.add(target)

    def facts(self, project: str = "") -> list[Fact]:
        """The facts of the global file ("") or of a project's file."""
        return self.files.get(project, [])

    def flush(self) -> None:
        for target in sorted(self.dirty):
            data = render(self.files[target])
            self.write_file(GLOBAL_FILE if not target else project_file(target), data)
            self._mirror(target, data)
        self.dirty.clear()

    def mirror_path(self, project: str) -> str | None:
        """Where a project's MEMORY.md is mirrored, or None if it is not (an unregistered project)."""
        if not project or project not in self.mirror_projects or not os.path.isabs(project):
            return None
        return os.path.join(project, "memory", "MEMORY.md")

    def _mirror(self, project: str, data: bytes) -> None:
        path = self.mirror_path(project)
        if self.live and path is not None and os.path.isdir(project):
            self.fs.write_file(path, data)

    def after_rebuild(self) -> None:
        for target, facts in self.files.items():
            if target:
                self._mirror(target, render(facts))
