"""Users are in charge of memory: list, forget, edit and pin facts (what ``evlog memory`` does).

Every change is an event (``memory.forgotten``, ``memory.restored``, ``memory.edited``, ``memory.pinned``), so
it survives replay; a forgotten fact is never learned again from the same sources (Dream
checks). A change that would put a MEMORY.md over its budget archives the least valuable
facts in the same atomic batch. Each function is idempotent: doing it twice changes
nothing the second time (and returns False).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventlog.errors import InvalidEventError, NotFound
from eventlog.events import (
    Event,
    MemoryAppended,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRecalled,
    MemoryRestored,
)
from projections.memory import STATES, Fact

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace


def facts(ws: Workspace, *, state: str | None = "active", project: str | None = None) -> list[Fact]:
    """Facts in ``state`` (None: all), of one file (``project``: "" = the global file) or of every file."""
    if state is not None and state not in STATES:
        raise InvalidEventError(f"unknown fact state {state!r}; choose one of {', '.join(STATES)}")
    mem = ws.memory
    if project is None:
        return mem.all_facts(state)
    return mem.facts(project, state)


def find(ws: Workspace, fact_id: str) -> Fact:
    """The fact with this id (any state); ``NotFound`` names the miss."""
    f = ws.memory.get(fact_id)
    if f is None:
        raise NotFound(f"no fact {fact_id!r} (see 'evlog memory --tier all')")
    return f


def matching(ws: Workspace, text: str) -> list[Fact]:
    """Active facts whose text contains ``text`` (case-insensitive)."""
    q = text.casefold()
    return [f for f in ws.memory.all_facts("active") if q in f.text.casefold()]


def add(ws: Workspace, text: str, *, section: str = "User Profile", project: str = "", subject: str = "user",
        pinned: bool = False) -> str:
    """Add a fact directly (not learned by Dream); returns its id. The same text twice in one file is added once."""
    import xxhash

    from processors.dream import budget_events

    text = " ".join(text.split())
    if not text:
        raise InvalidEventError("a fact needs text")
    target = project
    fid = "fact-u" + xxhash.xxh3_64_hexdigest(f"{target}\0{text}".encode())[:11]
    with ws.lock:
        if ws.memory.get(fid) is not None and ws.memory.get(fid).state == "active":  # type: ignore[union-attr]
            return fid
        ev = MemoryAppended(fact_id=fid, scope="project" if project else "user", section=section, text=text,
                            project=project, subject=subject, pinned=pinned, by="user")
        ws.append([ev, *budget_events(ws, [ev])])
    return fid


def forget(ws: Workspace, fact_ids: list[str], *, reason: str = "", by: str = "user") -> list[str]:
    """Forget active facts (they leave MEMORY.md; never learned again from the same sources); returns those forgotten."""
    with ws.lock:
        todo = [fid for fid in dict.fromkeys(fact_ids) if find(ws, fid).state == "active"]
        if todo:
            ws.append([MemoryForgotten(fact_id=fid, by=by, reason=reason or "forgotten on request") for fid in todo])
        return todo


def unforget(ws: Workspace, fact_id: str, *, by: str = "user") -> bool:
    """Bring a forgotten fact back (``memory.restored``): it is active again; False if it was not forgotten.

    ``forget`` is soft and reversible; ``eventlog.app.erase`` is the hard, irreversible one.
    """
    from processors.dream import budget_events

    with ws.lock:
        if find(ws, fact_id).state != "forgotten":
            return False
        ws.append([MemoryRestored(fact_id=fact_id, by=by)])
        extra = budget_events(ws, [])
        if extra:
            ws.append(extra)
        return True


def edit(ws: Workspace, fact_id: str, text: str, *, by: str = "user") -> bool:
    """Change a fact's text; False if it already reads so."""
    from processors.dream import budget_events

    text = " ".join(text.split())
    if not text:
        raise InvalidEventError("a fact needs text (to remove it, forget it)")
    with ws.lock:
        if find(ws, fact_id).text == text:
            return False
        events: list[Event] = [MemoryEdited(fact_id=fact_id, text=text, by=by)]
        ws.append(events)
        extra = budget_events(ws, [])
        if extra:
            ws.append(extra)
        return True


def pin(ws: Workspace, fact_id: str, pinned: bool = True) -> bool:
    """Pin a fact (it never leaves MEMORY.md for the budget; an archived one comes back) or unpin it."""
    with ws.lock:
        f = find(ws, fact_id)
        if f.pinned == pinned and (not pinned or f.state != "archived"):
            return False
        ws.append([MemoryPinned(fact_id=fact_id, pinned=pinned)])
        return True


def used(ws: Workspace, ids: list[str], *, query: str = "", message_seqs: list[int] = ()) -> None:  # type: ignore[assignment]
    """Record that a caller chose to use these facts, memory entries or messages (by seq).

    The MEMORY.md budget keeps used facts; the archive promotes the short-term entries
    named, or holding a message named, instead of dropping them.
    """
    if ids or message_seqs:
        ws.append([MemoryRecalled(entry_ids=list(dict.fromkeys(ids)), query=query,
                                  message_seqs=sorted(set(message_seqs)))])
