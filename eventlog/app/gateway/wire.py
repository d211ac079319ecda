"""The HTTP sync API's messages (JSON, encoded and decoded with msgspec), shared by client and server.

Rows travel as JSON arrays (``array_like``) in the order of ``rows.SessionRow`` and
``rows.MessageRow``. What a *device* sends (``PushBody``) is typed strictly: the server
refuses a body whose fields have the wrong shape before it touches the database. What the
*server* sends back (``PageBody``) keeps ``metadata``, ``tool_calls`` and ``extra`` as any
JSON value, exactly as the gateway holds them, so the device screens each row itself
(``screen``) and refuses only the bad ones, as direct sync does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from eventlog.app.gateway import rows as R
from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.ops import Rejected
from eventlog.app.gateway.screen import MARIADB_JSON_DEPTH

if TYPE_CHECKING:
    from eventlog.app.gateway.erasure import GatewayErasure, Removal

API_PREFIX = "/api/sync/v1"
API_VERSION = 1
MAX_PUSH_ROWS = 20_000  # rows (sessions + messages) one push request may carry

Version = tuple[int, str, str]


class WireSession(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    key: str
    title: str
    preview: str
    preview_set: bool
    metadata: dict[str, Any]
    project: str
    created_ms: int
    deleted: bool
    version: Version
    cleared: Version
    active_ms: int


class WireMessage(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    key: str
    message_id: str
    role: str
    content: str
    timestamp: str
    tool_calls: list[Any] | None
    extra: dict[str, Any]
    version: Version


class PushBody(msgspec.Struct, forbid_unknown_fields=True):
    sessions: list[WireSession]
    messages: list[WireMessage]


class WireRejected(msgspec.Struct, array_like=True):
    key: str
    message_id: str | None
    reason: str
    size: int = 0


class PushResult(msgspec.Struct):
    change_seq: int
    sent: int
    rejected: list[WireRejected] = []


class ChangesBody(msgspec.Struct, forbid_unknown_fields=True):
    after: int
    skip: list[int] = []
    limit: int = 1000


class PendingBody(msgspec.Struct, forbid_unknown_fields=True):
    after: int
    skip: list[int] = []


class PageSession(msgspec.Struct, array_like=True):
    """A session register as the server sends it (metadata: any JSON, screened by the device)."""

    key: str
    title: str
    preview: str
    preview_set: bool
    metadata: Any
    project: str
    created_ms: int
    deleted: bool
    version: Version
    cleared: Version
    active_ms: int
    change_seq: int


class PageMessage(msgspec.Struct, array_like=True):
    key: str
    message_id: str
    role: str
    content: str
    timestamp: str
    tool_calls: Any
    extra: Any
    version: Version
    pos: int
    change_seq: int


class PageBody(msgspec.Struct):
    watermark: int
    more: bool
    sessions: list[PageSession]
    context: list[PageSession]
    messages: list[PageMessage]


class PendingResult(msgspec.Struct):
    sessions: list[PageSession]
    messages: int
    top: int


class LoginBody(msgspec.Struct, forbid_unknown_fields=True):
    email: str
    password: str
    label: str = ""


class LoginResult(msgspec.Struct):
    token: str
    email: str
    epoch: str


class Me(msgspec.Struct):
    """Who a token belongs to, and the server's limits."""

    api: int
    user_id: int
    email: str
    created_ms: int
    target: str  # the database the server serves (host:port/database): the sync positions' target
    max_row_bytes: int
    max_body_bytes: int
    flavour: str = "unknown"  # the database's flavour and JSON depth limit (``screen.Limits``; absent from older
    json_depth: int = MARIADB_JSON_DEPTH  # servers: the stricter MariaDB's)


class ErrorBody(msgspec.Struct):
    error: str


ErasureId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
RefName = Annotated[str, msgspec.Meta(max_length=128)]


class EraseBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``POST /erase``: what one ``evlog erase`` removes (``erasure.Removal``); names and hashed names, except
    ``needles``: the starts of the erased texts, which the server only compares with titles and previews
    it holds (never stores or logs them)."""

    erasure_id: ErasureId
    origin: Annotated[str, msgspec.Meta(max_length=255)]
    sessions: list[str]
    messages: list[tuple[str, str]]
    refs: list[RefName]
    needles: list[bytes] = []
    dry_run: bool = False
    events: list[tuple[str, int]] = []  # origin keys of the erased events (sent only when there are any)


class EraseResult(msgspec.Struct):
    rows: dict[str, int]  # table -> rows found (dry run) or deleted
    id: int  # the gateway erasure's id (0 for a dry run)


class ErasuresBody(msgspec.Struct, forbid_unknown_fields=True):
    after: int = 0


class WireErasure(msgspec.Struct, array_like=True):
    id: int
    erasure_id: str
    origin: str
    refs: list[str]


class ErasuresResult(msgspec.Struct):
    erasures: list[WireErasure]


# --------------------------------------------------------------------------- conversions


def _v(v: Version | list[Any]) -> Version:
    """A version as a tuple: msgspec decodes one so, a row built in Python may hold a list."""
    ms, origin, rev = v
    return (ms, origin, rev)


def session_to_wire(r: R.SessionRow) -> WireSession:
    return WireSession(r.key, r.title, r.preview, r.preview_set, r.metadata, r.project, r.created_ms, r.deleted,
                       _v(r.version), _v(r.cleared), r.active_ms)


def session_from_wire(w: WireSession) -> R.SessionRow:
    return R.SessionRow(key=w.key, title=w.title, preview=w.preview, preview_set=w.preview_set, metadata=w.metadata,
                        project=w.project, created_ms=w.created_ms, deleted=w.deleted, version=_v(w.version),
                        cleared=_v(w.cleared), active_ms=w.active_ms)


def page_session(r: R.SessionRow) -> PageSession:
    return PageSession(r.key, r.title, r.preview, r.preview_set, r.metadata, r.project, r.created_ms, r.deleted,
                       _v(r.version), _v(r.cleared), r.active_ms, r.change_seq)


def session_from_page(w: PageSession) -> R.SessionRow:
    return R.SessionRow(key=w.key, title=w.title, preview=w.preview, preview_set=w.preview_set, metadata=w.metadata,
                        project=w.project, created_ms=w.created_ms, deleted=w.deleted, version=_v(w.version),
                        cleared=_v(w.cleared), active_ms=w.active_ms,
                        change_seq=w.change_seq)


def page_message(m: R.MessageRow) -> PageMessage:
    return PageMessage(m.key, m.message_id, m.role, m.content, m.timestamp, m.tool_calls, m.extra,
                       _v(m.version), m.pos, m.change_seq)


def message_from_page(w: PageMessage) -> R.MessageRow:
    return R.MessageRow(key=w.key, message_id=w.message_id, role=w.role, content=w.content, timestamp=w.timestamp,
                        tool_calls=w.tool_calls, extra=w.extra, version=_v(w.version),
                        pos=w.pos, change_seq=w.change_seq)


def page_to_wire(p: Page) -> PageBody:
    return PageBody(p.watermark, p.more, [page_session(r) for r in p.sessions.values()],
                    [page_session(r) for r in p.context.values()], [page_message(m) for m in p.messages])


def page_from_wire(b: PageBody) -> Page:
    page = Page(watermark=b.watermark, more=b.more)
    page.sessions = {w.key: session_from_page(w) for w in b.sessions}
    page.context = {w.key: session_from_page(w) for w in b.context}
    page.messages = [message_from_page(w) for w in b.messages]
    return page


def rejected_to_wire(r: Rejected) -> WireRejected:
    return WireRejected(r.key, r.message_id, r.reason, r.size)


def rejected_from_wire(w: WireRejected) -> Rejected:
    return Rejected(w.key, w.message_id, w.reason, w.size)


def removal_to_wire(r: Removal, dry_run: bool) -> EraseBody:
    return EraseBody(erasure_id=r.erasure_id, origin=r.origin, sessions=list(r.sessions),
                     messages=[(k, m) for k, m in r.messages], refs=list(r.refs), needles=list(r.needles),
                     dry_run=dry_run, events=[(o, s) for o, s in r.events])


def removal_from_wire(b: EraseBody) -> Removal:
    from eventlog.app.gateway.erasure import Removal

    return Removal(sessions=tuple(b.sessions), messages=tuple((k, m) for k, m in b.messages), refs=tuple(b.refs),
                   needles=tuple(b.needles), erasure_id=b.erasure_id, origin=b.origin,
                   events=tuple((o, s) for o, s in b.events))


def erasure_to_wire(e: GatewayErasure) -> WireErasure:
    return WireErasure(e.id, e.erasure_id, e.origin, list(e.refs))


def erasure_from_wire(w: WireErasure) -> GatewayErasure:
    from eventlog.app.gateway.erasure import GatewayErasure

    return GatewayErasure(w.id, w.erasure_id, w.origin, tuple(w.refs))
