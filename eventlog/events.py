"""The event catalogue: every fact evlog records is one of these frozen, tagged Structs.

Each event is one JSON object per line in the log. ``type`` (the tag) comes first,
then ``seq`` and ``ts`` (assigned by the log on append), then the event's own fields.
Rules for changing this file (they keep old logs readable, see CONVENTIONS.md 5):

* add new fields only with a default; never rename a field, change its type or a tag;
* never set ``forbid_unknown_fields`` (a newer writer may add fields an older reader
  must skip);
* every subclass passes ``kw_only=True`` so base fields (``seq``, ``ts``) stay first, and
  ``frozen=True`` (inherited anyway; repeated so type checkers know it too).

``dedup`` is an optional idempotency key: when set, the log writes the event only if no
event with the same key exists (the second append returns the first one's seq).
``dedup_keys`` (on the types that have it: ``diary.lines``) are further keys one event
claims, one per item it carries: the log indexes each to the event's seq, and refuses an
append that claims a key the log or its batch already holds (the producer leaves known
items out), so each item is in the log once, as if it were an event of its own.
"""

from __future__ import annotations

from typing import Any, ClassVar, Union, cast

import msgspec


class Replica(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Where a replicated event came from (``eventlog.replication``): set only on events another device wrote.

    ``device`` and ``seq`` are its origin (the writing device and the event's seq there), ``hlc`` its
    hybrid logical clock, ``ts`` its time there, ``author`` the gateway account that pushed it, and
    ``refs`` the origin keys (``[device, seq]``) of the events its seq fields named there (by field).
    """

    device: str
    seq: int
    hlc: int
    ts: str = ""
    author: str = ""
    refs: dict[str, list[tuple[str, int]]] = {}


class Event(msgspec.Struct, tag_field="type", frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Base of every event: ``seq`` (dense, from 1) and ``ts`` (UTC, ISO 8601) are set by the log.

    ``replica`` is set only on an event received from another device (``eventlog.replication``).
    """

    #: The event's dotted type name (its tag): a class attribute, set on every type of ``EVENT_TYPES``
    #: below (read for every event a projector routes: a plain attribute, not a property's call).
    type: ClassVar[str]

    seq: int = 0
    ts: str = ""
    dedup: str = ""
    replica: Replica | None = None


# --- the log's own events ------------------------------------------------------------


class LogRecovered(Event, tag="log.recovered", kw_only=True, frozen=True):
    """Opening for write cut a torn or damaged tail off the active segment."""

    segment: str
    offset: int
    bytes_truncated: int
    reason: str
    quarantine: str = ""
    records_after_damage: int = 0
    segments_quarantined: list[str] = []


# --- sessions and messages -----------------------------------------------------------


class SessionCreated(Event, tag="session.created", kw_only=True, frozen=True):
    """A conversation session exists from now on."""

    session_key: str
    title: str = ""
    metadata: dict[str, Any] = {}
    created_at: str = ""
    project: str = ""


class SessionUpdated(Event, tag="session.updated", kw_only=True, frozen=True):
    """Session metadata changed; ``None`` fields are left as they were."""

    session_key: str
    title: str | None = None
    preview: str | None = None
    metadata: dict[str, Any] | None = None
    updated_at: str = ""


class SessionDeleted(Event, tag="session.deleted", kw_only=True, frozen=True):
    """The session and its messages leave the projections (the log keeps them)."""

    session_key: str


class MessageAppended(Event, tag="message.appended", kw_only=True, frozen=True):
    """One chat message of a session, as the agent harness saw it."""

    session_key: str
    message_id: str
    role: str
    content: str
    timestamp: str = ""
    tool_calls: list[Any] | None = None
    extra: dict[str, Any] = {}
    redacted: list[str] = []  # kinds of secrets ingest replaced with a placeholder (never the secret itself)


class MessageUpdated(Event, tag="message.updated", kw_only=True, frozen=True):
    """A stored message's content changed (e.g. a response still being written when first read)."""

    session_key: str
    message_id: str
    content: str
    tool_calls: list[Any] | None = None
    extra: dict[str, Any] = {}
    redacted: list[str] = []  # as in message.appended


class SessionConsolidated(Event, tag="session.consolidated", kw_only=True, frozen=True):
    """The session's messages up to ``up_to_count`` were summarised into history.

    ``up_to_seq`` is the consolidator's position: the seq of the last summarised
    ``message.appended`` (0 in logs written before it; the count is then converted)."""

    session_key: str
    up_to_count: int
    up_to_message_id: str = ""
    up_to_seq: int = 0
    run_id: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


class ConsolidationFailed(Event, tag="consolidation.failed", kw_only=True, frozen=True):
    """Summarising a session failed; AutoCompact backs off this session (state kept in the log)."""

    session_key: str
    reason: str
    run_id: str = ""


# --- history and long-term memory ----------------------------------------------------


class HistoryAppended(Event, tag="history.appended", kw_only=True, frozen=True):
    """An entry of Dream's input (its cursor is this event's seq): a summary, digest or note."""

    text: str
    source: str
    project: str = ""
    session_key: str = ""
    message_ids: list[str] = []
    refs: dict[str, Any] = {}


class MemoryAppended(Event, tag="memory.appended", kw_only=True, frozen=True):
    """One fact added under a section of the global (user) or a project's MEMORY.md."""

    fact_id: str
    scope: str  # "user" (global MEMORY.md) or "project"
    section: str
    text: str
    project: str = ""
    run_id: str = ""
    sources: list[int] = []  # history cursors (seqs of history.appended events) it came from
    subject: str = ""  # who or what it is about: "user", a person's name, or "project"
    when: str = ""  # when it became true: its source message's time (UTC)
    source_refs: list[str] = []  # the messages it came from: "<session key>#<message id>"
    source_seqs: list[int] = []  # their seqs in the log
    pinned: bool = False  # never leaves MEMORY.md for the budget
    by: str = ""  # who added it: "dream" (default), "user", "hand-edit"


class MemorySuperseded(Event, tag="memory.superseded", kw_only=True, frozen=True):
    """A fact was replaced by a newer one (``by_fact_id``): it leaves MEMORY.md, the chain stays in the log."""

    fact_id: str
    by_fact_id: str
    run_id: str = ""
    reason: str = ""
    by: str = ""  # "dream", "user", "hand-edit"


class MemoryForgotten(Event, tag="memory.forgotten", kw_only=True, frozen=True):
    """A fact was forgotten on purpose: it leaves MEMORY.md and is never learned again from the same sources."""

    fact_id: str
    by: str  # "user", "dream", "hand-edit"
    reason: str = ""
    run_id: str = ""


class MemoryEdited(Event, tag="memory.edited", kw_only=True, frozen=True):
    """A fact's text was changed (by a user, or by a hand edit of MEMORY.md turned into this event)."""

    fact_id: str
    text: str
    by: str = "user"


class MemoryPinned(Event, tag="memory.pinned", kw_only=True, frozen=True):
    """A fact was pinned (it never leaves MEMORY.md for the budget) or unpinned."""

    fact_id: str
    pinned: bool = True


class MemoryArchived(Event, tag="memory.archived", kw_only=True, frozen=True):
    """A fact left MEMORY.md to keep it within its budget; still in the log and found by recall."""

    fact_id: str
    reason: str = ""


class MemoryRestored(Event, tag="memory.restored", kw_only=True, frozen=True):
    """A forgotten fact was brought back (``evlog memory unforget``): it is active again."""

    fact_id: str
    by: str = "user"


# --- erasure (eventlog.erasure): the only sanctioned change to a sealed segment ---------


class RecordErased(Event, tag="log.erased", kw_only=True, frozen=True):
    """What an erased line became: same ``seq``, ``ts`` and ``dedup`` key, no payload (never appended, only
    written in place by ``eventlog.erasure``; ``erasure`` is the seq of the ``log.erasure`` that allows it)."""

    erasure: int
    was: str = ""  # the erased event's type
    origin: str = ""  # the log's device origin, kept on its first line only (eventlog.app.gateway.sync_state)
    pad: str = ""  # spaces that give the marker the erased line's length, so byte positions stay valid
    dedup_keys: list[str] = []  # the erased event's further keys (``diary.lines``), hashed like ``dedup``


class ErasureRecorded(Event, tag="log.erasure", kw_only=True, frozen=True):
    """An authorised erasure: the seqs it replaces by ``log.erased`` lines and each marker line's checksum.

    It never holds the erased text (nor a hash of it): only seqs, the kind of target and counts.
    """

    erasure_id: str
    kind: str  # "fact", "session", "subject", "text" or "sync" (applied from another device)
    seqs: list[int]
    markers: list[str]  # "xxh3-64:<hex>" of each marker line, in the order of ``seqs``
    refs: list[str] = []  # ``ref_hash`` of each "<session key>\0<message id>" / "fact\0<id>" removed (for other devices)
    origin: str = ""  # the device an erasure pulled by sync came from
    origins: list[tuple[str, int]] = []  # origin keys (device, origin seq) of the replicated events it erased
    #: The shared projects of what it erased (names, never text): its envelope goes to their teammates
    #: (``eventlog.replication.origin``); one that erased in several is followed by one empty erasure per other project.
    projects: list[str] = []


# --- processors: offsets, diary, short- and long-term memory ---------------------------


class OffsetCommitted(Event, tag="offset.committed", kw_only=True, frozen=True):
    """A processor consumed the log up to and including ``record_seq`` (at ``segment``/``position``)."""

    processor: str
    record_seq: int  # last consumed record; its line ends at byte ``position`` of ``segment``
    segment: str
    position: int
    fingerprint: str


class OffsetReset(Event, tag="offset.reset", kw_only=True, frozen=True):
    """A processor's position did not hold and was moved; ``lost_bytes`` were never read."""

    processor: str
    reason: str
    policy: str = ""
    from_seq: int = 0
    to_seq: int = 0
    date: str = ""  # for positions in a diary (the digest)
    from_offset: int = 0
    to_offset: int = 0
    lost_bytes: int = 0


class DiaryAppended(Event, tag="diary.appended", kw_only=True, frozen=True):
    """One line added to the day's diary (``dedup`` is the message's xxh3_128 content hash)."""

    date: str
    line: str
    session_key: str = ""
    message_id: str = ""
    source_seq: int = 0
    role: str = ""  # the message's role ("" in logs written before it was recorded)
    key_version: int = 1  # which canonical form ``dedup`` hashes (see processors.snapshot)


class DiaryLines(Event, tag="diary.lines", kw_only=True, frozen=True):
    """Lines added, in order, to the day's diary by one event: a snapshot step's lines of that day.

    It folds as one ``diary.appended`` per line. The lists run in parallel (one item per line):
    ``session_keys``, ``message_ids``, ``source_seqs`` (the message events) and ``roles`` say what
    each line came from, ``dedup_keys`` its message's key (always key version 2, see
    ``processors.snapshot``), each indexed by the log to this event's seq (I13: a message's line
    is written once).
    """

    date: str
    lines: list[str] = []
    session_keys: list[str] = []
    message_ids: list[str] = []
    source_seqs: list[int] = []
    roles: list[str] = []
    dedup_keys: list[str] = []


class DiaryTrimmed(Event, tag="diary.trimmed", kw_only=True, frozen=True):
    """The oldest lines of a diary were dropped to keep it within its byte budget."""

    date: str
    dropped_lines: int
    dropped_bytes: int
    start_before: int  # logical offsets: the diary's first byte before and after
    start_after: int
    budget: int
    undigested_bytes: int = 0  # bytes dropped that the digest had not read: lost to it


class DiaryDigested(Event, tag="diary.digested", kw_only=True, frozen=True):
    """The digest read the diary's logical byte range [start, end)."""

    date: str
    start: int
    end: int
    entry_id: str = ""


class StmAdded(Event, tag="memory.stm.added", kw_only=True, frozen=True):
    """A short-term memory entry distilled from diary lines.

    ``start``/``end``: the first and last ``diary.appended`` seq it covers (logs written
    before the digest followed events: a logical byte range of the day's diary).
    """

    entry_id: str
    text: str
    date: str = ""
    start: int = 0
    end: int = 0
    session_keys: list[str] = []
    message_seqs: list[int] = []  # seqs of the messages its lines came from


class MemoryRecalled(Event, tag="memory.recalled", kw_only=True, frozen=True):
    """Memory entries were recalled (looked up and used) by an agent.

    ``entry_ids`` names facts or memory entries; ``message_seqs`` names messages the caller
    used (the short-term entries holding them count as used too).
    """

    entry_ids: list[str]
    query: str = ""
    message_seqs: list[int] = []


class LtmPromoted(Event, tag="memory.ltm.promoted", kw_only=True, frozen=True):
    """A short-term entry was still in use and moved to long-term memory."""

    entry_id: str
    reason: str


class StmDropped(Event, tag="memory.stm.dropped", kw_only=True, frozen=True):
    """A short-term entry went stale and was dropped (it stays in the log)."""

    entry_id: str
    reason: str


# --- Dream: learning long-term memory ---------------------------------------------------


class CursorAdvanced(Event, tag="cursor.advanced", kw_only=True, frozen=True):
    """A processor claimed history entries as its input, before it used them."""

    processor: str
    run_id: str
    from_cursor: int  # exclusive
    to_cursor: int  # inclusive
    cursors: list[int] = []


class DreamStarted(Event, tag="dream.started", kw_only=True, frozen=True):
    """A Dream run is about to call the model with this prompt."""

    run_id: str
    llm: str
    model: str
    prompt_hash: str
    input_cursors: list[int]
    project: str = ""
    token_budget: int = 0
    retry_of: str = ""


class DreamCompleted(Event, tag="dream.completed", kw_only=True, frozen=True):
    """A Dream run ended with usable output (``outcome``: valid, fallback or noop)."""

    run_id: str
    outcome: str
    attempts: int
    model: str
    prompt_hash: str
    raw_output: str
    validation: list[str] = []  # why each rejected attempt was rejected
    fallback_used: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    fact_ids: list[str] = []


class DreamFailed(Event, tag="dream.failed", kw_only=True, frozen=True):
    """A Dream run ended without usable output; its input range can be retried on purpose."""

    run_id: str
    reason: str
    attempts: int = 0
    model: str = ""
    prompt_hash: str = ""
    raw_output: str = ""
    validation: list[str] = []
    error_kind: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


# --- sync with a MySQL gateway (eventlog.app.gateway.sync) ---------------------------------------


class SyncPushed(Event, tag="sync.pushed", kw_only=True, frozen=True):
    """Local changes up to ``record_seq`` are committed on the gateway ``target`` (host:port/database) for ``user``."""

    target: str  # never credentials: host, port and database only
    user: str  # the gateway user's email
    record_seq: int
    epoch: str = ""  # the gateway user's identity (id and creation time); another epoch resets positions
    change_seq: int = 0  # the gateway change counter value this batch's rows were written with
    sessions: int = 0
    messages: int = 0
    retried: bool = False  # this batch sent again every row refused before it (sync push --retry-rejected)


class SyncPulled(Event, tag="sync.pulled", kw_only=True, frozen=True):
    """The next ``count`` events apply the gateway's changes up to ``change_seq``; they are not pushed back there."""

    target: str
    user: str
    change_seq: int
    count: int
    epoch: str = ""
    sessions: list[list[Any]] = []  # final versions: [key, ms, origin, rev, deleted, cleared ms, origin, rev]
    messages: list[list[Any]] = []  # final versions: [key, message id, ms, origin, rev]


# --- replication of the log (eventlog.replication): device-local bookkeeping, never replicated ---------


class DeviceClaimed(Event, tag="replication.device", kw_only=True, frozen=True):
    """This workspace's events from ``from_seq`` on were written by device ``device``.

    ``home`` is the identity of the log directory when it was claimed (``st_dev:st_ino``): a
    workspace copied elsewhere finds another identity and claims a new device id.
    """

    device: str
    from_seq: int = 1
    home: str = ""


class ReplicationPulled(Event, tag="replication.pulled", kw_only=True, frozen=True):
    """The next ``count`` events came from the event store ``store`` for ``account``, up to its position ``cursor``.

    ``max_hlc`` is the highest clock among them: every later local event's clock is above it.
    """

    store: str
    account: str
    cursor: int
    count: int = 0
    max_hlc: int = 0


class ReplicationPushed(Event, tag="replication.pushed", kw_only=True, frozen=True):
    """The store ``store`` holds this device's events up to ``upto_seq`` for ``account``."""

    store: str
    account: str
    device: str
    upto_seq: int
    stored: int = 0


EVENT_TYPES: tuple[type[Event], ...] = (
    LogRecovered,
    SessionCreated,
    SessionUpdated,
    SessionDeleted,
    MessageAppended,
    MessageUpdated,
    SessionConsolidated,
    ConsolidationFailed,
    HistoryAppended,
    MemoryAppended,
    MemorySuperseded,
    MemoryForgotten,
    MemoryEdited,
    MemoryPinned,
    MemoryArchived,
    MemoryRestored,
    RecordErased,
    ErasureRecorded,
    OffsetCommitted,
    OffsetReset,
    DiaryAppended,
    DiaryTrimmed,
    DiaryDigested,
    StmAdded,
    MemoryRecalled,
    LtmPromoted,
    StmDropped,
    CursorAdvanced,
    DreamStarted,
    DreamCompleted,
    DreamFailed,
    SyncPushed,
    SyncPulled,
    DeviceClaimed,
    ReplicationPulled,
    ReplicationPushed,
    DiaryLines,
)

#: Every event type as one tagged union (a runtime value for msgspec's decoders, not an annotation).
AnyEvent: Any = Union.__getitem__(EVENT_TYPES)

TYPES_BY_TAG: dict[str, type[Event]] = {
    cast(str, cls.__struct_config__.tag): cls for cls in EVENT_TYPES
}
for _tag, _cls in TYPES_BY_TAG.items():
    _cls.type = _tag

#: Types a user may not append by hand (they describe the log itself).
RESERVED_TYPES = frozenset(tag for tag in TYPES_BY_TAG if tag.startswith("log."))
