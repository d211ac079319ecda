"""Screening pulled rows: a gateway row the log would refuse never reaches it, and never blocks a pull.

The gateway's JSON columns are only checked to be JSON by the server; a hand-written SQL
edit, another program or an older writer can leave ``tool_calls`` an object, ``metadata``
a list, ``extra`` a string, a role the log does not take, a 10 000-character key. Turned
into events, such rows would be refused at the log's door (``InvalidEventError``) and the
whole pull, holding them, would fail again on every run.

So a pull screens every row of a page before planning it: it builds the event(s) the row
would become and runs exactly the log's own checks on them (``eventlog.validate`` and the
writer's type check: encode, then decode back into the event type). A row that fails is
taken out of the page and returned as ``ops.Rejected`` with the check's message; the pull
records it in the log with the page (an ``offset.reset`` with policy ``rejected``, see
``sync``), so ``evlog sync status`` and ``evlog offsets`` show it, and moves on. The row is
fetched again if it changes on the gateway (a fixed row gets a new change counter value).
"""

from __future__ import annotations

import msgspec

from eventlog import codec
from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.ops import Rejected
from eventlog.app.gateway.rows import MessageRow, SessionRow, iso_of_ms
from eventlog.errors import InvalidEventError
from eventlog.events import Event, MessageAppended, SessionCreated, SessionUpdated
from eventlog.validate import validate_event


def event_problem(ev: Event) -> str | None:
    """Why the log would refuse ``ev`` (its own checks), or None if it would take it."""
    try:
        validate_event(ev)
        codec.decode(codec.frame(ev))
    except InvalidEventError as e:
        return str(e)
    except (msgspec.MsgspecError, UnicodeEncodeError, RecursionError, TypeError, OverflowError, ValueError) as e:
        return f"{ev.type}: {e}"
    return None


def message_problem(m: MessageRow) -> str | None:
    """Why a gateway message row cannot become a ``message.appended`` (or ``message.updated``)."""
    if not isinstance(m.extra, dict):
        return f"extra is a JSON {_kind(m.extra)}, not an object"
    if m.tool_calls is not None and not isinstance(m.tool_calls, list):
        return f"tool_calls is a JSON {_kind(m.tool_calls)}, not a list"
    return event_problem(MessageAppended(session_key=m.key, message_id=m.message_id, role=m.role, content=m.content,
                                         timestamp=m.timestamp, tool_calls=m.tool_calls, extra=m.extra))


def session_problem(r: SessionRow) -> str | None:
    """Why a gateway session register cannot become ``session.created`` / ``session.updated``."""
    if not isinstance(r.metadata, dict):
        return f"metadata is a JSON {_kind(r.metadata)}, not an object"
    return (event_problem(SessionCreated(session_key=r.key, title=r.title, metadata=r.metadata,
                                         created_at=iso_of_ms(r.created_ms) if r.created_ms else "",
                                         project=r.project))
            or event_problem(SessionUpdated(session_key=r.key, preview=r.preview)))


def _kind(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def screen_page(page: Page) -> list[Rejected]:
    """Take every row the log would refuse out of ``page``; returns them with their reasons."""
    rejected: list[Rejected] = []
    for regs in (page.sessions, page.context):
        for key in [k for k, r in regs.items() if not r.deleted]:
            why = session_problem(regs[key])
            if why is not None:
                if regs is page.sessions:
                    rejected.append(Rejected(key, None, why, seq=regs[key].change_seq))
                del regs[key]
    kept = []
    for m in page.messages:
        why = message_problem(m)
        if why is None:
            kept.append(m)
        else:
            rejected.append(Rejected(m.key, m.message_id, why, seq=m.change_seq))
    page.messages = kept
    return rejected


def drop_sessions(page: Page, keys: set[str], reason: str) -> list[Rejected]:
    """Take every row of these sessions out of ``page`` (a last resort when a planned event was refused)."""
    rejected = [Rejected(k, None, reason, seq=r.change_seq) for k, r in page.sessions.items() if k in keys]
    rejected += [Rejected(m.key, m.message_id, reason, seq=m.change_seq) for m in page.messages if m.key in keys]
    page.sessions = {k: r for k, r in page.sessions.items() if k not in keys}
    page.context = {k: r for k, r in page.context.items() if k not in keys}
    page.messages = [m for m in page.messages if m.key not in keys]
    return rejected
