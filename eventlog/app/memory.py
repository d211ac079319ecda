"""Users are in charge of memory: list, forget, edit and pin facts (what ``evlog memory`` does).

Every change is an event (``memory.forgotten``, ``memory.restored``, ``memory.edited``, ``memory.pinned``), so
it survives replay; a forgotten fact is never learned again from the same sources (Dream
checks). A change that would put a MEMORY.md over its budget archives the least valuable
facts in the same atomic batch. Each function is idempotent: doing it twice changes
nothing the second time (and returns False).

**What an agent may change** (the MCP server calls these; an agent is never the user):

* ``AgentSession(project)``: one agent connection (an MCP server process) and its calling
  project, the git repository it runs in (``calling_project(cwd)``);
* ``agent_remember``: a note only for the calling project (or another checkout of the same
  repository), never the global file, never another project; Dream keeps it as
  *agent-proposed* ("An agent noted: ..."), in its own budget share;
* ``agent_forget``: at most ``AGENT_FORGETS_PER_CALL`` facts a call and
  ``AGENT_FORGETS_PER_SESSION`` a session (no bulk erase), only facts of the calling
  project or the global file; each one is undone with ``unforget`` (``evlog memory unforget``);
* ``confirm``: the user takes an agent-proposed fact as theirs (``evlog memory confirm ID``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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


# --- what an agent may change ----------------------------------------------------------------

AGENT_FORGETS_PER_CALL = 3
AGENT_FORGETS_PER_SESSION = 5


@dataclass
class AgentSession:
    """One agent connection: its calling project and what it may still forget (see the module docstring)."""

    project: str
    forgets_left: int = AGENT_FORGETS_PER_SESSION
    forgotten: list[str] = field(default_factory=list)


def calling_project(cwd: str) -> str:
    """The project an agent working in ``cwd`` writes to: its git repository's top, else ``cwd`` itself."""
    from eventlog.app.repo_identity import git_place

    cwd = os.path.normpath(os.path.abspath(os.path.expanduser(cwd)))
    place = git_place(cwd)
    return place.top if place is not None else cwd


def is_calling_project(session: AgentSession, project: str) -> bool:
    """Whether ``project`` is the session's project: the same path, a directory in it, or the same repository."""
    from eventlog.app.repo_identity import IdentityCache, keys_of, same_project

    mine = session.project
    if project == mine or project.startswith(mine.rstrip(os.sep) + os.sep):
        return True
    cache = IdentityCache(None)
    mine_keys = keys_of(mine, cache)
    return bool(mine_keys) and same_project(mine_keys, keys_of(project, cache))


def agent_remember(ws: Workspace, text: str, *, session: AgentSession, project: str | None = None) -> int:
    """An agent's note for its calling project (``project``: another checkout of it, else refused); its seq.

    ``InvalidEventError`` says why a note is refused: another project, no project, or what
    ``processors.extract.notes.agent_note_verdict`` refuses (an order, a claim about the user, a secret).
    """
    from processors.dream import remember

    if not session.project:
        raise InvalidEventError("an agent's note needs a calling project; agent notes are never global")
    target = session.project
    if project is not None and project.strip():
        wanted = os.path.normpath(os.path.abspath(os.path.expanduser(project.strip())))
        if not is_calling_project(session, wanted):
            raise InvalidEventError(f"an agent can only remember for the project it works in ({session.project}), "
                                    f"not {wanted}; the user can add it there with 'evlog remember --project'")
        target = wanted
    return remember(ws, text, project=target, by="agent")


def agent_forget(ws: Workspace, fact_ids: list[str], *, session: AgentSession, reason: str = "") -> list[str]:
    """Forget facts for an agent, within its budget (see the module docstring); returns those forgotten.

    Refused with ``InvalidEventError`` (nothing forgotten) when the call names more than
    ``AGENT_FORGETS_PER_CALL`` facts, the session's budget is spent, or a fact belongs to
    another project. Each forgotten fact comes back with ``unforget``.
    """
    ids = list(dict.fromkeys(fact_ids))
    if len(ids) > AGENT_FORGETS_PER_CALL:
        raise InvalidEventError(f"an agent forgets at most {AGENT_FORGETS_PER_CALL} facts a call, not {len(ids)} "
                                "(no bulk erase; the user can, with 'evlog memory forget')")
    with ws.lock:
        found = [find(ws, fid) for fid in ids]
        for f in found:
            if f.target and not is_calling_project(session, f.target):
                raise InvalidEventError(f"fact {f.fact_id} belongs to the project {f.target}, not to the one this "
                                        f"agent works in ({session.project}); nothing forgotten")
        todo = [f.fact_id for f in found if f.state == "active"]
        if len(todo) > session.forgets_left:
            raise InvalidEventError(f"this agent session may forget {session.forgets_left} more fact(s) "
                                    f"(of {AGENT_FORGETS_PER_SESSION}), not {len(todo)}; the user can, with "
                                    "'evlog memory forget'")
        done = forget(ws, todo, reason=reason or "forgotten by an agent (MCP)", by="agent")
    session.forgets_left -= len(done)
    session.forgotten.extend(done)
    return done


def agent_sourced(ws: Workspace, f: Fact) -> bool:
    """Whether a fact was learned from an agent's note (MCP ``remember``), confirmed since or not."""
    from processors.dream import AGENT_NOTE_SOURCE
    from processors.extract.notes import is_agent_proposed

    if is_agent_proposed(f.text):
        return True
    for seq in f.source_seqs:
        rec = ws.log.find(seq)
        if rec is not None and getattr(rec.event, "source", "") == AGENT_NOTE_SOURCE:
            return True
    return False


def confirm(ws: Workspace, fact_id: str) -> bool:
    """The user confirms an agent-proposed fact: it reads as theirs (no "An agent noted:"); False if already confirmed.

    ``InvalidEventError`` when the fact is not an agent's or is not active.
    """
    from processors.extract.notes import is_agent_proposed, without_agent_prefix

    with ws.lock:
        f = find(ws, fact_id)
        if not agent_sourced(ws, f):
            raise InvalidEventError(f"fact {fact_id} was not proposed by an agent; nothing to confirm")
        if not is_agent_proposed(f.text):
            return False
        if f.state != "active":
            raise InvalidEventError(f"fact {fact_id} is {f.state}; only an active fact can be confirmed")
    return edit(ws, fact_id, without_agent_prefix(f.text), by="user-confirmed")
