"""The memory projection: facts and their lifecycle, rendered as layered MEMORY.md files.

A fact (``memory.appended``) has an id, text, subject, scope, section, the time it
became true, the messages it came from, and a state: ``active`` (in its MEMORY.md),
``superseded`` (replaced by a newer fact: ``memory.superseded`` links the chain),
``forgotten`` (``memory.forgotten``: removed on purpose, never learned again from the
same sources), ``archived`` (``memory.archived``: left the file to keep it within its
budget; still in the log and found by recall). ``memory.edited`` changes a fact's text,
``memory.pinned`` keeps it in its file whatever the budget (pinning an archived fact
brings it back). Replay rebuilds all of it without a model.

Facts about the user go to the global ``memory/MEMORY.md``; facts about a project go to
that project's file, kept inside the workspace at ``memory/projects/<safe project
name>/MEMORY.md`` (so ``replay --check`` can compare it). A live workspace mirrors it
to ``<project>/memory/MEMORY.md`` only for projects the user registered (``evlog project
add DIR``, or an explicit ``--project``; listed in ``evlog.json``): a project named by
data (a transcript's ``cwd``, an event) never decides where evlog writes (INVARIANTS I22).

A file is rendered from its active facts alone: ``# Memory``, then one ``## <section>``
per section (the known sections first, in ``SECTIONS`` order, then others by name), each
fact as a list item ``- text``.

**Hand edits are never lost.** The projection remembers the bytes it last wrote to each
file. ``hand_edits()`` compares the files on disk (the canonical copy and a registered
mirror) with them and turns a difference into user events: a removed line forgets its
fact, a changed line edits it, a new line adds a fact (``by="hand-edit"``). The
workspace appends those events before it writes MEMORY.md again, so replay reproduces
the edit and the next write keeps it.

**A git checkout is not a hand edit.** A registered project's mirror often lives in a git
work tree. When the mirror is tracked and now reads exactly as the file at HEAD, and HEAD
was moved there by git (checkout, switch, reset, pull, merge, rebase; not a commit made
here), the difference is git's, not the user's (``projections.gitview``): no fact changes,
and the log's version is written back to the mirror. An uncommitted, staged or committed-
here edit is the user's, as before.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

import msgspec
import xxhash

from eventlog.events import (
    Event,
    MemoryAppended,
    MemoryArchived,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRecalled,
    MemoryRestored,
    MemorySuperseded,
)
from eventlog.fsio import FileSystem
from eventlog.replication.clock import OrderState
from projections.base import Projection
from projections.gitview import put_there_by_git
from projections.memory_files import _HEADING
from projections.memory_files import GLOBAL_FILE as GLOBAL_FILE  # re-exported: the layout and grammar of the files
from projections.memory_files import PROJECT_SECTION as PROJECT_SECTION
from projections.memory_files import PROJECTS_DIR as PROJECTS_DIR
from projections.memory_files import SECTIONS as SECTIONS
from projections.memory_files import USER_SECTION as USER_SECTION
from projections.memory_files import item_text as item_text
from projections.memory_files import parse_items as parse_items
from projections.memory_files import project_file as project_file

STATES = ("active", "superseded", "forgotten", "archived")


class Fact(msgspec.Struct, kw_only=True):
    """One fact as the projection keeps it (see the module docstring)."""

    fact_id: str
    seq: int
    section: str
    text: str
    run_id: str = ""
    scope: str = "user"
    project: str = ""
    subject: str = ""
    when: str = ""
    source_refs: list[str] = []
    source_seqs: list[int] = []
    sources: list[int] = []  # history cursors (facts learned before facts named their messages)
    pinned: bool = False
    state: str = "active"
    by: str = ""  # who added it
    changed_by: str = ""  # who superseded, forgot or archived it
    reason: str = ""
    superseded_by: str = ""
    supersedes: str = ""
    edits: int = 0
    recalled: int = 0  # times a caller chose to use it (memory.recalled naming its id)
    key: tuple[int, str, int] = (0, "", 0)  # its addition's place in the order (eventlog.replication.clock)
    base_text: str = ""  # text and pin as added; the rest is its changes folded (``_settle``)
    base_pinned: bool = False
    inherited_pin: bool = False  # it replaced a pinned fact
    ops: list[FactOp] = []
    author: str = ""  # the gateway account that pushed it, for a fact another device wrote

    @property
    def target(self) -> str:
        """The file it belongs to: "" for the global MEMORY.md, else the project."""
        return self.project if self.scope == "project" and self.project else ""


class FactOp(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One change to a fact, with its place in the order."""

    key: tuple[int, str, int]
    kind: str  # the event type
    text: str = ""
    pinned: bool = False
    by: str = ""
    reason: str = ""
    other: str = ""  # the fact that superseded it


def op_of(ev: Event, key: tuple[int, str, int]) -> FactOp:
    match ev:
        case MemorySuperseded():
            return FactOp(key=key, kind=ev.type, by=ev.by, reason=ev.reason, other=ev.by_fact_id)
        case MemoryForgotten():
            return FactOp(key=key, kind=ev.type, by=ev.by, reason=ev.reason)
        case MemoryRestored():
            return FactOp(key=key, kind=ev.type, by=ev.by)
        case MemoryEdited():
            return FactOp(key=key, kind=ev.type, text=ev.text, by=ev.by)
        case MemoryPinned():
            return FactOp(key=key, kind=ev.type, pinned=ev.pinned)
        case MemoryArchived():
            return FactOp(key=key, kind=ev.type, reason=ev.reason)
    raise TypeError(f"not a change to a fact: {ev.type}")


def fold_op(f: Fact, op: FactOp) -> None:
    """One change, in order. Superseded is final; forgotten holds until a later restore; an edit
    changes the text in any state and never brings a forgotten fact back (forget wins an
    edit-vs-forget race, and a later restore shows the newest edit)."""
    if op.kind == "memory.superseded":
        if f.state != "superseded":
            f.state, f.superseded_by, f.changed_by, f.reason = "superseded", op.other, op.by, op.reason
    elif op.kind == "memory.forgotten":
        if f.state in ("active", "archived"):
            f.state, f.changed_by, f.reason = "forgotten", op.by, op.reason
    elif op.kind == "memory.restored":
        if f.state == "forgotten":
            f.state, f.changed_by, f.reason = "active", op.by, ""
    elif op.kind == "memory.edited":
        f.text = op.text
        f.edits += 1
    elif op.kind == "memory.pinned":
        f.pinned = op.pinned
        if op.pinned and f.state == "archived":
            f.state = "active"
    elif op.kind == "memory.archived" and f.state == "active" and not f.pinned:
        f.state, f.changed_by, f.reason = "archived", "budget", op.reason


_STATE_OPS = {"superseded": "memory.superseded", "forgotten": "memory.forgotten", "archived": "memory.archived"}


def _from_old_checkpoint(f: Fact) -> None:
    """A fact a checkpoint of an older evlog kept (no order key, no changes): its folded state becomes
    its base and one change, both first in the order (before anything written from now on)."""
    f.key = (0, "", f.seq)
    f.base_text, f.base_pinned = f.text, f.pinned
    kind = _STATE_OPS.get(f.state)
    f.ops = [FactOp(key=(1, "", f.seq), kind="memory.edited", text=f.text, by="user")] * f.edits
    if kind is not None:
        f.ops.append(FactOp(key=(1, "", f.seq), kind=kind, by=f.changed_by, reason=f.reason, other=f.superseded_by))


class _MemoryState(msgspec.Struct, kw_only=True):
    facts: dict[str, Fact] = {}
    order: dict[str, list[str]] = {}  # target -> fact ids in the order they were added
    written: dict[str, str] = {}  # target -> the text last written to its file (for hand edits)
    clock: OrderState = msgspec.field(default_factory=OrderState)  # the order of replicated events
    pending: dict[str, list[FactOp]] = {}  # changes received before their fact
    links: dict[str, str] = {}  # a superseding fact -> the fact it replaced


def route_layered(text: str) -> list[tuple[str, str, str]]:
    """Split free text into ``(scope, section, body)`` parts by its ``##`` headings.

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


def file_of(target: str) -> str:
    """The relative path of a target's MEMORY.md ("" = the global one)."""
    return GLOBAL_FILE if not target else project_file(target)


HEADER = "# Memory\n\n"


def fact_line(text: str) -> str:
    """A fact as its MEMORY.md line (no newline)."""
    return "- " + item_text(text)


def render(facts: list[Fact]) -> bytes:
    """A MEMORY.md from its (active) facts (see the module docstring).

    ``HEADER``, then per section ``## <section>`` and one ``fact_line`` per fact, a blank
    line between sections; the known sections in ``SECTIONS`` order, then others by name
    (the layout ``processors.extract.budget`` counts).
    """
    sections: dict[str, list[str]] = {}
    for f in facts:
        sections.setdefault(f.section or USER_SECTION, []).append(fact_line(f.text))
    names = [s for s in SECTIONS if s in sections] + sorted(s for s in sections if s not in SECTIONS)
    return (HEADER + "\n".join(f"## {name}\n" + "".join(item + "\n" for item in sections[name]) for name in names)).encode()


def hand_fact_id(target: str, text: str, seq_hint: int) -> str:
    """The id of a fact a user added by editing MEMORY.md by hand."""
    return "fact-h" + xxhash.xxh3_64_hexdigest(f"{target}\0{text}\0{seq_hint}".encode())[:11]


class MemoryProjection(Projection):
    """Facts and the MEMORY.md files (see the module docstring)."""

    name = "memory"
    consumes = frozenset({"memory.appended", "memory.superseded", "memory.forgotten", "memory.edited",
                          "memory.pinned", "memory.archived", "memory.recalled", "memory.restored",
                          "replication.pulled", "replication.device"})

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.mirror_projects: frozenset[str] = frozenset()  # registered project directories (see module docstring)
        self.load(None)

    @classmethod
    def fresh_like(cls, other: Projection, root: str) -> Projection:
        p = cls(root, other.fs, live=False)
        p.mirror_projects = getattr(other, "mirror_projects", frozenset())
        return p

    # -- state -----------------------------------------------------------------------

    def load(self, state: Any) -> None:
        self.s = _MemoryState() if state is None else msgspec.convert(state, _MemoryState)
        for f in self.s.facts.values():
            if f.key == (0, "", 0):
                _from_old_checkpoint(f)
        self.dirty: set[str] = set()

    def state(self) -> Any:
        return self.s

    def outputs(self) -> list[str]:
        return [file_of(t) for t in self.s.order]

    def owned_dirs(self) -> list[str]:
        return [PROJECTS_DIR]

    # -- folding ---------------------------------------------------------------------

    def apply(self, ev: Event) -> None:
        if self.s.clock.observe(ev):
            return
        if isinstance(ev, MemoryRecalled):
            for fid in ev.entry_ids:
                f = self.s.facts.get(fid)
                if f is not None:
                    f.recalled += 1
            return
        if isinstance(ev, MemoryAppended):
            self._append(ev)
            return
        fact_id = getattr(ev, "fact_id", "")
        op = op_of(ev, self.s.clock.key(ev))
        f = self.s.facts.get(fact_id)
        if f is None:  # a change that arrived before its fact (another device's): kept until the fact comes
            self.s.pending.setdefault(fact_id, []).append(op)
            return
        f.ops.append(op)
        self._settle(f)

    def _append(self, ev: MemoryAppended) -> None:
        key = self.s.clock.key(ev)
        scope = ev.scope if ev.scope in ("user", "project") else "user"
        old = self.s.facts.get(ev.fact_id)
        if old is not None and self.s.clock.resolve(old.key) > self.s.clock.resolve(key):
            return  # the same id again, older in the order: the newest wins
        f = Fact(fact_id=ev.fact_id, seq=ev.seq, section=ev.section or USER_SECTION, text=ev.text,
                 run_id=ev.run_id, scope=scope, project=ev.project if scope == "project" else "",
                 subject=ev.subject, when=ev.when, source_refs=list(ev.source_refs),
                 source_seqs=list(ev.source_seqs), sources=list(ev.sources), pinned=ev.pinned,
                 by=ev.by or "dream", key=key, base_text=ev.text, base_pinned=ev.pinned,
                 author=ev.replica.author if ev.replica is not None else "")
        if old is not None:  # an old log wrote an id twice: the newer replaces it
            self._drop_from_order(old)
            self.dirty.add(old.target)
            f.ops, f.inherited_pin = old.ops, old.inherited_pin
        f.ops.extend(self.s.pending.pop(ev.fact_id, []))
        self.s.facts[ev.fact_id] = f
        self._place(f)
        self._settle(f)
        before = self.s.links.get(ev.fact_id)
        if before is not None and before in self.s.facts:
            self._settle(self.s.facts[before])  # the fact it replaced links to it now

    def _place(self, f: Fact) -> None:
        """Put the fact among its file's facts in the order (at the end, for a device's own new fact)."""
        ids = self.s.order.setdefault(f.target, [])
        mine = self.s.clock.resolve(f.key)
        i = len(ids)
        while i > 0:
            other = self.s.facts.get(ids[i - 1])
            if other is None or self.s.clock.resolve(other.key) < mine:
                break
            i -= 1
        ids.insert(i, f.fact_id)

    def _settle(self, f: Fact) -> None:
        """The fact's state: its changes folded in the order (those before its own addition ignored)."""
        f.text, f.pinned, f.state, f.edits = f.base_text, f.base_pinned or f.inherited_pin, "active", 0
        f.changed_by, f.reason, f.superseded_by = "", "", ""
        start = self.s.clock.resolve(f.key)
        for op in sorted(f.ops, key=lambda o: self.s.clock.resolve(o.key)):
            if self.s.clock.resolve(op.key) > start:
                fold_op(f, op)
        self.dirty.add(f.target)
        if f.superseded_by:
            self.s.links[f.superseded_by] = f.fact_id
            new = self.s.facts.get(f.superseded_by)
            if new is not None:
                new.supersedes = f.fact_id
                if f.pinned and not new.inherited_pin:
                    new.inherited_pin = True
                    self._settle(new)

    def _drop_from_order(self, f: Fact) -> None:
        ids = self.s.order.get(f.target, [])
        if f.fact_id in ids:
            ids.remove(f.fact_id)

    # -- reading ---------------------------------------------------------------------

    def get(self, fact_id: str) -> Fact | None:
        """The fact with this id (any state), or None."""
        return self.s.facts.get(fact_id)

    def facts(self, project: str = "", state: str | None = "active") -> list[Fact]:
        """The facts of the global file ("") or of a project's file, in file order (``state`` None: every state)."""
        out = []
        for fid in self.s.order.get(project, []):
            f = self.s.facts.get(fid)
            if f is not None and (state is None or f.state == state):
                out.append(f)
        return out

    def all_facts(self, state: str | None = None) -> list[Fact]:
        """Every fact of every file (``state``: only those), oldest first."""
        return sorted((f for f in self.s.facts.values() if state is None or f.state == state), key=lambda f: f.seq)

    @property
    def files(self) -> dict[str, list[Fact]]:
        """Target ("" = global, else the project) -> its active facts, as MEMORY.md shows them."""
        return {t: self.facts(t) for t in self.s.order}

    def chain(self, fact_id: str) -> list[Fact]:
        """The supersede chain through a fact, oldest first."""
        f = self.s.facts.get(fact_id)
        if f is None:
            return []
        seen = {f.fact_id}
        while f.supersedes and f.supersedes in self.s.facts and f.supersedes not in seen:
            f = self.s.facts[f.supersedes]
            seen.add(f.fact_id)
        out = [f]
        while f.superseded_by and f.superseded_by in self.s.facts and f.superseded_by not in {x.fact_id for x in out}:
            f = self.s.facts[f.superseded_by]
            out.append(f)
        return out

    def rendered(self, target: str) -> bytes:
        """What the target's MEMORY.md holds now."""
        return render(self.facts(target))

    # -- hand edits ------------------------------------------------------------------

    def hand_edits(self) -> list[Event]:
        """Events that make the log say what a user changed by hand in a MEMORY.md (see the module docstring)."""
        events: list[Event] = []
        for target, written in sorted(self.s.written.items()):
            for path in self._paths(target):
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        now = f.read()
                except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                    continue
                if now == written:
                    continue
                if path == self.mirror_path(target) and put_there_by_git(path, now):
                    self._mirror(target, self.rendered(target))  # a checkout, not an edit: the log's version back
                    continue
                events.extend(self._diff(target, written, now))
                break  # the canonical copy and the mirror: one edit is enough
        return events

    def _paths(self, target: str) -> list[str]:
        paths = [self.path(file_of(target))]
        mirror = self.mirror_path(target)
        if mirror is not None:
            paths.append(mirror)
        return paths

    def _diff(self, target: str, before: str, after: str) -> list[Event]:
        old_items = parse_items(before)
        new_items = parse_items(after)
        shown = [f for f in self.facts(target)]
        by_item: dict[str, list[Fact]] = {}
        for fact in shown:
            by_item.setdefault(item_text(fact.text), []).append(fact)
        old_facts: list[Fact | None] = []
        for _section, text in old_items:
            cands = by_item.get(text)
            old_facts.append(cands.pop(0) if cands else None)
        events: list[Event] = []
        matcher = difflib.SequenceMatcher(a=[t for _s, t in old_items], b=[t for _s, t in new_items], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            olds = [f for f in old_facts[i1:i2]]
            news = new_items[j1:j2]
            pairs = min(len(olds), len(news)) if tag == "replace" else 0
            for f, (_section, text) in zip(olds[:pairs], news[:pairs], strict=True):
                if f is not None and text != item_text(f.text):
                    events.append(MemoryEdited(fact_id=f.fact_id, text=text, by="hand-edit"))
            for f in olds[pairs:]:
                if f is not None and f.state == "active":
                    events.append(MemoryForgotten(fact_id=f.fact_id, by="hand-edit",
                                                  reason="removed from MEMORY.md by hand"))
            for k, (section, text) in enumerate(news[pairs:]):
                scope = "project" if target else "user"
                events.append(MemoryAppended(fact_id=hand_fact_id(target, text, len(self.s.facts) + k), scope=scope,
                                             section=section, text=text, project=target, subject="user",
                                             by="hand-edit"))
        return events

    # -- writing ---------------------------------------------------------------------

    def flush(self) -> None:
        for target in sorted(self.dirty):
            data = self.rendered(target)
            self.write_file(file_of(target), data)
            self._mirror(target, data)
            self.s.written[target] = data.decode()
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
        for target in self.s.order:
            if target:
                self._mirror(target, self.rendered(target))
