"""The one screen every sync path runs: a row the database or the log would refuse never blocks the rest.

Every way a row travels is screened here, by the same functions, before it is written:

* **towards the gateway** (``gateway_session_problem``, ``gateway_message_problem``): a direct
  ``--dsn`` push (``ops.prepare`` on the device), an HTTP push (``http_client.HttpRemote``
  before sending, and the server's ``ops.prepare`` again before its INSERT) and the
  in-memory gateway. The checks mirror every limit of the tables (``schema``): the JSON
  shape of ``metadata`` / ``tool_calls`` / ``extra``, their nesting depth (MariaDB's JSON
  check refuses 32 nested containers, MySQL's 100: ``Limits`` for the server's flavour,
  the stricter when unknown), the byte length of every TEXT column and the characters of
  every VARCHAR (both read from the schema's own DDL, ``COLUMNS``), text that is not
  UTF-8 (a lone surrogate), times a DATETIME cannot hold, and versions of the wrong form.
  A register that was never written (a session made only by ``message.appended``) has
  the version ``(0, "", "")`` and is taken, on every path.
* **from the gateway** (``screen_page``, a pull): the event(s) a row would become must pass
  the log's own checks (``eventlog.validate`` and the writer's type check: encode, then
  decode back into the event type); the JSON columns are only checked to be JSON by the
  server, and a hand-written SQL edit, another program or an older writer can leave
  ``tool_calls`` an object, ``metadata`` a list, a role the log does not take.

A refused row becomes a ``Rejected`` (what it is, why); the sync records it in the log (an
``offset.reset`` with policy ``rejected``), ``evlog sync status`` lists it, and the rest goes
through. A row the database still refuses despite the screen (a limit it does not know) is
isolated by ``ops.write`` (the batch again, row by row) and refused the same way: only an
outage fails a sync.

**Versions from peers are clamped** (``clamp_ms``): a version stamped after the receiver's now +
``$EVLOG_SYNC_CLOCK_SKEW`` seconds (a day by default; a peer's broken clock, a forged request, a
hand-written 9999-12-31) is taken as that ceiling (``ceiling_ms``), on the gateway when a push
is written (its own clock: the server's, also for direct sync) and on a device when a pull is
applied,
so a later edit or delete (stamped ``max(now, seen + 1 ms)``) still wins and never overflows
a DATETIME. A clamped version is not what its writer believes it wrote, so a writer whose
clock is further ahead than the window (or a reader further behind) may keep its own view
of that row until the row changes again; that is why the default window is a day, not
minutes: it catches broken clocks and forged stamps, never ordinary drift.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from eventlog import codec
from eventlog.app.gateway import schema
from eventlog.app.gateway.changes import Page
from eventlog.app.gateway.rows import MessageRow, SessionRow, Version, iso_of_ms
from eventlog.errors import ConfigError, InvalidEventError
from eventlog.events import Event, MessageAppended, SessionCreated, SessionUpdated
from eventlog.validate import validate_event


@dataclass
class Rejected:
    """A row the gateway cannot take (or a pull cannot turn into an event), and why."""

    key: str
    message_id: str | None  # None: the session register
    reason: str
    size: int = 0  # bytes of the rendered row, when size was the reason
    seq: int = 0  # push: the log record it came from; pull: the gateway change counter value

    def describe(self) -> str:
        what = f"message {_short(self.message_id)} of session {_short(self.key)}" if self.message_id is not None \
            else f"session {_short(self.key)}"
        return f"{what}: {self.reason}"


def _short(text: str, n: int = 120) -> str:
    r = repr(text)
    return r if len(r) <= n else r[: n - 1] + "…"


# --------------------------------------------------------------------------- the database's limits

MARIADB_JSON_DEPTH = 31  # MariaDB's JSON_VALID (the JSON columns' CHECK) refuses 32 nested containers
MYSQL_JSON_DEPTH = 100  # MySQL's JSON type refuses more than 100 (JSON_DOCUMENT_MAX_DEPTH)
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: the last time a DATETIME(3) holds
ENV_SKEW = "EVLOG_SYNC_CLOCK_SKEW"  # seconds a peer's version may be ahead of the receiver's clock (clamped beyond)
DEFAULT_SKEW_S = 86_400  # one day: see the module docstring for why not minutes
TYPE_BYTES = {"TEXT": 65_535, "LONGTEXT": 4_294_967_295}  # byte limits of the text types the schema uses


@dataclass(frozen=True)
class Limits:
    """What one server takes: its flavour and JSON depth limit (``for_server``)."""

    flavour: str = "unknown"
    json_depth: int = MARIADB_JSON_DEPTH

    @classmethod
    def for_server(cls, version: str) -> Limits:
        """The limits of a server from its ``SELECT VERSION()`` (the stricter MariaDB's when unsure)."""
        if not version or "mariadb" in version.lower():
            return cls("mariadb" if version else "unknown", MARIADB_JSON_DEPTH)
        return cls("mysql", MYSQL_JSON_DEPTH)  # (MYSQL below)


STRICTEST = Limits()
MYSQL = Limits("mysql", MYSQL_JSON_DEPTH)


def limits_for(version: str) -> Limits:
    """The limits of the server whose ``SELECT VERSION()`` is ``version`` (what a connection looks up)."""
    return Limits.for_server(version)


class _CaptureDDL:
    """A cursor that keeps the statements a migration would run (to read the schema's columns from them)."""

    def __init__(self) -> None:
        self.sql: list[str] = []

    def execute(self, sql: str, params: Any = None) -> None:
        self.sql.append(sql)


_COLUMN = re.compile(r"^\s*([a-z_]+) (TEXT|LONGTEXT|JSON|VARCHAR\((\d+)\))[\s,]", re.MULTILINE)


def _schema_columns() -> dict[str, dict[str, tuple[str, int]]]:
    """table -> column -> (type, limit: bytes for TEXT types, characters for VARCHAR), from the migrations."""
    cur = _CaptureDDL()
    for fn in schema.MIGRATIONS:  # every migration, in order: a later one may alter a column
        fn(cur)
    out: dict[str, dict[str, tuple[str, int]]] = {}
    for sql in cur.sql:
        table = re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", sql)
        if table is None:
            continue
        cols = out.setdefault(table.group(1), {})
        for name, kind, chars in _COLUMN.findall(sql):
            cols[name] = ("VARCHAR", int(chars)) if chars else (kind, TYPE_BYTES.get(kind, 0))
    return out


#: The text columns of the gateway tables and their limits, read from the schema (a test checks them against
#: the server's information_schema).
COLUMNS = _schema_columns()
_SAFE_CHARS = 64  # ASCII text this long fits every text column of the schema (the shortest is VARCHAR(64))
_ORIGIN = re.compile(r"[A-Za-z0-9:._@-]{1,64}")
_REV = re.compile(r"[A-Za-z0-9:_-]{0,64}")


def now_ms() -> int:
    """The receiver's clock, in ms since the epoch."""
    return int(time.time() * 1000)


def skew_ms() -> int:
    """How far ahead of the receiver a peer's version may be: ``$EVLOG_SYNC_CLOCK_SKEW`` seconds, else a day."""
    raw = os.environ.get(ENV_SKEW, "")
    try:
        seconds = float(raw) if raw else DEFAULT_SKEW_S
    except ValueError:
        raise ConfigError(f"${ENV_SKEW} must be a number of seconds (got {raw!r})") from None
    if not 0 <= seconds <= 100 * 365 * 86400:
        raise ConfigError(f"${ENV_SKEW} must be between 0 and 100 years in seconds (got {raw!r})")
    return int(seconds * 1000)


def ceiling_ms(now: int | None = None) -> int:
    """The latest version time a receiver whose clock reads ``now`` (default: this machine's) takes."""
    return min(MAX_MS, (now_ms() if now is None else now) + skew_ms())


def clamp_ms(ms: int, ceiling: int) -> int:
    """A peer's time, clamped to at most ``ceiling`` (``ceiling_ms``; see the module docstring)."""
    return ms if ms <= ceiling else ceiling


def clamp_version(v: Version, ceiling: int) -> Version:
    """``v`` with its time clamped (``clamp_ms``); the same tuple when it needed none."""
    return v if v[0] <= ceiling else (ceiling, v[1], v[2])


def json_depth(value: Any, limit: int) -> int:
    """How many containers the deepest path of ``value`` crosses (counting stops past ``limit``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            items: Any = v.values()
        elif isinstance(v, list | tuple):
            items = v
        else:
            continue
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        stack.extend((x, d + 1) for x in items)
    return deepest




def _json_problem(name: str, value: Any, want: type, limits: Limits, *, none_ok: bool = False) -> str | None:
    if (value is None and none_ok) or (type(value) is want and not value):  # the common cases: null, {} or []
        return None
    if not isinstance(value, want):
        return f"{name} is a JSON {_kind(value)}, not {'a list' if want is list else 'an object'}"
    depth = json_depth(value, limits.json_depth)
    if depth > limits.json_depth:
        return (f"{name} is nested {depth if depth <= limits.json_depth + 1 else 'more than ' + str(depth - 1)} "
                f"levels deep; the {limits.flavour} server's JSON check takes at most {limits.json_depth}")
    return None  # (a value JSON cannot encode is refused where the row is encoded: ops.prepare, http_client)


def _text_problem(table: str, column: str, value: Any) -> str | None:
    if type(value) is not str:
        return f"{column} is a {type(value).__name__}, not text"
    if len(value) <= _SAFE_CHARS and value.isascii():  # the common case: short ASCII fits every column
        return None
    kind, limit = COLUMNS[table].get(column, ("LONGTEXT", TYPE_BYTES["LONGTEXT"]))
    if kind == "LONGTEXT":  # bounded by max_allowed_packet, which ops.prepare checks as it renders (and encodes)
        return None
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return f"{column} is not valid UTF-8 text (a lone surrogate)"
    if kind == "VARCHAR":
        if len(value) > limit:
            return f"{column} is {len(value)} characters, more than its column VARCHAR({limit}) holds"
    elif size > limit:
        return f"{column} is {size} bytes, more than its {kind} column holds ({limit})"
    return None


def _time_ok(ms: Any) -> bool:
    return type(ms) is int and 0 <= ms <= MAX_MS


def version_problem(v: Any, *, zero_ok: bool = False) -> str | None:
    """Why ``v`` is not a version the tables hold: (ms in the DATETIME range, origin, content hash)."""
    try:
        ms, origin, rev = v
    except (TypeError, ValueError):
        return "its version is not (ms, origin, hash)"
    if zero_ok and (ms, origin, rev) == (0, "", ""):
        return None
    if not _time_ok(ms):
        return f"its version's time {ms!r} is outside what a DATETIME holds"
    if type(origin) is not str or not _ORIGIN.fullmatch(origin) or type(rev) is not str or not _REV.fullmatch(rev):
        return "its version is not (ms, origin of [A-Za-z0-9:._@-]{1,64}, hash of [A-Za-z0-9:_-]{0,64})"
    return None


#: What encoding a screened row may still raise (a value JSON cannot hold, a lone surrogate): the row is refused.
ENCODE_ERRORS = (msgspec.EncodeError, UnicodeEncodeError, TypeError, OverflowError, ValueError)


def gateway_session_problem(r: SessionRow, limits: Limits = STRICTEST) -> str | None:
    """Why the gateway's tables would refuse this session register (see the module docstring), or None."""
    t = "gateway_sessions"
    why = (version_problem(r.version, zero_ok=r.deleted) or version_problem(r.cleared, zero_ok=True)
           or _text_problem(t, "session_key", r.key))
    if why is None and not (_time_ok(r.created_ms) and _time_ok(r.active_ms)):
        why = "its created or active time is outside what a DATETIME holds"
    if why is None and not r.deleted:
        why = (_text_problem(t, "title", r.title) or _text_problem(t, "preview", r.preview)
               or _text_problem(t, "project", r.project) or _json_problem("metadata", r.metadata, dict, limits))
    return why


def gateway_message_problem(key: str, mid: str, role: str, content: str, timestamp: str, tool_calls: Any,
                            extra: Any, version: Any, limits: Limits = STRICTEST) -> str | None:
    """Why the gateway's tables would refuse this message (the fields of ``ops.MessageFields``), or None."""
    t = "gateway_session_messages"
    return (version_problem(version) or _text_problem(t, "session_key", key) or _text_problem(t, "message_id", mid)
            or _text_problem(t, "role", role) or _text_problem(t, "content", content)
            or _text_problem(t, "timestamp", timestamp)
            or _json_problem("tool_calls", tool_calls, list, limits, none_ok=True)
            or _json_problem("extra", extra, dict, limits))


#: One message to push: key, message id, role, content, timestamp, tool calls, extra, version.
MessageFields = tuple[str, str, str, str, str, "list[Any] | None", "dict[str, Any]", Version]


def screen_push(sessions: list[SessionRow], messages: list[MessageFields], limits: Limits = STRICTEST,
                ceiling: int | None = None) -> tuple[list[SessionRow], list[MessageFields], list[Rejected]]:
    """The rows of a push batch the gateway's tables take, and the refused ones with why.

    A refused register takes its messages in the batch with it (they would have no session
    row to belong to). With ``ceiling`` (the receiving gateway's ``ceiling_ms``), versions
    and activity times past it are clamped to it (the kept rows are copies then).
    """
    rejected: list[Rejected] = []
    refused: set[str] = set()
    kept: list[SessionRow] = []
    for r in sessions:
        why = gateway_session_problem(r, limits)
        if why is not None:
            rejected.append(Rejected(r.key, None, why))
            refused.add(r.key)
        else:
            kept.append(r if ceiling is None else _clamped_session(r, ceiling))
    fine: list[MessageFields] = []
    for f in messages:
        key, mid, role, content, timestamp, tool_calls, extra, version = f
        why = "its session's register was refused in the same batch" if key in refused else \
            gateway_message_problem(key, mid, role, content, timestamp, tool_calls, extra, version, limits)
        if why is not None:
            rejected.append(Rejected(key, mid, why))
        elif ceiling is not None and version[0] > ceiling:
            fine.append((key, mid, role, content, timestamp, tool_calls, extra, clamp_version(version, ceiling)))
        else:
            fine.append(f)
    return kept, fine, rejected


def _clamped_session(r: SessionRow, ceiling: int) -> SessionRow:
    if max(r.version[0], r.cleared[0], r.active_ms) <= ceiling:
        return r
    return replace(r, version=clamp_version(r.version, ceiling), cleared=clamp_version(r.cleared, ceiling),
                   active_ms=clamp_ms(r.active_ms, ceiling))


# --------------------------------------------------------------------------- from the gateway (pull)


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


def clamp_page(page: Page, ceiling: int | None = None) -> None:
    """Clamp every version of ``page`` stamped past this device's ``ceiling_ms`` (see the module docstring)."""
    top = ceiling_ms() if ceiling is None else ceiling
    for regs in (page.sessions, page.context):
        for r in regs.values():
            r.version, r.cleared, r.active_ms = clamp_version(r.version, top), clamp_version(r.cleared, top), \
                clamp_ms(r.active_ms, top)
    for m in page.messages:
        m.version = clamp_version(m.version, top)


def screen_page(page: Page) -> list[Rejected]:
    """Take every row the log would refuse out of ``page`` and clamp future versions; the refused, with why."""
    clamp_page(page)
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
