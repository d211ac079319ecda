"""Pull planning: turn a page of gateway changes into local events, the newest write winning.

For each session in the page the plan decides, row by row, which copy wins: the gateway's
register replaces the local one only if its version is greater, a gateway message replaces
or adds a local one only if greater (the seed's ``incomingAt <= localUpdated`` rule, ties
broken as ``eventlog.app.gateway.rows`` says), ``cleared`` takes the greater of the two, and
messages older than it are gone. Then it writes the events that take the local session to
that target state:

* nothing visible any more: ``session.deleted``;
* not visible locally yet: ``session.created`` (unless the register is dead: then the
  first ``message.appended`` creates it, as it did on the gateway) and the messages;
* both visible, and the difference can be said with ``session.updated`` (title, explicit
  preview, metadata keys added or changed), ``message.updated`` (content, tool calls, extra
  keys added or changed) and ``message.appended``: those;
* otherwise (a local message must go, a metadata key must disappear, created_at differs
  because both sides created the key...): the session is rebuilt, ``session.deleted`` then
  created again with every surviving message in its order. The log keeps the old events.

Appended messages carry the local store's dedup key (``msg:<key>:<generation>:<id>``), so a
later ``add_message`` with the same id stays a no-op. The plan also lists the final
version of every row it touched; ``sync.pulled`` carries them (see ``sync_state``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.rows import ZERO, MessageRow, SessionRow, Version, iso_of_ms, ms_of_iso
from eventlog.app.gateway.sync_state import Contents, LocalMsg, LocalReg, SyncState
from eventlog.app.workspace import Workspace
from eventlog.events import (
    Event,
    MessageAppended,
    MessageUpdated,
    SessionConsolidated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from eventlog.timeutil import normalize_time


@dataclass
class Plan:
    """Events for one page, and the final versions ``sync.pulled`` records."""

    events: list[Event] = field(default_factory=list)
    sessions: list[list[Any]] = field(default_factory=list)
    messages: list[list[Any]] = field(default_factory=list)
    applied_sessions: int = 0
    applied_messages: int = 0
    ignored: int = 0  # incoming rows not newer than the local copy
    rebuilt: int = 0
    changed: bool = False  # anything at all to record (events, or versions the local copy lacks)


class _Planner:
    def __init__(self, ws: Workspace, state: SyncState, first_seq: int) -> None:
        self.state = state
        self.contents = Contents(ws, state)
        self.plan = Plan()
        self.next_seq = first_seq  # the seq the next planned event will get

    def add(self, ev: Event) -> int:
        self.plan.events.append(ev)
        self.next_seq += 1
        return self.next_seq - 1

    # -- comparisons -------------------------------------------------------------------

    def local_version(self, key: str, mid: str, lm: LocalMsg, other: Version) -> Version:
        """The local message's version, hashing its content only if the comparison needs it."""
        if (lm.ms, lm.origin) != other[:2]:
            return (lm.ms, lm.origin, lm.rev or "")
        return self.contents.version(key, mid)

    # -- one session -----------------------------------------------------------------------

    def session(self, key: str, inc: SessionRow | None, inc_msgs: list[MessageRow], *, changed: bool) -> None:
        """Plan one session: ``inc`` is the gateway's register (``changed``: it is one of the page's changes)."""
        local = self.state.regs.get(key)
        lvis = local is not None and local.visible
        l_version = local.version() if local is not None else ZERO
        take = inc is not None and inc.version > l_version
        if changed and inc is not None and inc.version < l_version:
            self.plan.ignored += 1
        cleared = max(local.cleared if local is not None else ZERO, inc.cleared if inc is not None else ZERO)
        if take:
            assert inc is not None
            t, t_version = inc, inc.version
            self.plan.applied_sessions += 1
        else:
            t = local.row() if local is not None else SessionRow(key=key)
            t_version = l_version

        target: dict[str, MessageRow | None] = {}  # None: the local copy stays
        if lvis:
            assert local is not None
            target = dict.fromkeys(local.msgs)
        for m in inc_msgs:
            lm = local.msgs.get(m.message_id) if lvis and local is not None else None
            if lm is not None and not m.version > self.local_version(key, m.message_id, lm, m.version):
                self.plan.ignored += m.version != self.local_version(key, m.message_id, lm, m.version)
                continue
            target[m.message_id] = m
        for mid in [mid for mid, m in target.items() if self._older(key, mid, m, cleared)]:
            del target[mid]
        self.plan.applied_messages += sum(1 for m in target.values() if m is not None)

        visible = not t.deleted or bool(target)
        if not visible:
            if lvis:
                self.add(SessionDeleted(session_key=key))
        elif not lvis:
            self.create(key, t, t_version, target)
        else:
            assert local is not None  # lvis
            if not self.incremental(key, local, t, t_version, target):
                self.rebuild(key, local, t, t_version, target)
        self.plan.sessions.append([key, *t_version, t.deleted, *cleared])
        if local is None or (t_version, t.deleted, cleared) != (l_version, local.deleted, local.cleared):
            self.plan.changed = True

    def _older(self, key: str, mid: str, m: MessageRow | None, bound: Version) -> bool:
        if bound == ZERO:
            return False
        if m is not None:
            return m.version < bound
        lm = self.state.regs[key].msgs[mid]
        return self.local_version(key, mid, lm, bound) < bound

    # -- ways to get there ---------------------------------------------------------------

    def _message_events(self, key: str, target: dict[str, MessageRow | None], gen: int | None) -> None:
        """``message.appended`` for every target message (local ones re-read); ``gen`` None: the first creates it."""
        for mid, m in target.items():
            row = m if m is not None else self.contents.get(key, mid)
            g = gen if gen is not None else self.next_seq
            gen = g
            self.add(MessageAppended(session_key=key, message_id=mid, role=row.role, content=row.content,
                                     timestamp=row.timestamp, tool_calls=row.tool_calls, extra=dict(row.extra),
                                     dedup=f"msg:{key}:{g}:{mid}"))
            self.plan.messages.append([key, mid, *row.version])

    def create(self, key: str, t: SessionRow, t_version: Version, target: dict[str, MessageRow | None]) -> None:
        gen = None
        if not t.deleted:
            gen = self.add(SessionCreated(session_key=key, title=t.title, metadata=dict(t.metadata),
                                          created_at=iso_of_ms(t.created_ms) if t.created_ms else "",
                                          project=t.project))
            if t.preview_set:
                self.add(SessionUpdated(session_key=key, preview=t.preview, updated_at=iso_of_ms(t_version[0])))
        self._message_events(key, target, gen)

    def rebuild(self, key: str, local: LocalReg, t: SessionRow, t_version: Version,
                target: dict[str, MessageRow | None]) -> None:
        self.plan.rebuilt += 1
        rows: dict[str, MessageRow | None] = {mid: (m if m is not None else self.contents.get(key, mid))
                                              for mid, m in target.items()}
        self.add(SessionDeleted(session_key=key))
        self.create(key, t, t_version, rows)
        if local.consolidated and target:
            self.add(SessionConsolidated(session_key=key, up_to_count=min(local.consolidated, len(target))))

    def incremental(self, key: str, local: LocalReg, t: SessionRow, t_version: Version,
                    target: dict[str, MessageRow | None]) -> bool:
        """Emit the events if the change can be said without rebuilding; False if it cannot."""
        if any(mid not in target for mid in local.msgs):
            return False
        if t.deleted:  # the session lives on through messages newer than a delete: fields empty
            first = next(iter(target.items()))
            row = first[1] if first[1] is not None else self.contents.get(key, first[0])
            created = ms_of_iso(normalize_time(row.timestamp))
            if local.metadata or local.project or local.preview is not None or (created and created != local.created_ms):
                return False
            title, preview, metadata = ("" if local.title else None), None, None
        else:
            if (t.created_ms != local.created_ms or t.project != local.project
                    or not set(local.metadata) <= set(t.metadata) or (local.preview is not None and not t.preview_set)):
                return False
            title = t.title if t.title != local.title else None
            preview = t.preview if t.preview_set and t.preview != local.preview else None
            metadata = dict(t.metadata) if t.metadata != local.metadata else None
        events: list[Event] = []
        if title is not None or preview is not None or metadata is not None:
            events.append(SessionUpdated(session_key=key, title=title, preview=preview, metadata=metadata,
                                         updated_at=iso_of_ms(t_version[0])))
        versions = []
        for mid, m in target.items():
            if m is None:
                continue
            versions.append([key, mid, *m.version])
            if mid not in local.msgs:
                events.append(MessageAppended(session_key=key, message_id=mid, role=m.role, content=m.content,
                                              timestamp=m.timestamp, tool_calls=m.tool_calls, extra=dict(m.extra),
                                              dedup=f"msg:{key}:{local.gen}:{mid}"))
                continue
            cur = self.contents.get(key, mid)
            if (cur.role != m.role or cur.timestamp != m.timestamp or not set(cur.extra) <= set(m.extra)
                    or (cur.tool_calls is not None and m.tool_calls is None)):
                return False
            if (cur.content, cur.tool_calls, cur.extra) != (m.content, m.tool_calls, m.extra):
                events.append(MessageUpdated(session_key=key, message_id=mid, content=m.content,
                                             tool_calls=m.tool_calls, extra=dict(m.extra)))
        for ev in events:
            self.add(ev)
        self.plan.messages.extend(versions)
        return True


def plan_page(ws: Workspace, state: SyncState, page: Page, first_seq: int) -> Plan:
    """The events (and final versions) that apply ``page`` to the local state; the first event gets ``first_seq``."""
    planner = _Planner(ws, state, first_seq)
    by_key: dict[str, list[MessageRow]] = {}
    for m in page.messages:
        by_key.setdefault(m.key, []).append(m)
    for key in page.keys():  # noqa: SIM118 - Page.keys() is a method (keys in change order), not a dict's
        inc = page.sessions.get(key) or page.context.get(key)
        planner.session(key, inc, by_key.get(key, []), changed=key in page.sessions)
    plan = planner.plan
    plan.changed = plan.changed or bool(plan.events) or bool(plan.messages)
    return plan


def register_differs(state: SyncState, inc: SessionRow) -> bool:
    """True if the gateway's register of a session is news to this device (a pull would record something)."""
    local = state.regs.get(inc.key)
    if local is None:
        return True
    return inc.version > local.version() or inc.cleared > local.cleared
