"""The sessions projection: ``sessions/<safe name>.jsonl`` in the seed's format, and an index.

Each session file's line 1 is the session's metadata::

    {"key","title","preview","created_at","updated_at","last_consolidated","metadata"}

then one message per line, oldest first: ``{"id","sessionKey","role","content",
"timestamp"}`` plus ``tool_calls`` when present and the message's ``extra`` fields. A
file holds at most ``MAX_FILE_MESSAGES`` (2000) messages; older ones drop out of the
file, never out of the log. Files are replaced atomically (temp + fsync + rename +
directory fsync) when flushed, so a harness reading them never sees half a file.

A ``message.updated`` event replaces the content (and tool calls and extra fields) of
the message with that id in the file; it does not add a line.

The in-memory state is an index (one ``SessionState`` per live session: metadata, how
many messages it has and the xxh3 of its file as last written) plus the message lines
appended since the last flush. ``apply`` never reads a file, so keeping the index
current is cheap and listing sessions never opens a session file. ``flush`` reads a
dirty session's file once, checks it against the index (a mismatch raises
``ProjectionDrift``: the projector then rebuilds from the log), appends the new lines,
trims to the cap and writes it back.

``updated_at`` is the newest of the session's creation time, its messages' timestamps
and the times of changes a person made (a ``session.updated`` with ``updated_at``, as the
store's ``update`` writes); a title or metadata an ingest takes from the source and a
``message.updated`` do not move it. It is normalised to UTC ``YYYY-MM-DDTHH:MM:SS.fffZ``
(naive timestamps are taken as UTC). ``title`` is the title as given; what listings show
(``SessionInfo.display``, ``shown_title``) is the given title, else the session's first real
user request (``eventlog.harness.request_title``: harness text skipped), else the source's
summary line, else its first bare slash command;
``preview`` is the start of the newest user or assistant message (as last updated) unless set explicitly.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import xxhash

from eventlog.events import (
    Event,
    MessageAppended,
    MessageUpdated,
    SessionConsolidated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from eventlog.fsio import FileSystem
from eventlog.harness import request_title
from eventlog.replication.clock import OrderState, event_time  # a received event keeps its origin's time
from eventlog.source_values import evlog_id, evlog_timestamp, parts_text
from eventlog.timeutil import source_time
from projections.base import Projection, ProjectionDrift
from projections.naming import safe_name
from projections.session_order import NO_KEY, Key, in_order, pack_keys, unpack_keys

MAX_FILE_MESSAGES = 2000
PREVIEW_CHARS = 120
SESSIONS_DIR = "sessions"
#: How the dedup key of a title an ingest took from a source's summary line starts (``eventlog.ingest``).
SUMMARY_DEDUP = "ingest:"
_nested_encoder = msgspec.json.Encoder(order="deterministic")  # sorts the keys of nested objects


#: all of a message ``_preview`` reads (its length tests included): what a session holds until the preview is read
_PREVIEW_HEAD = PREVIEW_CHARS * 4 + 1


def _preview(content: str) -> str:
    """The start of a message, whitespace folded, as a session's preview.

    Always ``" ".join(content[:PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]``, cheaper: a head with
    no whitespace but single spaces (``isprintable`` is False for every other whitespace character)
    is already folded; else the folding of a shorter prefix is a prefix of the whole folding, so it
    is enough once it holds ``PREVIEW_CHARS`` characters.
    """
    head = content[: PREVIEW_CHARS + 1]
    if head.isprintable() and "  " not in head and head[:1] != " " and (len(content) > PREVIEW_CHARS or head[-1:] != " "):
        return head[:PREVIEW_CHARS]
    folded = " ".join(content[: PREVIEW_CHARS + 40].split())
    if len(folded) >= PREVIEW_CHARS or len(content) <= PREVIEW_CHARS + 40:
        return folded[:PREVIEW_CHARS]
    return " ".join(content[: PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]


class SessionState(msgspec.Struct, kw_only=True):
    """What the index knows about one session (the keys: places in the order, ``projections.session_order``)."""

    key: str
    file: str
    title: str = ""
    #: the preview as last computed; read ``preview`` (the one accessor), which folds ``preview_raw`` first
    preview_done: str = msgspec.field(default="", name="preview")
    #: the content of the message the preview comes from, not yet folded (None: ``preview_done`` is current)
    preview_raw: str | None = None
    preview_set: bool = False  # set explicitly: not overwritten by new messages
    preview_id: str = ""  # the message the preview was taken from (a message.updated of it refreshes it)
    preview_key: Key = NO_KEY  # the newest preview's event
    # ``title`` is the title as given (session.created, the newest session.updated with one); what
    # listings show (``shown_title``) is built from these parts:
    explicit_title: str = ""  # given by session.created or a session.updated that is not a source's summary
    request_title: str = ""  # the first real user request (eventlog.harness.request_title)
    request_id: str = ""  # the message it was taken from
    request_key: Key = NO_KEY
    command_title: str = ""  # the first bare slash command
    command_key: Key = NO_KEY
    summary_title: str = ""  # the newest summary line's title (Claude Code)
    created_at: str = ""
    updated_at: str = ""
    last_consolidated: int = 0
    metadata: dict[str, Any] = {}
    project: str = ""
    count: int = 0  # messages appended since the session was created
    file_hash: str = ""  # xxh3-64 of the file as last written; "" = never written
    created_seq: int = 0
    # the oldest session.created (or, before one arrives, the oldest message) and what it gave
    created_key: Key = NO_KEY
    created_real: bool = False
    created_title: str = ""
    created_metadata: dict[str, Any] = {}
    # the newest session.updated values and each one's key ("title", "explicit", "summary", "meta:<name>")
    set_keys: dict[str, Key] = {}
    updated_title: str = ""
    updated_explicit: str = ""
    updated_metadata: dict[str, Any] = {}
    # the places of the file's lines (``pack_keys``) and the devices they name
    keys: bytes = b""
    devices: list[str] = []
    # per updated message: per field ("content", "tool_calls", an extra key) the key of the update that set it
    edits: dict[str, dict[str, Key]] = {}

    @property
    def preview(self) -> str:
        """The session's preview, computed once from the newest candidate message when first read."""
        raw = self.preview_raw
        if raw is not None:
            self.preview_done, self.preview_raw = _preview(raw), None
        return self.preview_done

    @preview.setter
    def preview(self, value: str) -> None:
        self.preview_done, self.preview_raw = value, None


def _has_preview(content: str) -> bool:
    """``_preview(content) != ""`` without folding: the head it reads holds a non-whitespace character."""
    return bool(content) and (not content[0].isspace() or bool(content[: PREVIEW_CHARS * 4].strip()))


class _SessionsState(msgspec.Struct, kw_only=True):
    index: list[SessionState] = []
    clock: OrderState = msgspec.field(default_factory=OrderState)
    deleted: dict[str, Key] = {}  # session key -> its newest session.deleted (older events of it are dropped)
    waiting: dict[str, list[tuple[Key, SessionUpdated]]] = {}  # changes newer than a delete, for the next start


class _Meta(msgspec.Struct):
    key: str
    title: str
    preview: str
    created_at: str
    updated_at: str
    last_consolidated: int
    metadata: dict[str, Any]


class _Line(msgspec.Struct, omit_defaults=True):
    """The fixed part of a message line, in the seed's key order."""

    id: Any
    sessionKey: str  # noqa: N815 - the seed's key
    role: str
    content: Any
    timestamp: Any
    tool_calls: list[Any] | None = None


#: Source values kept in ``extra`` under the line's own key when the source wrote them with another
#: type than evlog's fields have (a numeric id or timestamp, content as a list of parts): the
#: session file shows them as the source wrote them.
SOURCE_VALUE_KEYS = ("id", "content", "timestamp")


def message_line(ev: MessageAppended) -> bytes:
    """One message line of a session file (seed format, then tool_calls and extra fields)."""
    x = ev.extra
    if x and ("id" in x or "content" in x or "timestamp" in x):
        line = _Line(x.get("id", ev.message_id), ev.session_key, ev.role, x.get("content", ev.content),
                     x.get("timestamp", ev.timestamp or event_time(ev)), ev.tool_calls)
    else:
        line = _Line(ev.message_id, ev.session_key, ev.role, ev.content, ev.timestamp or event_time(ev), ev.tool_calls)
    head = _nested_encoder.encode(line)
    if not x:
        return head + b"\n"
    taken = _LINE_KEYS if ev.tool_calls is not None else _LINE_KEYS_NO_CALLS
    extra = {k: v for k, v in x.items() if k not in taken}
    if not extra:
        return head + b"\n"
    return head[:-1] + b"," + _nested_encoder.encode(extra)[1:] + b"\n"


_LINE_KEYS = frozenset(_Line.__struct_fields__)
_LINE_KEYS_NO_CALLS = _LINE_KEYS - {"tool_calls"}


def render_line(fields: dict[str, Any]) -> bytes:
    """A JSON line with the keys in the given order and every nested object's keys sorted.

    Nested order must not depend on how a dict was built (decoded from the log, or made
    in memory by the writer), or an incremental update and a replay would differ.
    """
    enc = _nested_encoder.encode
    return b"{" + b",".join(enc(k) + b":" + enc(v) for k, v in fields.items()) + b"}\n"


def _updated(line: bytes, updates: dict[str, dict[str, Any]]) -> bytes:
    """A message line with the newest value of each field its message's updates set (or unchanged).

    ``updates``: message id -> field -> value, each the newest update's that set it (content, tool
    calls, an extra field), so the line is the same whatever order the updates arrived in or how
    many flushes they were spread over.
    """
    msg = msgspec.json.decode(line)
    mid = msg.get("id")
    ups = updates.get(mid if isinstance(mid, str) else msgspec.json.encode(mid).decode())
    if not ups:
        return line
    msg.update(ups)
    core = {k: msg.pop(k) for k in _CORE_KEYS if k in msg}
    return render_line({**core, **dict(sorted(msg.items()))})


def _update_fields(ev: MessageUpdated) -> dict[str, Any]:
    """The fields a ``message.updated`` sets in its message's line."""
    fields: dict[str, Any] = {"content": ev.content}
    if ev.tool_calls is not None:
        fields["tool_calls"] = ev.tool_calls
    fields.update((k, v) for k, v in ev.extra.items() if k not in _CORE_KEYS)
    return fields


_CORE_KEYS = ("id", "sessionKey", "role", "content", "timestamp", "tool_calls")


def file_hash(data: bytes) -> str:
    """The fingerprint the index keeps of a session file."""
    return "xxh3-64:" + xxhash.xxh3_64_hexdigest(data)


class SessionsProjection(Projection):
    """Session files plus the session index (see the module docstring)."""

    name = "sessions"
    consumes = frozenset({"session.created", "session.updated", "session.deleted", "message.appended",
                          "message.updated", "session.consolidated", "replication.pulled", "replication.device"})
    checkpoint_type = _SessionsState  # the largest state by far (~2 KB a session): decoded typed, in one pass

    def __init__(self, root: str, fs: FileSystem, *, live: bool = True) -> None:
        super().__init__(root, fs, live=live)
        self.load(None)

    # -- state -----------------------------------------------------------------------

    def load(self, state: Any) -> None:
        self.index: dict[str, SessionState] = {}
        self.clock = OrderState()
        self.pending: dict[str, list[tuple[Key, bytes]]] = {}  # new message lines not yet in the file
        self.updates: dict[str, dict[str, dict[str, Any]]] = {}  # key -> message id -> field -> newest value
        self.dirty: set[str] = set()
        self.removed: set[str] = set()  # files to delete at the next flush
        self.deleted: dict[str, Key] = {}
        self.waiting: dict[str, list[tuple[Key, SessionUpdated]]] = {}
        if state is not None:
            st = msgspec.convert(state, _SessionsState)
            self.clock, self.deleted, self.waiting = st.clock, st.deleted, st.waiting
            for item in st.index:
                self.index[item.key] = item

    def state(self) -> Any:
        for s in self.index.values():
            s.preview  # noqa: B018 - folds a pending preview, so the state holds it as before
        return _SessionsState(index=list(self.index.values()), clock=self.clock, deleted=self.deleted,
                              waiting=self.waiting)

    def outputs(self) -> list[str]:
        return [os.path.join(SESSIONS_DIR, s.file) for s in self.index.values()]

    def owned_dirs(self) -> list[str]:
        return [SESSIONS_DIR]

    # -- folding ---------------------------------------------------------------------

    def apply(self, ev: Event) -> None:
        if type(ev) is MessageAppended and not self.deleted:  # the common case: no clock event, no delete to check
            self._appended(ev)
            return
        if self.clock.observe(ev):
            return
        gone = self.deleted.get(getattr(ev, "session_key", ""))
        if gone is not None and not self._later(self.clock.key(ev), gone):
            return  # older than the session's deletion (another device wrote it before the delete reached it)
        s: SessionState | None
        match ev:
            case MessageAppended():
                self._appended(ev)
            case MessageUpdated():
                self._message_updated(ev)
            case SessionCreated():
                self._created(ev)
            case SessionUpdated():
                self._session_updated(ev)
            case SessionConsolidated():
                s = self.index.get(ev.session_key)
                if s is not None and ev.up_to_count > s.last_consolidated:
                    s.last_consolidated = ev.up_to_count
                    self.dirty.add(s.key)
            case SessionDeleted():
                self._deleted(ev)

    def _deleted(self, ev: SessionDeleted) -> None:
        """The session leaves with everything of it before the delete in the order; what came after it (another
        device's, arrived first) stays, as if it had arrived after the delete: the session starts again from it."""
        key = self.clock.key(ev)
        self.deleted[ev.session_key] = key
        waiting = [(k, e) for k, e in self.waiting.pop(ev.session_key, []) if self._later(k, key)]
        if waiting:
            self.waiting[ev.session_key] = waiting
        s = self.index.get(ev.session_key)
        if s is None:
            return
        lines, keys = self._ordered(s.key)
        del self.index[s.key]
        later = [(k, ln) for k, ln in zip(keys, lines, strict=True) if self._later(k, key)]
        self.pending.pop(s.key, None)
        self.updates.pop(s.key, None)
        self.dirty.discard(s.key)
        self.removed.add(s.file)
        if later:
            self._restart(s, later, key)

    def _restart(self, old: SessionState, later: list[tuple[Key, bytes]], deleted: Key) -> None:
        """The session again from the messages written after its deletion (and changes newer than it)."""
        for k, line in later:
            msg = parse_message_line(line)
            ev = MessageAppended(session_key=old.key, message_id=msg.id, role=msg.role, content=msg.content,
                                 timestamp=msg.timestamp, tool_calls=msg.tool_calls, extra=msg.extra, seq=k[2],
                                 ts=msg.timestamp)
            self._appended(ev, key=k, line=line)
        s = self.index[old.key]
        s.created_seq = old.created_seq
        s.set_keys = {w: k for w, k in old.set_keys.items() if self._later(k, deleted)}
        s.updated_title, s.updated_explicit = old.updated_title, old.updated_explicit
        s.summary_title = old.summary_title if "summary" in s.set_keys else ""
        s.updated_metadata = {n: v for n, v in old.updated_metadata.items() if "meta:" + n in s.set_keys}
        s.edits = old.edits
        self._derive(s)

    def _later(self, key: Key, than: Key) -> bool:
        """``key`` comes after ``than`` in the order (anything comes after ``NO_KEY``)."""
        return than == NO_KEY or self.clock.later(key, than)

    def _appended(self, ev: MessageAppended, *, key: Key | None = None, line: bytes = b"") -> None:
        key = key or self.clock.key(ev)
        s = self.index.get(ev.session_key)
        if s is None:
            s = self._create(ev.session_key, ev, key)
        if not s.created_real and not self._later(key, s.created_key):  # an older message: the session's start
            s.created_key, s.created_at = key, source_time(ev.timestamp, event_time(ev))
        s.count += 1
        self.pending.setdefault(s.key, []).append((key, line or message_line(ev)))
        self._touch(s, event_time(ev), ev.timestamp)
        if (not s.preview_set and ev.role in ("user", "assistant") and self._later(key, s.preview_key)
                and _has_preview(ev.content)):  # folded when read (SessionState.preview)
            s.preview_raw, s.preview_id, s.preview_key = ev.content[:_PREVIEW_HEAD], ev.message_id, key
        if ev.role == "user":
            self._take_title(s, ev.message_id, ev.content, ev.extra, key)

    def _message_updated(self, ev: MessageUpdated) -> None:
        s = self.index.get(ev.session_key)
        if s is None:
            return
        key = self.clock.key(ev)
        known = s.edits.setdefault(ev.message_id, {})
        newer = {f: v for f, v in _update_fields(ev).items() if self._later(key, known.get(f, NO_KEY))}
        if not newer:
            return  # an older update than those already applied: nothing of it shows
        known.update((f, key) for f in newer)
        self.updates.setdefault(s.key, {}).setdefault(ev.message_id, {}).update(newer)
        self.dirty.add(s.key)  # not touched: updated_at is the last message's time, not the edit's
        if "content" not in newer:
            return
        if not s.preview_set and ev.message_id == s.preview_id and _has_preview(ev.content):
            s.preview_raw = ev.content[:_PREVIEW_HEAD]
        if ev.message_id == s.request_id:
            self._take_title(s, ev.message_id, ev.content, ev.extra, s.request_key, again=True)

    def _created(self, ev: SessionCreated) -> None:
        key = self.clock.key(ev)
        s = self.index.get(ev.session_key)
        if s is None:
            s = self._create(ev.session_key, ev)
        elif s.created_real and self._later(key, s.created_key):
            return  # a newer session.created of a live session changes nothing
        created = source_time(ev.created_at, event_time(ev))
        s.created_key, s.created_real, s.created_at, s.project = key, True, created, ev.project
        s.created_title, s.created_metadata = ev.title, dict(ev.metadata)
        s.updated_at = max(s.updated_at, created)
        self._derive(s)

    def _session_updated(self, ev: SessionUpdated, order: Key | None = None) -> None:
        key = order or self.clock.key(ev)
        s = self.index.get(ev.session_key)
        if s is None:
            if ev.session_key in self.deleted:  # newer than its delete: it changes the session when it starts again
                self.waiting.setdefault(ev.session_key, []).append((key, ev))
            return
        if ev.title is not None:
            if self._setter(s, "title", key):
                s.updated_title = ev.title
            if ev.dedup.startswith(SUMMARY_DEDUP) and ":title:" in ev.dedup:
                if self._setter(s, "summary", key):
                    s.summary_title = ev.title
            elif self._setter(s, "explicit", key):
                s.updated_explicit = ev.title
        if ev.preview is not None and (not s.preview_set or self._later(key, s.preview_key)):
            s.preview, s.preview_set, s.preview_key = ev.preview, True, key
        for name, value in (ev.metadata or {}).items():
            if self._setter(s, "meta:" + name, key):
                s.updated_metadata[name] = value
        self._derive(s)
        if ev.updated_at:  # a change a person made (the store's update); a source's title or metadata is not
            self._touch(s, event_time(ev), ev.updated_at)

    def _setter(self, s: SessionState, what: str, key: Key) -> bool:
        """True (and ``key`` kept) if ``key`` is the newest event that set ``what`` of the session."""
        if not self._later(key, s.set_keys.get(what, NO_KEY)):
            return False
        s.set_keys[what] = key
        return True

    def _derive(self, s: SessionState) -> None:
        """The session's title, explicit title and metadata from its creation and its newest updates."""
        s.title = s.updated_title if "title" in s.set_keys else s.created_title
        s.explicit_title = s.updated_explicit if "explicit" in s.set_keys else s.created_title
        s.metadata = {**s.created_metadata, **s.updated_metadata}
        self.dirty.add(s.key)

    def _create(self, key: str, ev: MessageAppended | SessionCreated, order: Key | None = None) -> SessionState:
        created = source_time(ev.timestamp if isinstance(ev, MessageAppended) else ev.created_at, event_time(ev))
        s = SessionState(key=key, file=safe_name(key, ".jsonl"), created_at=created, updated_at=created,
                         created_seq=ev.seq, created_key=order or self.clock.key(ev))
        self.index[key] = s
        self.removed.discard(s.file)
        self.dirty.add(key)
        for order, change in self.waiting.pop(key, []):
            self._session_updated(change, order)
        return s

    def _take_title(self, s: SessionState, message_id: str, content: str, extra: dict[str, Any], key: Key,
                    *, again: bool = False) -> None:
        """The request or command title from a user message, if it is the oldest that gives one
        (``again``: the request message's content changed)."""
        takes_request = again or not s.request_id or not self._later(key, s.request_key)
        if not takes_request and s.command_title and self._later(key, s.command_key):
            return  # neither title can come from a message later than those that gave them
        kind, text = request_title("user", content, extra, commands_only=not takes_request)
        if kind == "request" and takes_request:
            s.request_title, s.request_id, s.request_key = _preview(text), message_id, key
        elif kind == "command" and (not s.command_title or not self._later(key, s.command_key)):
            s.command_title, s.command_key = text, key

    def _touch(self, s: SessionState, ts: str, written: str) -> None:
        t = source_time(written, ts)
        if t > s.updated_at:
            s.updated_at = t
        self.dirty.add(s.key)

    # -- reading ---------------------------------------------------------------------

    def file_lines(self, s: SessionState) -> list[bytes]:
        """The message lines of a session file as last flushed (checked against the index)."""
        if not s.file_hash:
            return []
        try:
            with open(self.path(SESSIONS_DIR, s.file), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise ProjectionDrift(f"session file {s.file} is missing") from None
        if file_hash(data) != s.file_hash:
            raise ProjectionDrift(f"session file {s.file} does not match the index")
        return data.split(b"\n")[1:-1]

    def lines(self, key: str) -> list[bytes]:
        """Every message line the session's file holds (or will hold once flushed), in the order."""
        return self._ordered(key)[0]

    def _ordered(self, key: str) -> tuple[list[bytes], list[Key]]:
        """The session's last ``MAX_FILE_MESSAGES`` lines in the order, with their keys."""
        s = self.index[key]
        lines = [ln + b"\n" for ln in self.file_lines(s)]
        keys = unpack_keys(s.keys, s.devices)
        if len(keys) != len(lines):
            raise ProjectionDrift(f"session file {s.file} has {len(lines)} lines, the index {len(keys)} places")
        for k, line in self.pending.get(key, []):
            keys.append(k)
            lines.append(line)
        lines, keys = in_order(lines, keys, self.clock)
        lines, keys = lines[-MAX_FILE_MESSAGES:], keys[-MAX_FILE_MESSAGES:]
        updates = self.updates.get(key)
        if updates:
            lines = [_updated(ln, updates) for ln in lines]
        return lines, keys

    # -- writing ---------------------------------------------------------------------

    def render(self, s: SessionState, lines: list[bytes]) -> bytes:
        """The full file: metadata line, then the message lines."""
        meta = _Meta(s.key, s.title, s.preview, s.created_at, s.updated_at, s.last_consolidated, s.metadata)
        return _nested_encoder.encode(meta) + b"\n" + b"".join(lines)

    def flush(self) -> None:
        for name in sorted(self.removed):
            self.remove_file(os.path.join(SESSIONS_DIR, name))
        self.removed.clear()
        for key in sorted(self.dirty):
            s = self.index[key]
            lines, keys = self._ordered(key)
            data = self.render(s, lines)
            self.write_file(os.path.join(SESSIONS_DIR, s.file), data)
            s.file_hash = file_hash(data)
            s.keys = pack_keys(keys, s.devices)
            self.pending.pop(key, None)
            self.updates.pop(key, None)
        self.dirty.clear()


# -- the public view of sessions and messages (what session stores return) -----------------


class SessionInfo(msgspec.Struct, kw_only=True):
    """A session's metadata as listings show it."""

    key: str
    title: str = ""
    preview: str = ""
    created_at: str = ""
    updated_at: str = ""
    last_consolidated: int = 0
    metadata: dict[str, Any] = {}
    message_count: int = 0
    project: str = ""
    #: What a listing shows as the title (``shown_title``: given > first real request > summary > bare
    #: command). Stores that do not derive it leave it "" and ``title`` is shown (``display_title``).
    display: str = ""


class Message(msgspec.Struct, kw_only=True):
    """One message of a session."""

    id: str
    session_key: str
    role: str
    content: str
    timestamp: str = ""
    tool_calls: list[Any] | None = None
    extra: dict[str, Any] = {}


def shown_title(s: SessionState) -> str:
    """The title a listing shows: the one given explicitly, else the session's first real
    request, else the source's summary, else its first bare slash command, else ""."""
    return s.explicit_title or s.request_title or s.summary_title or s.command_title


def info_of(s: SessionState) -> SessionInfo:
    """The public view of an index entry."""
    return SessionInfo(key=s.key, title=s.title, preview=s.preview, created_at=s.created_at, updated_at=s.updated_at,
                       last_consolidated=s.last_consolidated, metadata=dict(s.metadata),
                       message_count=s.count, project=s.project, display=shown_title(s))


def display_title(info: SessionInfo) -> str:
    """The title to show for a session of any store: ``display`` where the store derives it, else ``title``."""
    return info.display or info.title


def parse_message_line(line: bytes) -> Message:
    """A session-file message line back into a Message with evlog's values (those of its event).

    A line shows a source's own id, time or content where the source wrote another type than
    evlog keeps (``SOURCE_VALUE_KEYS``: ``"id": 1``, content as parts): the Message gets
    evlog's value (``id`` "1", the parts' text; ``eventlog.source_values``). ``extra`` is the
    line's other fields, as the gateway's rows keep them (the file still shows the source's).
    """
    d = msgspec.json.decode(line)
    return Message(id=evlog_id(d.pop("id")), session_key=d.pop("sessionKey"), role=d.pop("role"),
                   content=parts_text(d.pop("content")), timestamp=evlog_timestamp(d.pop("timestamp", "")),
                   tool_calls=d.pop("tool_calls", None), extra=d)
