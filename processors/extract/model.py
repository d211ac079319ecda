"""The data Dream's fact extraction works on: source entries, existing facts, operations.

These Structs are the whole interface between Dream and an extractor (the offline
rules in ``offline.py`` or a model through ``llm.py``): an extractor is a pure function
``(entries, existing) -> ops``. Dream builds the entries from the log, passes the
active facts it wants the extractor to consider, validates the ops and turns them into
fact events; ``apply_ops`` is a reference of what applying them means.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

#: ``FactOp.op`` values.
OPS = ("add", "update", "delete", "noop")
#: ``FactOp.scope`` values: the user's global MEMORY.md or the project's.
SCOPES = ("global", "project")
#: Fact states (``ExistingFact.state``).
STATES = ("active", "superseded", "forgotten", "archived")

#: The fixed, small set of sections, in the order a MEMORY.md shows them.
#:
#: * ``User Profile``: who a person is: identity, job, home, family and friends, pets,
#:   background, goals (subject "user" or a named person).
#: * ``Preferences``: likes and dislikes, habits, tools, how they want things done.
#: * ``Events``: what happened or is planned, with its date.
#: * ``Project Context``: the project's conventions: stack, how work is tracked, lint
#:   and test rules, the language the user writes in, decisions.
PROFILE, PREFERENCES, EVENTS, PROJECT = "User Profile", "Preferences", "Events", "Project Context"
SECTIONS = (PROFILE, PREFERENCES, EVENTS, PROJECT)


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One source message as Dream sees it."""

    ref: str  # stable source id: f"{session_key}#{message_id}"
    seq: int  # log seq of the message event (0 for notes)
    session_key: str
    message_id: str
    project: str = ""  # project label/path of the session ("" = none)
    speaker: str  # display name: extra["speaker"] if present, else the role ("user"/"assistant")
    role: str  # user / assistant / system / tool / note (a note given with `evlog remember`)
    time: str  # UTC ISO 8601 of the message
    text: str  # full text, never cut
    meta: dict[str, Any] = {}  # the message's extra fields from the source (isMeta, ...)


class ExistingFact(msgspec.Struct, frozen=True, kw_only=True):
    """A fact already in memory, as an extractor is shown it."""

    fact_id: str
    text: str
    subject: str
    scope: str
    project: str = ""
    section: str = ""
    when: str = ""
    sources: list[str] = []
    state: str = "active"
    pinned: bool = False


class FactOp(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One operation an extractor proposes."""

    op: str  # "add" | "update" (supersede fact_id with new text) | "delete" (forget fact_id) | "noop"
    text: str = ""  # the fact, a complete sentence naming its subject, never cut mid-word
    subject: str = ""  # "user", a person's name, or "project"
    scope: str = "global"  # "global" (user file) | "project" (the project's MEMORY.md)
    section: str = ""  # one of SECTIONS
    when: str = ""  # UTC ISO: when it became true = its source message's time
    sources: list[str] = []  # Entry.ref of the few (1-3) messages it came from, never a whole batch
    fact_id: str = ""  # for update/delete
    reason: str = ""
    project: str = ""  # added: the project a "project" scoped fact belongs to (its entries' project)


#: At most this many sources per fact.
MAX_SOURCES = 3


def default_fact_id(op: FactOp) -> str:
    """A stable id for an added fact: ``fact-`` + 12 hex of its scope, project and text."""
    import xxhash

    key = " ".join(op.text.casefold().split())
    return "fact-" + xxhash.xxh3_64_hexdigest(f"{op.scope}\0{op.project}\0{key}".encode())[:12]


def apply_ops(facts: Iterable[ExistingFact], ops: Iterable[FactOp], *,
              new_id: Callable[[FactOp], str] = default_fact_id) -> list[ExistingFact]:
    """The facts after ``ops`` (a reference of what Dream's fact events mean).

    ``add`` appends an active fact (id from ``new_id``; an id already taken gets a
    ``-2``, ``-3``... suffix); ``update`` marks ``fact_id`` superseded and appends the new
    text as a new active fact that keeps the old one's pinned flag; ``delete`` marks it
    forgotten; ``noop`` and ops on unknown or inactive ids change nothing. Order is kept:
    a fact's position is where it was first added.
    """
    out: list[ExistingFact] = list(facts)
    index = {f.fact_id: i for i, f in enumerate(out)}
    for op in ops:
        if op.op == "add" or (op.op == "update" and op.fact_id in index and out[index[op.fact_id]].state == "active"):
            pinned = False
            if op.op == "update":
                old = out[index[op.fact_id]]
                out[index[op.fact_id]] = msgspec.structs.replace(old, state="superseded")
                pinned = old.pinned
            fid = base = new_id(op)
            n = 1
            while fid in index:
                n += 1
                fid = f"{base}-{n}"
            index[fid] = len(out)
            out.append(ExistingFact(fact_id=fid, text=op.text, subject=op.subject, scope=op.scope, project=op.project,
                                    section=op.section, when=op.when, sources=list(op.sources), pinned=pinned))
        elif op.op == "delete" and op.fact_id in index and out[index[op.fact_id]].state == "active":
            out[index[op.fact_id]] = msgspec.structs.replace(out[index[op.fact_id]], state="forgotten")
    return out
