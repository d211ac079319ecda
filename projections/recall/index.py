"""The recall index: a SQLite file (stdlib ``sqlite3``, FTS5) that is a projection of the log.

Like every projection it is never the truth: delete the file and apply the log from seq 1
and you get the same content (``content_digest`` compares content, not file bytes). It
keeps its own position, ``seq`` (the last log seq applied), in the same transaction as the
rows that seq produced, so a crash loses nothing but work: the next ``catch_up`` re-applies
what the file does not hold, and events at or below ``seq`` are skipped.

What it holds
-------------
``docs``: one row per searchable item, ``id`` = the seq of the event that created it:

* messages (``message.appended``): session (``sid``), ordinal in the session (``pos``),
  message id, role, time (the message's timestamp, else the event's), speaker
  (``extra.speaker``), image caption (``extra.blip_caption``/``caption``), tool-call
  names, text. ``message.updated`` replaces text (and tool calls / extra fields, as the
  sessions projection does) of every row with that session and message id, each field
  from the newest update in the replication order that set it (``msg_edits``);
  ``session.deleted`` removes the session's rows, so they can never be found again; as in
  the sessions projection (``projections.session_order``), an event of the session older
  than its delete in the order is dropped whenever it arrives, and messages newer than the
  delete that arrived before it stay, as the session started again (``msg_keys`` keeps each
  message's place in the order, ``deleted`` each session's newest delete).
* history entries (``history.appended``): text, source, project, session key.
* facts (``memory.appended``): fact id, scope, section, project, state (active,
  superseded, forgotten, archived) and text. A fact's state and text are its changes
  (superseded, forgotten, restored, edited, pinned, archived) folded in the replication
  order by the memory projection's rule (``projections.memory.fold_op``), not in arrival
  order, so every device that holds the same events holds the same rows (issue 22): the
  ``fact_fold`` table keeps each fact's addition and changes with their places in the order
  (``eventlog.replication.clock``; the clock itself is kept in ``meta``). A second
  ``memory.appended`` with a known fact id that is newer in the order replaces that fact's
  text, scope, section and project (an edit) and keeps its changes. ``set_fact`` sets a
  state or text directly (a caller's own change, outside the order).

``sessions``: key, project, title, creation time and message count of every live session
(a message to an unknown session creates it, as the sessions projection does; a
``session.created`` for a live key changes nothing). ``speakers``: message counts per
project and speaker name (query parsing uses them to recognise names). ``fts``: a
contentless FTS5 table (``porter unicode61``, CJK runs as bigrams, see ``text.py``) whose
one column holds each item's text, its aux text (speaker, caption, tool names, a fact's
section) and its filter tokens (kind, project, session, role, fact state; see
``text.py``). It keeps neither positions nor lengths (``detail=none, columnsize=0``):
FTS5 only finds the rows that hold a term, ranking happens in ``search.py``. That makes
the FTS index about a quarter of the text's size. Long texts are stored zlib-compressed.
``dfs``: each full-text term's document count, moved by the writer in the transaction of
the rows (``_Writer.move_dfs``), so a search reads a common word's count in one lookup instead
of fts5vocab's walk of its whole row list; ``verify`` compares it with fts5vocab term by term.
A build from empty (``catch_up`` of an index whose full-text table holds no row: a rebuild,
replay, the first ``evlog recall``) does not move it commit by commit: its commits mark
``meta``'s ``dfs_pending`` instead, and one pass over FTS5's own counts (fts5vocab) fills it at
the end (``_fill_dfs``). While the mark is set, ``df`` reads fts5vocab (the counts are exact
either way), and the next writer that is not building from empty fills ``dfs`` in its own commit
(a build that stopped half-way).

Every decodable event of every type is either folded or ignored: ``apply`` never raises.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from time import sleep
from typing import Any

import msgspec
import xxhash

from eventlog.errors import ConfigError, EvlogError, NotFound
from eventlog.events import (
    Event,
    HistoryAppended,
    MemoryAppended,
    MemoryArchived,
    MemoryEdited,
    MemoryForgotten,
    MemoryPinned,
    MemoryRestored,
    MemorySuperseded,
    MessageAppended,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
)
from eventlog.replication.clock import Key, OrderState, event_time
from eventlog.timeutil import normalize_time
from projections.memory import Fact, FactOp, fold_op, op_of
from projections.recall import ftsproof, rowproof
from projections.recall.text import (
    FACT_STATES,
    STATE_CODES,
    clean,
    index_text,
    kind_tag,
    pack,
    project_tag,
    role_tag,
    session_tag,
    state_tag,
    unpack,
)

#: Bumped whenever the file layout or what goes into the index changes; an index with
#: another schema is rebuilt (opened for writing) or refused (read-only).
SCHEMA = 3  # 2: folded in the replication order (``fact_fold``, ``msg_edits``, ``msg_keys``, ``deleted``, ``meta``'s clock)
#            3: ``dfs``, each full-text term's document count kept by the writer
#: what a reader of an index of another schema is told (opening it for writing rebuilds it).
_REBUILD = "`evlog recall` or `evlog replay` rebuilds it (so does the daemon's recall job)"
TOKENIZER = "porter unicode61 remove_diacritics 2"

MESSAGE, HISTORY, FACT = 0, 1, 2
_BATCH = 2048  # rows per insert batch (written by a helper thread while the next one is prepared)
_CAPTION_KEYS = ("blip_caption", "caption", "image_caption")

_DDL = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE sessions(
    sid INTEGER PRIMARY KEY,      -- seq of the event that made the session live
    skey TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    title TEXT NOT NULL,
    created TEXT NOT NULL,
    nmsg INTEGER NOT NULL
);
CREATE TABLE docs(
    id INTEGER PRIMARY KEY,       -- seq of the event that created the item
    kind INTEGER NOT NULL,        -- 0 message, 1 history entry, 2 fact
    time TEXT NOT NULL,
    body NOT NULL,                -- the text, zlib-compressed (BLOB) when long
    nchars INTEGER NOT NULL,      -- length of the text in characters
    tseq INTEGER NOT NULL,        -- seq of the event that last changed the item
    sid INTEGER, pos INTEGER, mid TEXT, role TEXT, speaker TEXT, caption TEXT, tools TEXT,  -- messages
    skey TEXT, project TEXT, source TEXT,                                          -- history (project: facts too)
    fact_id TEXT, scope TEXT, section TEXT, state INTEGER                                  -- facts
);
CREATE INDEX docs_message ON docs(sid, mid) WHERE kind = 0;
CREATE INDEX docs_position ON docs(sid, pos) WHERE kind = 0;
CREATE INDEX docs_fact ON docs(fact_id) WHERE kind = 2;
CREATE TABLE msg_edits(sid INTEGER NOT NULL, mid TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY(sid, mid)) WITHOUT ROWID;
CREATE TABLE msg_keys(id INTEGER PRIMARY KEY, hlc INTEGER NOT NULL, device TEXT NOT NULL, oseq INTEGER NOT NULL);
CREATE TABLE deleted(skey TEXT PRIMARY KEY, hlc INTEGER NOT NULL, device TEXT NOT NULL, oseq INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE fact_fold(fact_id TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE speakers(project TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(project, name))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE fts USING fts5(t, content='', detail=none, columnsize=0, tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE fts_row USING fts5vocab(fts, 'row');
CREATE TABLE dfs(term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
"""

_DOC_COLUMNS = ("id, kind, time, body, nchars, tseq, sid, pos, mid, role, speaker, caption, tools, "
                "skey, project, source, fact_id, scope, section, state")
_INSERT_DOC = f"INSERT INTO docs({_DOC_COLUMNS}) VALUES ({', '.join('?' * 20)})"
# One FTS column holds text, aux and tags (newline-separated): the index keeps no positions
# or column numbers (detail=none) and no lengths (columnsize=0), since ranking happens in
# Python (search.py); FTS5 only finds the rows that hold a term.
_INSERT_FTS = "INSERT INTO fts(rowid, t) VALUES (?1, ?2 || char(10) || ?3 || char(10) || ?4)"
_DELETE_FTS = "INSERT INTO fts(fts, rowid, t) VALUES ('delete', ?1, ?2 || char(10) || ?3 || char(10) || ?4)"
# A commit's full-text inserts and deletes are tokenised once more into two scratch tables (each write a
# row of its own, numbered by the writer), whose per-term row counts move ``dfs`` (``_Writer.move_dfs``).
_DF_TABLES = [sql for t in ("df_in", "df_out") for sql in (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{t} USING fts5(t, content='', detail=none, columnsize=0, "
    f"tokenize='{TOKENIZER}')", f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{t}_row USING fts5vocab(temp, {t}, 'row')")]
_DF_IN = "INSERT INTO temp.df_in(rowid, t) VALUES (?1, ?2 || char(10) || ?3 || char(10) || ?4)"
_DF_OUT = "INSERT INTO temp.df_out(rowid, t) VALUES (?1, ?2 || char(10) || ?3 || char(10) || ?4)"


@dataclass
class _Session:
    sid: int
    key: str
    project: str
    title: str
    created: str
    nmsg: int
    dirty: bool = False
    tags: str = ""  # filter tokens every message of the session carries (kind, project, session)

    def message_tags(self, role: str) -> str:
        if not self.tags:
            self.tags = f"{kind_tag(MESSAGE)} {project_tag(self.project)} {session_tag(self.key)}"
        tag = _ROLE_TAGS.get(role)
        if tag is None:
            tag = _ROLE_TAGS[role] = role_tag(role)
            if len(_ROLE_TAGS) > 1000:
                _ROLE_TAGS.clear()
        return f"{self.tags} {tag}"


_ROLE_TAGS: dict[str, str] = {}

_SESSION_COLUMNS = "sid, skey, project, title, created, nmsg"
EAGER_SESSIONS = 256  # an index with at most this many sessions reads them all at once


class _SessionMap:
    """The live sessions by key, read from the ``sessions`` table when folding first needs one.

    Opening an index used to build every session object (5,000 of them cost ~25 ms at 1M
    messages) although a catch-up touches a few; now a small table is read whole and a large
    one a key at a time. ``values()`` holds only what was read or added: every session a fold
    changed (what ``_Writer.finish`` writes back). ``before_read`` runs before a lookup touches
    the connection (the writer passes its ``wait``: its helper thread may be inserting).
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.before_read: Any = None
        self.known: dict[str, _Session | None] = {}
        n = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        self.complete = n <= EAGER_SESSIONS
        if self.complete:
            for row in db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions"):
                self.known[row[1]] = _Session(row[0], row[1], row[2], row[3], row[4], row[5])

    def get(self, key: str, default: None = None) -> _Session | None:
        if key in self.known:
            return self.known[key]
        if self.complete:
            return None
        if self.before_read is not None:
            self.before_read()
        row = self.db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE skey = ?", (key,)).fetchone()
        s = None if row is None else _Session(row[0], row[1], row[2], row[3], row[4], row[5])
        self.known[key] = s
        return s

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __setitem__(self, key: str, s: _Session) -> None:
        self.known[key] = s

    def pop(self, key: str, default: None = None) -> _Session | None:
        s = self.get(key)
        self.known[key] = None
        return s

    def values(self) -> list[_Session]:
        return [s for s in self.known.values() if s is not None]


def _op_seq(op: Any) -> int:
    """The log seq a buffered operation came from (0: none)."""
    return op if isinstance(op, int) else getattr(op, "seq", 0)


class _SetFact(msgspec.Struct, frozen=True):
    fact_id: str
    state: int | None
    text: str | None
    seq: int
    only_if: int | None = None  # change the state only when the fact is in this state now


class _Keyed(msgspec.Struct, frozen=True):
    """A fact's addition or change with its place in the replication order (see the module docstring)."""

    fact_id: str
    key: Key
    seq: int
    added: MemoryAppended | None = None
    op: FactOp | None = None


class _Ordered(msgspec.Struct, frozen=True):
    """A session's event with its place in the order: a ``message.updated``'s fields show if it is their newest
    setter; an event older than its session's ``session.deleted`` is dropped (see the module docstring)."""

    ev: MessageAppended | MessageUpdated | SessionCreated | SessionDeleted
    key: Key
    seq: int


_edits_decoder = msgspec.msgpack.Decoder(dict[str, Key])


class _FactFold(msgspec.Struct):
    """What ``fact_fold`` keeps of one fact: its addition (``key`` None until it arrives) and its changes."""

    key: Key | None = None
    text: str = ""
    pinned: bool = False
    ops: list[FactOp] = []


_fold_encoder = msgspec.msgpack.Encoder()
_fold_decoder = msgspec.msgpack.Decoder(_FactFold)
_clock_decoder = msgspec.json.Decoder(OrderState)


def settle(fold: _FactFold, order: OrderState) -> tuple[str, int]:
    """A fact's text and state code: its changes after its addition folded in the order."""
    f = Fact(fact_id="", seq=0, section="", text=fold.text, pinned=fold.pinned)
    start = order.resolve(fold.key or (0, "", 0))
    for op in sorted(fold.ops, key=lambda o: order.resolve(o.key)):
        if order.resolve(op.key) > start:
            fold_op(f, op)
    return clean(f.text), STATE_CODES[f.state]


def _time(value: str, fallback: str) -> str:
    try:
        return normalize_time(value) or fallback
    except (ValueError, OverflowError, TypeError):
        return fallback


def tool_names(calls: Any) -> list[str]:
    """Names of the tools in a message's ``tool_calls`` (OpenAI or Anthropic shapes; others ignored)."""
    names: list[str] = []
    if not isinstance(calls, list):
        return names
    for call in calls:
        if not isinstance(call, dict):
            continue
        name = call.get("name")
        if not isinstance(name, str):
            fn = call.get("function")
            name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str) and name.strip():
            names.append(clean(name.strip()))
    return names


def _str(extra: Any, key: str) -> str | None:
    if isinstance(extra, dict):
        v = extra.get(key)
        if isinstance(v, str):
            return clean(v)
    return None


def _caption(extra: Any) -> str | None:
    for key in _CAPTION_KEYS:
        v = _str(extra, key)
        if v is not None:
            return v
    return None


def aux_text(speaker: str | None, caption: str | None, tools: str | None) -> str:
    """The ``aux`` column of a message: what is said about it besides its text."""
    return " ".join(p for p in (speaker, caption, tools) if p)


WAL_TRIES = 200  # x 10 ms: how long a creator waits for another one's switch to WAL


def switch_to_wal(db: sqlite3.Connection, *, last_try: bool = False) -> bool:
    """Switch a new SQLite file (the index, the embedding cache) to WAL; False when another connection did it first and holds it.

    A connection of a WAL file keeps a shared lock on it, so a second creator that opened the
    file before the switch cannot switch it again: SQLite answers "database is locked" at once,
    without the busy handler. A connection opened after the switch finds WAL already set.
    """
    try:
        db.execute("PRAGMA journal_mode = WAL")
    except sqlite3.OperationalError as e:
        if "locked" not in str(e) or last_try:
            raise
        sleep(0.01)
        return False
    return True


class RecallIndex:
    """The recall projection in one SQLite file; see the module docstring.

    ``RecallIndex(path)`` opens or creates it for writing; ``readonly=True`` opens an
    existing file for searching only (raises ``NotFound`` if it does not exist). One
    process writes at a time (SQLite's lock); readers may search while it writes (WAL).
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False, fts: bool = True) -> None:
        self.path = os.fspath(path)
        self.readonly = readonly
        #: False: a scratch copy that folds the rows but writes no full-text index (see ``rows_only``).
        self.fts = fts
        #: True: a digest fold (``digest_fold``): message rows are hashed into ``message_digest``, not stored.
        self.hash_messages = False
        self.message_digest = 0
        #: Why an existing file was discarded on open ("" if it was not).
        self.reset_reason = ""
        self._ops: list[Any] = []
        self._pending_seq = 0
        self._stem_cache: dict[str, tuple[str, ...]] = {}
        self._stemmer = False
        self._df_cache: dict[str, int] = {}
        self._cache_seq = -1
        self._bulk = False  # this process is building the index from empty (``catch_up``): ``dfs`` is filled at the end
        self._wal_tries = 0
        self.db = self._connect()
        self._seq = int(self._meta("seq", 0))
        self._pending_seq = self._seq
        self._dfs_kept = self._meta(ftsproof.DFS_PENDING) is None  # False: ``df`` reads fts5vocab (see the module docstring)
        self._sessions = _SessionMap(self.db)
        self.clock = self._stored_clock()
        self.deleted = self._stored_deleted()

    # -- opening ----------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self.readonly:
            if not os.path.exists(self.path):
                raise NotFound(f"no recall index at {self.path} (build it first)")
            db = self._connect_read_only(self.path)
            try:
                schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            except sqlite3.DatabaseError as e:
                db.close()
                raise ConfigError(f"{self.path} is not a recall index ({e}); rebuild it") from None
            if schema is None or schema[0] != SCHEMA:
                db.close()
                raise ConfigError(f"{self.path} has recall index schema {schema and schema[0]}, this evlog "
                                  f"reads {SCHEMA}: {_REBUILD}")
            self._pragmas(db, write=False)
            return db
        if os.path.dirname(self.path):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            has_meta = db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'meta'").fetchone()
            schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if has_meta else None
            empty = db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] == 0
        except sqlite3.DatabaseError as e:
            db.close()
            self._remove_files()
            self.reset_reason = f"unreadable ({e})"
            return self._connect()
        if not empty and (schema is None or schema[0] != SCHEMA):
            db.close()
            self._remove_files()
            self.reset_reason = f"schema {schema and schema[0]} != {SCHEMA}"
            return self._connect()
        if empty:
            db.execute("PRAGMA busy_timeout = 5000")
            db.execute("PRAGMA page_size = 8192")
            if not switch_to_wal(db, last_try=self._wal_tries >= WAL_TRIES):
                db.close()  # another creator switched the new file to WAL first: open it again
                self._wal_tries += 1
                return self._connect()
            try:  # IMMEDIATE: one creator at a time; another process may be creating it right now
                db.executescript("BEGIN IMMEDIATE;" + _DDL + f"INSERT INTO meta VALUES ('schema', {SCHEMA}), "
                                 f"('seq', 0), ('ndocs', 0), ('nchars', 0), ('{ftsproof.META_KEY}', "
                                 f"'{ftsproof.INITIAL}'); COMMIT;")
            except sqlite3.OperationalError as e:
                db.close()
                if "already exists" not in str(e):
                    raise
                return self._connect()  # it was created meanwhile: open (and check) that one
        self._pragmas(db, write=True)
        return db

    @staticmethod
    def _connect_read_only(path: str) -> sqlite3.Connection:
        """``path`` opened read-only; on a read-only disk (no ``-shm`` can be made for the WAL) as immutable.

        Immutable reads the main file as of its last checkpoint (the WAL is not read): an older
        ``seq``, never a torn state; callers catch up from it.
        """
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        try:
            db.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchone()
        except sqlite3.OperationalError:
            db.close()
            db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None)
        return db

    @classmethod
    def copy_in_memory(cls, path: str) -> RecallIndex:
        """A writable copy of the index at ``path`` held in memory (for a workspace that cannot be written)."""
        ix = cls(":memory:")
        src = cls._connect_read_only(path)
        try:
            src.backup(ix.db)
        except sqlite3.DatabaseError as e:
            ix.close()
            raise ConfigError(f"{path} is not a recall index ({e}); rebuild it") from None
        finally:
            src.close()
        schema = ix._meta("schema")
        if schema != SCHEMA:
            ix.close()
            raise ConfigError(f"{path} has recall index schema {schema}, this evlog reads {SCHEMA}: {_REBUILD}")
        ix._seq = ix._pending_seq = int(ix._meta("seq", 0))
        ix._dfs_kept = ix._meta(ftsproof.DFS_PENDING) is None
        ix._load_sessions()
        ix.clock = ix._stored_clock()
        ix.deleted = ix._stored_deleted()
        return ix

    @classmethod
    def rows_only(cls, path: str) -> RecallIndex:
        """A new scratch index at ``path`` that folds every row but writes no full-text index.

        For checks (``row_differences``): a fold without tokenising costs a fraction of a build.
        Its ``fts`` table stays empty, so it is never a workspace's index: give it a path of its own.
        """
        if os.path.exists(path):
            raise ConfigError(f"{path} exists: a rows-only index is always a new scratch file")
        return cls(path, fts=False)

    @classmethod
    def digest_fold(cls, path: str) -> RecallIndex:
        """A rows-only scratch index at ``path`` that keeps no message rows, only the digest of them.

        For checks (``projections.recall.rowproof``): its ``expected_docs_digest`` is what the
        ``docs`` rows of an index of the same events hash to. A ``message.updated`` or
        ``session.deleted`` of a live session raises ``rowproof.NeedsRows`` (they read rows back).
        """
        ix = cls.rows_only(path)
        ix.hash_messages = True
        return ix

    def expected_docs_digest(self) -> int:
        """A digest fold's ``rowproof`` digest of every ``docs`` row: the hashed messages and the stored rows."""
        if not self.hash_messages:
            raise ConfigError("expected_docs_digest needs a digest fold (RecallIndex.digest_fold)")
        rows = ((*r[:3], unpack(r[3]), *r[4:]) for r in self.db.execute(f"SELECT {_DOC_COLUMNS} FROM docs"))
        return rowproof.add(self.message_digest, rows)

    @staticmethod
    def _pragmas(db: sqlite3.Connection, *, write: bool) -> None:
        if write:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a projection: losing the tail costs a re-apply
        db.execute("PRAGMA cache_size = -65536")
        db.execute("PRAGMA temp_store = MEMORY")
        db.execute("PRAGMA busy_timeout = 5000")

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path + suffix)

    def _meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def _stored_deleted(self) -> dict[str, Key]:
        """Each deleted session's newest ``session.deleted`` (the ``deleted`` table)."""
        return {k: (h, d, s) for k, h, d, s in self.db.execute("SELECT skey, hlc, device, oseq FROM deleted")}

    def _stored_clock(self) -> OrderState:
        """The replication clock as of the committed seq (``meta``'s ``clock``)."""
        raw = self._meta("clock")
        return OrderState() if raw is None else _clock_decoder.decode(raw)

    def _load_sessions(self) -> None:
        """Forget the sessions read so far: they are read from the file again as folding needs them."""
        self._sessions = _SessionMap(self.db)

    # -- position ---------------------------------------------------------------------------

    @property
    def seq(self) -> int:
        """The last log seq whose effects are committed in the file (read-only: as of now)."""
        if self.readonly:
            self._seq = int(self._meta("seq", 0))
        return self._seq

    @property
    def pending(self) -> int:
        """Events applied but not committed yet (irrelevant types count too)."""
        return len(self._ops)

    # -- folding ----------------------------------------------------------------------------

    def apply(self, ev: Event) -> None:
        """Buffer one log event (no I/O). Events at or below the applied seq are skipped."""
        seq = getattr(ev, "seq", 0)
        if not isinstance(seq, int) or seq <= self._pending_seq:
            return
        if self.readonly:
            raise ConfigError("this recall index was opened read-only")
        self._pending_seq = seq
        if self.clock.observe(ev):
            self._ops.append(seq)
            return
        match ev:  # a fact's lifecycle: its state or text changes (an archived fact is still found)
            case MemorySuperseded() | MemoryForgotten() | MemoryArchived() | MemoryRestored() | MemoryPinned() | \
                    MemoryEdited():
                key = self.clock.key(ev)
                self._ops.append(_Keyed(ev.fact_id, key, seq, op=op_of(ev, key)))
            case MemoryAppended():
                self._ops.append(_Keyed(ev.fact_id, self.clock.key(ev), seq, added=ev))
            case MessageAppended() | MessageUpdated() | SessionCreated() | SessionDeleted():
                self._ops.append(_Ordered(ev, self.clock.key(ev), seq))
            case _:
                self._ops.append(ev if isinstance(ev, _FOLDED) else seq)

    def set_fact(self, fact_id: str, *, state: str | None = None, text: str | None = None, seq: int = 0) -> None:
        """Buffer a change of a fact's state and/or text (applied by ``commit``; unknown ids are ignored).

        ``seq`` is the log seq of the event that caused it (0: none; the index's position
        then does not move).
        """
        if state is not None and state not in STATE_CODES:
            raise ConfigError(f"unknown fact state {state!r} (one of {', '.join(FACT_STATES)})")
        if self.readonly:
            raise ConfigError("this recall index was opened read-only")
        if seq and seq <= self._pending_seq:
            return
        if seq:
            self._pending_seq = seq
        self._ops.append(_SetFact(fact_id, None if state is None else STATE_CODES[state],
                                  None if text is None else clean(text), seq))

    def catch_up(self, events: Iterable[Event], *, batch: int = 20_000) -> int:
        """Apply ``events`` and commit every ``batch`` of them and at the end; returns the new seq.

        From an empty full-text table (or one whose build stopped half-way) this is a build: its
        commits leave ``dfs`` to one pass over FTS5's counts at the end (see the module docstring)."""
        self._bulk = self.fts and not self.readonly and (not self._dfs_kept or ftsproof.total_rows(self.db) == 0)
        try:
            for ev in events:
                self.apply(ev)
                if len(self._ops) >= batch:
                    self.commit()
            seq = self.commit()
            if self._bulk and not self._dfs_kept:
                self._end_build()
            return seq
        finally:
            self._bulk = False

    def _end_build(self) -> None:
        """End a build from empty: ``dfs`` becomes FTS5's own counts (one pass over fts5vocab), in one transaction."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if self._meta(ftsproof.DFS_PENDING) is not None:
                    _fill_dfs(self.db)
                self.db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise EvlogError(f"recall index {self.path}: {e}") from e
        self._dfs_kept = True

    def sync(self, log: Any) -> int:
        """Catch up from a log (anything with ``read(from_seq)``, e.g. ``Workspace.log``)."""
        return self.catch_up(log.read(self._seq + 1))

    def commit(self) -> int:
        """Write every buffered change and the new seq in one transaction; returns the seq."""
        if not self._ops:
            return self._seq
        try:
            self.db.execute("BEGIN IMMEDIATE")
            stored = int(self.db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()[0])
            if stored != self._seq:  # another process caught the index up meanwhile: keep only what it has not applied
                self.db.execute("ROLLBACK")
                self._seq = stored
                self._ops = [op for op in self._ops if _op_seq(op) == 0 or _op_seq(op) > stored]
                if stored > self._pending_seq:  # it folded events this process has not seen: its clock
                    self.clock = self._stored_clock()
                self.deleted = self._stored_deleted()
                self._pending_seq = max(self._pending_seq, stored)
                self._load_sessions()
                if not self._ops:
                    return self._seq
                self.db.execute("BEGIN IMMEDIATE")
            pending = self._meta(ftsproof.DFS_PENDING) is not None  # a build from empty is under way (or stopped half-way)
        except sqlite3.Error as e:
            raise EvlogError(f"recall index {self.path}: {e}") from e
        ops, self._ops = self._ops, []
        target = self._pending_seq
        w = _Writer(self, dfs=_BULK if self._bulk else _FILL if pending else _KEEP)
        try:
            for op in ops:
                w.fold(op)
            w.finish(target)
            self.db.execute("COMMIT")
            self.message_digest = (self.message_digest + w.msgdig) & ftsproof.MASK
            self._dfs_kept = w.dfs != _BULK
        except BaseException as e:
            w.close()
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            self._pending_seq = self._seq
            self._load_sessions()
            self.clock = self._stored_clock()
            self.deleted = self._stored_deleted()
            if isinstance(e, sqlite3.Error):
                raise EvlogError(f"recall index {self.path}: {e}") from e
            raise
        finally:
            w.close()
        self._seq = target
        return target

    # -- reading ----------------------------------------------------------------------------

    def snapshot(self) -> tuple[int, int, int]:
        """(seq, items, text characters) as committed now; clears per-seq caches when the file moved."""
        vals = dict(self.db.execute(f"SELECT key, value FROM meta WHERE key IN ('seq', 'ndocs', 'nchars', "
                                    f"'{ftsproof.DFS_PENDING}')").fetchall())
        self._dfs_kept = ftsproof.DFS_PENDING not in vals
        seq = int(vals.get("seq", 0))
        if seq != self._cache_seq:
            self._df_cache.clear()
            self._cache_seq = seq
        return seq, int(vals.get("ndocs", 0)), int(vals.get("nchars", 0))

    def df(self, term: str, *, prefix: bool = False) -> int:
        """How many items hold ``term`` (tokens starting with it if ``prefix``); cached per seq."""
        key = term + "*" if prefix else term
        n = self._df_cache.get(key)
        if n is None:
            # ``dfs`` holds what fts5vocab would count by walking the term's whole row list (``_Writer.finish``),
            # except while a build from empty is under way (``catch_up``): then fts5vocab counts
            table, count = ("dfs", "n") if self._dfs_kept else ("fts_row", "doc")
            if prefix:
                row = self.db.execute(f"SELECT sum({count}) FROM {table} WHERE term >= ? AND term < ?",
                                      (term, term + "\U0010ffff")).fetchone()
            else:
                row = self.db.execute(f"SELECT {count} FROM {table} WHERE term = ?", (term,)).fetchone()
            n = int(row[0] or 0) if row else 0
            if len(self._df_cache) > 100_000:
                self._df_cache.clear()
            self._df_cache[key] = n
        return n

    def stems(self, words: list[str]) -> list[str]:
        """The token the index's tokenizer makes of each word ("" if none): query and index stem alike."""
        return [t[0] if t else "" for t in self.tokens(words)]

    def tokens(self, words: list[str]) -> list[tuple[str, ...]]:
        """Every token the index's tokenizer makes of each word, in order: usually one, but its Unicode
        tables (6.1) split some words Python calls one (a letter newer than them is a separator there)."""
        cache = self._stem_cache
        if len(cache) > 200_000:
            cache.clear()
        unknown = [w for w in dict.fromkeys(words) if w not in cache]
        if unknown:
            if not self._stemmer:
                self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(w, "
                                f"tokenize='{TOKENIZER}')")
                self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_v USING "
                                "fts5vocab(temp, stemmer, 'instance')")
                self._stemmer = True
            for i in range(0, len(unknown), 5000):
                chunk = unknown[i : i + 5000]
                self.db.execute("DELETE FROM temp.stemmer")
                self.db.executemany("INSERT INTO temp.stemmer(rowid, w) VALUES (?, ?)", list(enumerate(chunk, 1)))
                got: dict[int, list[str]] = {}
                for doc, term in self.db.execute("SELECT doc, term FROM temp.stemmer_v ORDER BY doc, offset"):
                    got.setdefault(doc, []).append(term)
                for j, w in enumerate(chunk, 1):
                    cache[w] = tuple(got.get(j, ()))
        return [cache[w] for w in words]

    def stats(self) -> dict[str, int]:
        """Counts and sizes: items per kind, sessions, text characters, file bytes."""
        out = {"seq": self._seq, "sessions": self.db.execute("SELECT count(*) FROM sessions").fetchone()[0]}
        counts = dict(self.db.execute("SELECT kind, count(*) FROM docs GROUP BY kind").fetchall())
        out.update(messages=counts.get(MESSAGE, 0), history=counts.get(HISTORY, 0), facts=counts.get(FACT, 0))
        out["chars"] = int(self._meta("nchars", 0))
        out["bytes"] = sum(os.path.getsize(self.path + s) for s in ("", "-wal") if os.path.exists(self.path + s))
        return out

    def content_digest(self) -> str:
        """A digest of what the index holds (rows, texts, FTS vocabulary, position), not of its bytes.

        An index caught up incrementally and one rebuilt from seq 1 over the same log have
        the same digest; a missed delete, a wrong update or a stale token makes them differ.
        """
        h = xxhash.xxh3_128()
        enc = msgspec.json.Encoder(order="deterministic").encode
        h.update(enc(["schema", SCHEMA, "seq", self.seq, "ndocs", self._meta("ndocs"),
                      "nchars", self._meta("nchars")]))
        for row in self.db.execute("SELECT sid, skey, project, title, created, nmsg FROM sessions ORDER BY sid"):
            h.update(enc(row))
        for row in self.db.execute(f"SELECT {_DOC_COLUMNS} FROM docs ORDER BY id"):
            row = list(row)
            row[3] = unpack(row[3])
            h.update(enc(row))
        for row in self.db.execute("SELECT project, name, n FROM speakers ORDER BY project, name"):
            h.update(enc(row))
        for row in self.db.execute("SELECT term, doc, cnt FROM fts_row ORDER BY term"):
            h.update(enc(row))
        kept = self._meta(ftsproof.DFS_PENDING) is None  # (a build under way: the counts dfs will hold when it ends)
        for row in self.db.execute("SELECT term, n FROM dfs ORDER BY term" if kept else
                                   "SELECT term, doc FROM fts_row ORDER BY term"):
            h.update(enc(["df", *row]))
        return "xxh3_128:" + h.hexdigest()

    def _meta_values(self) -> dict[str, Any]:
        return dict(self.db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'seq', 'ndocs', 'nchars') "
                                    "ORDER BY key").fetchall())

    def contents(self) -> list[tuple[Any, ...]]:
        """What the index answers from, without this device's positions (seqs, ordinals): sorted rows of
        its sessions, messages, history entries and facts. Every device holding the same replicated
        events holds the same contents (issue 22)."""
        rows: list[tuple[Any, ...]] = [("session", *r) for r in self.db.execute(
            "SELECT skey, project, title, created, nmsg FROM sessions")]
        rows += [("message", *r[:3], unpack(r[3]), *r[4:]) for r in self.db.execute(
            "SELECT s.skey, d.mid, d.role, d.body, d.time, d.speaker, d.caption, d.tools FROM docs d "
            "JOIN sessions s ON s.sid = d.sid WHERE d.kind = 0")]
        rows += [("history", *r[:3], unpack(r[3]), r[4]) for r in self.db.execute(
            "SELECT skey, project, source, body, time FROM docs WHERE kind = 1")]
        rows += [("fact", *r[:5], unpack(r[5])) for r in self.db.execute(
            "SELECT fact_id, scope, section, project, state, body FROM docs WHERE kind = 2")]
        return sorted(rows, key=repr)

    def row_differences(self, expected: RecallIndex, *, limit: int = 5) -> list[str]:
        """How this index's rows differ from ``expected``'s ([] when equal), at most ``limit`` per table.

        Compares the position and counters, then every session, item and speaker count in one
        ordered pass over both files (a missing, extra or changed row is named by its key; texts
        are compared unpacked). The full-text index is not compared: ``verify`` proves it holds
        exactly the tokens of these rows, so the two together prove the whole index against
        ``expected`` (a fold of the log, e.g. ``rows_only``) without tokenising anything twice.
        """
        problems: list[str] = []
        mine, theirs = self._meta_values(), expected._meta_values()
        if mine != theirs:
            problems.append(f"position and counters are {mine}, a fold of the log gives {theirs}")
        for table, key, columns in _ROW_TABLES:
            problems.extend(self._table_differences(expected, table, key, columns, limit))
        return problems

    def digest_differences(self, expected: RecallIndex, docs_digest: int, *, limit: int = 5) -> list[str]:
        """How this index differs from a digest fold ``expected`` ([] when equal): position, counters,
        sessions and speakers row by row (few rows), and the ``docs`` rows by their ``rowproof`` digest
        (``docs_digest``: this index's, from ``verify``); a differing digest names no row."""
        problems: list[str] = []
        mine, theirs = self._meta_values(), expected._meta_values()
        if mine != theirs:
            problems.append(f"position and counters are {mine}, a fold of the log gives {theirs}")
        for table, key, columns in _ROW_TABLES:
            if table != "docs":
                problems.extend(self._table_differences(expected, table, key, columns, limit))
        want = expected.expected_docs_digest()
        if docs_digest != want:
            problems.append(f"the items (docs rows) are not the ones a fold of the log gives (digest {docs_digest:x}, "
                            f"the log gives {want:x})")
        return problems

    def _table_differences(self, expected: RecallIndex, table: str, key: str, columns: str, limit: int) -> list[str]:
        """A merge join of ``table`` in both files on ``key`` (the first columns): what differs."""
        nkey = key.count(",") + 1
        query = f"SELECT {columns} FROM {table} ORDER BY {key}"
        have, want = iter(self.db.execute(query)), iter(expected.db.execute(query))
        h, w = next(have, None), next(want, None)
        out: list[str] = []
        while (h is not None or w is not None) and len(out) < limit:
            hk = h[:nkey] if h is not None else None
            wk = w[:nkey] if w is not None else None
            if w is None or (hk is not None and wk is not None and hk < wk):
                out.append(f"{table} row {_key_text(hk)} is in the index but not in a fold of the log")
                h = next(have, None)
            elif h is None or (hk is not None and wk is not None and wk < hk):
                out.append(f"{table} row {_key_text(wk)} of a fold of the log is missing from the index")
                w = next(want, None)
            else:
                if h != w and not (table == "docs" and _same_doc(h, w)):
                    out.append(f"{table} row {_key_text(hk)} differs from a fold of the log")
                h, w = next(have, None), next(want, None)
        return out

    def verify(self, *, tokenise: bool = False, docs_digest: list[int] | None = None) -> list[str]:
        """Internal consistency problems ([] when none): the FTS index holds exactly the tokens of
        the stored rows, and the counters match the rows. Reads everything: for checks, not hot paths.

        The FTS index is proved by the digest its writer kept (``ftsproof``: no tokenising) when
        the index has one; ``tokenise`` (or an index made before digests) tokenises every row
        again and compares the two vocabularies, which also sees writes from outside the writer.
        ``docs_digest`` (a one-item list): set to the ``rowproof`` digest of the ``docs`` rows,
        hashed in the same pass (``replay --check`` compares it with a digest fold of the log)."""
        problems: list[str] = []
        db = self.db
        n, chars = db.execute("SELECT count(*), coalesce(sum(nchars), 0) FROM docs").fetchone()
        if (n, chars) != (int(self._meta("ndocs", 0)), int(self._meta("nchars", 0))):
            problems.append(f"counters say {self._meta('ndocs')} items/{self._meta('nchars')} chars, rows {n}/{chars}")
        held_speakers = db.execute("SELECT project, name, n FROM speakers ORDER BY 1, 2").fetchall()
        proved = not tokenise and ftsproof.stored(db) is not None
        if not proved and _speaker_counts(db) != held_speakers:
            problems.append("speaker counts do not match the messages")
        orphans = db.execute("SELECT count(*) FROM docs WHERE kind = 0 AND sid NOT IN (SELECT sid FROM sessions)"
                             ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} messages of sessions that are gone")
        if proved:  # the speakers are counted in the pass that proves the full-text table
            read, speakers = db.cursor(), Counter[tuple[str, str]]()
            try:
                found = ftsproof.problems(db, self._stored_fts_rows(read, docs_digest, speakers), n)
            finally:
                read.close()
            if [(*k, c) for k, c in sorted(speakers.items())] != held_speakers:
                problems.append("speaker counts do not match the messages")
            return problems + found
        if docs_digest is not None:
            read = db.cursor()
            try:
                for _ in self._stored_fts_rows(read, docs_digest):
                    pass
            finally:
                read.close()
        fts = self._fts_difference()
        if fts:
            problems.append(f"the full-text index does not match the rows (expected (term, docs) vs held: {fts})")
        problems += ftsproof.df_problems(db)
        return problems

    def _fts_difference(self, limit: int = 5) -> list[tuple[Any, ...]]:
        """The first (expected, held) (term, docs) pairs where the FTS index differs from a
        tokenising of the stored rows ([] when it holds exactly their tokens).

        The rows are tokenised into a temporary FTS table inside one transaction, rolled back
        at the end: in autocommit every row would be its own FTS5 segment, merged again and
        again (what made this check superlinear). Outside a caller's transaction that table
        lives in a temporary file, so memory stays bounded at any size.
        """
        db = self.db
        began = not db.in_transaction
        if began:  # the scratch index of every row goes to a temporary file (bounded by the page cache), not RAM
            db.execute("PRAGMA temp_store = FILE")  # (this drops the temporary tables: the stemmer's too)
            self._stemmer = False
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.expect USING fts5(t, content='', detail=none, "
                   f"columnsize=0, tokenize='{TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.expect_row USING fts5vocab(temp, expect, 'row')")
        if began:
            db.execute("BEGIN")
        try:
            db.execute("INSERT INTO temp.expect(expect) VALUES ('delete-all')")
            read = db.cursor()  # a cursor of its own: executemany below reads from it while inserting
            db.executemany("INSERT INTO temp.expect(rowid, t) VALUES (?1, ?2 || char(10) || ?3 || char(10) || ?4)",
                           self._expected_fts_rows(read))
            want = db.execute("SELECT term, doc FROM temp.expect_row ORDER BY term")
            have = db.cursor().execute("SELECT term, doc FROM fts_row ORDER BY term")
            try:
                return list(itertools.islice(((w, h) for w, h in itertools.zip_longest(want, have) if w != h), limit))
            finally:  # a difference stops the scan: end both statements before the transaction ends
                want.close()
                have.close()
        finally:
            if began:
                db.execute("ROLLBACK")
                db.execute("PRAGMA temp_store = MEMORY")
                self._stemmer = False
            else:
                db.execute("INSERT INTO temp.expect(expect) VALUES ('delete-all')")

    def _expected_fts_rows(self, read: sqlite3.Cursor) -> Iterator[tuple[int, str, str, str]]:
        """What each stored row hands the tokenizer (streamed: memory stays flat at any size)."""
        for id_, text, aux, tags in self._stored_fts_rows(read):
            yield (id_, index_text(text), index_text(aux) if aux else "", tags)

    def _stored_fts_rows(self, read: sqlite3.Cursor, docs_digest: list[int] | None = None,
                         speakers: Counter[tuple[str, str]] | None = None) -> Iterator[tuple[int, str, str, str]]:
        """(rowid, text, aux, tags) of each stored row, before the CJK rewrite (what the writer's digest hashes);
        ``docs_digest``: its one item becomes the ``rowproof`` digest of the rows read (once they all are);
        ``speakers``: counts the messages of each (project, speaker) of a live session (``_speaker_counts``)."""
        sessions = {sid: _Session(sid, key, project, "", "", 0) for sid, key, project in
                    self.db.execute("SELECT sid, skey, project FROM sessions")}
        digest = 0
        for row in read.execute(f"SELECT {_DOC_COLUMNS} FROM docs"):
            id_, kind, _time, body, _n, _t, sid, _p, _m, role, speaker, caption, tools, skey, project = row[:15]
            section, state = row[18], row[19]
            text = unpack(body)
            if docs_digest is not None:
                digest += rowproof.row_hash((*row[:3], text, *row[4:]))
            if kind == MESSAGE:
                s = sessions.get(sid)
                tags = s.message_tags(role) if s is not None else ""
                if speakers is not None and speaker and s is not None:
                    speakers[(s.project or "", speaker)] += 1
                yield (id_, text, aux_text(speaker, caption, tools), tags)
            elif kind == HISTORY:
                yield (id_, text, "", _Writer.history_tags(project, skey))
            else:
                yield (id_, text, section, _Writer.fact_tags(project, state))
        if docs_digest is not None:
            docs_digest[0] = digest & ftsproof.MASK

    def close(self) -> None:
        """Close the file (uncommitted changes are dropped; call ``commit`` first)."""
        self._ops = []
        with contextlib.suppress(sqlite3.Error):
            self.db.close()

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RecallIndex({self.path!r}, seq={self._seq})"


def _speaker_counts(db: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(project, speaker, messages) of the messages of live sessions, as the ``speakers`` table should say."""
    return db.execute("SELECT coalesce(s.project, ''), d.speaker, count(*) FROM docs d JOIN sessions s ON "
                      "s.sid = d.sid WHERE d.kind = 0 AND d.speaker IS NOT NULL AND d.speaker != '' "
                      "GROUP BY 1, 2 ORDER BY 1, 2").fetchall()


_ROW_TABLES = (  # (table, key, columns): what ``row_differences`` compares, in key order
    ("sessions", "sid", "sid, skey, project, title, created, nmsg"),
    ("docs", "id", _DOC_COLUMNS),
    ("speakers", "project, name", "project, name, n"),
)


def _key_text(key: tuple[Any, ...] | None) -> str:
    return ", ".join(map(str, key or ()))


def _same_doc(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two ``docs`` rows equal but for how their text is stored (packed or not)."""
    return a[:3] == b[:3] and a[4:] == b[4:] and unpack(a[3]) == unpack(b[3])


def _as_is(text: str) -> str:
    return text


_FOLDED = (HistoryAppended, _SetFact)

# What a commit does with ``dfs``: moves it by the commit's rows; leaves it to the build's end (marks it
# pending); fills it from FTS5's counts at its end (a build that stopped half-way, or another one's)
_KEEP, _BULK, _FILL = "keep", "bulk", "fill"


def _fill_dfs(db: sqlite3.Connection) -> None:
    """``dfs`` made FTS5's own document counts (one pass over fts5vocab's row table), its pending mark gone."""
    db.execute("DELETE FROM dfs")
    db.execute("INSERT INTO dfs(term, n) SELECT term, doc FROM fts_row")
    db.execute("DELETE FROM meta WHERE key = ?", (ftsproof.DFS_PENDING,))


class _Writer:
    """One commit's worth of folding: batches inserts, flushes them before any read-modify-write."""

    def __init__(self, index: RecallIndex, *, dfs: str = _KEEP) -> None:
        self.ix = index
        self.db = index.db
        self.fts_on = index.fts  # False: a rows-only scratch fold (no tokenising, no FTS writes)
        self.dfs = dfs  # _KEEP, _BULK or _FILL (what this commit does with ``dfs``)
        self.count_rows = self.fts_on and dfs == _KEEP  # tokenise the full-text writes again into the scratch tables
        self.pack = pack if index.fts else _as_is  # a scratch fold stores texts as they are (compared unpacked)
        self.sessions = index._sessions
        self.sessions.before_read = self.wait
        self.docs: list[tuple[Any, ...]] = []
        self.fts: list[tuple[Any, ...]] = []
        self.keys: list[tuple[int, int, str, int]] = []  # (doc id, hlc, device, origin seq) of new messages
        self.speakers: dict[tuple[str, str], int] = {}
        self.ndocs = 0
        self.nchars = 0
        self.hash_messages = index.hash_messages  # a digest fold: message rows hashed, not stored
        self.msgdig = 0  # their rowproof digest in this commit
        self.ftsdig = 0  # net hash of what this commit inserts into / deletes from the full-text table (ftsproof)
        self.pool: ThreadPoolExecutor | None = None
        self.pending: Future[None] | None = None
        self.df_rows = itertools.count(1)  # rowids of the scratch tables' rows
        if self.count_rows:
            for sql in _DF_TABLES:  # (temp tables: gone when temp_store changes, see _fts_difference)
                self.db.execute(sql)

    # -- dispatch ---------------------------------------------------------------------------

    def fold(self, op: Any) -> None:
        if isinstance(op, int):
            return
        match op:
            case _Ordered():
                self.ordered(op)
            case HistoryAppended():
                self.history(op)
            case _Keyed():
                self.keyed(op)
            case _SetFact():
                self.set_fact(op)

    # -- sessions and messages --------------------------------------------------------------

    def ordered(self, op: _Ordered) -> None:
        ev, clock = op.ev, self.ix.clock
        gone = self._deleted_key(ev.session_key)
        if gone is not None and clock.resolve(op.key) <= clock.resolve(gone):
            return  # older than the session's deletion: another device wrote it before the delete reached it
        match ev:
            case MessageAppended():
                self.message(ev, op.key)
            case MessageUpdated():
                self.update(ev, op.key)
            case SessionCreated():
                if ev.session_key not in self.sessions:
                    self.session(ev.session_key, ev.seq, clean(ev.project), clean(ev.title),
                                 _time(ev.created_at, event_time(ev)))
            case SessionDeleted():
                self.delete_after(ev.session_key, op.key)

    def _deleted_key(self, skey: str) -> Key | None:
        return self.ix.deleted.get(skey)

    def delete_after(self, skey: str, deleted: Key) -> None:
        """A ``session.deleted``: the session goes; its messages newer than the delete (another device's, that
        arrived first) stay, as a session started again from them (as if the delete had arrived first)."""
        self.ix.deleted[skey] = deleted
        self.db.execute("INSERT OR REPLACE INTO deleted(skey, hlc, device, oseq) VALUES (?, ?, ?, ?)", (skey, *deleted))
        s = self.sessions.get(skey)
        if s is None:
            return
        if self.hash_messages:
            raise rowproof.NeedsRows(f"session.deleted of {skey!r}")
        self.flush()
        clock = self.ix.clock
        kept = [r for r in self.db.execute(
            "SELECT k.hlc, k.device, k.oseq, d.id, d.time, d.body, d.mid, d.role, d.speaker, d.caption, d.tools "
            "FROM docs d JOIN msg_keys k ON k.id = d.id WHERE d.sid = ? AND d.kind = 0 ORDER BY d.pos", (s.sid,))
            if clock.resolve((r[0], r[1], r[2])) > clock.resolve(deleted)]
        self.delete_session(skey)
        if not kept:
            return
        again = self.session(skey, kept[0][3], "", "", kept[0][4])
        for hlc, device, oseq, id_, time, body, mid, role, speaker, caption, tools in kept:
            self._message_row(again, id_, time, unpack(body), mid, role, speaker, caption, tools, (hlc, device, oseq))

    def session(self, key: str, sid: int, project: str, title: str, created: str) -> _Session:
        s = _Session(sid, key, project, title, created, 0, dirty=True)
        self.sessions[key] = s
        return s

    def message(self, ev: MessageAppended, key: Key = (0, "", 0)) -> None:
        s = self.sessions.get(ev.session_key)
        if s is None:
            s = self.session(ev.session_key, ev.seq, "", "", _time(ev.timestamp, event_time(ev)))
        if ev.extra:
            speaker, caption = _str(ev.extra, "speaker"), _caption(ev.extra)
        else:
            speaker = caption = None
        tools = None if ev.tool_calls is None else (" ".join(tool_names(ev.tool_calls)) or None)
        self._message_row(s, ev.seq, _time(ev.timestamp, event_time(ev)), clean(ev.content), clean(ev.message_id),
                          clean(ev.role), speaker, caption, tools, key)

    def _message_row(self, s: _Session, id_: int, time: str, text: str, mid: str, role: str, speaker: str | None,
                     caption: str | None, tools: str | None, key: Key) -> None:
        """A message's row (next in its session), its full-text row and its place in the order."""
        pos = s.nmsg
        s.nmsg += 1
        s.dirty = True
        row = (id_, MESSAGE, time, self.pack(text), len(text), id_, s.sid, pos, mid, role, speaker, caption, tools,
               None, None, None, None, None, None, None)
        if self.hash_messages:
            self.msgdig += rowproof.row_hash(row)
        else:
            self.docs.append(row)
            self.keys.append((id_, *key))
        if self.fts_on:
            self.fts_write(_INSERT_FTS, (id_, text, aux_text(speaker, caption, tools) if (speaker or caption or tools)
                                         else "", s.message_tags(role)), batched=True)
        if len(self.docs) >= _BATCH:
            self.flush(wait=False)
        self.ndocs += 1
        self.nchars += len(text)
        if speaker:
            k = (s.project, speaker)
            self.speakers[k] = self.speakers.get(k, 0) + 1

    def _newer_fields(self, sid: int, mid: str, ev: MessageUpdated, key: Key) -> set[str]:
        """The fields of the message that ``ev`` sets and no newer update set before (``msg_edits``)."""
        row = self.db.execute("SELECT data FROM msg_edits WHERE sid = ? AND mid = ?", (sid, mid)).fetchone()
        known = {} if row is None else _edits_decoder.decode(row[0])
        fields = {"content"} | ({"tools"} if ev.tool_calls is not None else set())
        fields |= {"speaker"} if "speaker" in ev.extra else set()
        fields |= {"caption"} if any(k in ev.extra for k in _CAPTION_KEYS) else set()
        clock = self.ix.clock
        newer = {f for f in fields if f not in known or clock.resolve(key) > clock.resolve(known[f])}
        if newer:
            known.update((f, key) for f in newer)
            self.db.execute("INSERT OR REPLACE INTO msg_edits(sid, mid, data) VALUES (?, ?, ?)",
                            (sid, mid, _fold_encoder.encode(known)))
        return newer

    def update(self, ev: MessageUpdated, key: Key) -> None:
        s = self.sessions.get(ev.session_key)
        if s is None:
            return
        if self.hash_messages:
            raise rowproof.NeedsRows(f"message.updated at seq {ev.seq}")
        self.flush()
        mid = clean(ev.message_id)
        rows = self.db.execute("SELECT id, body, role, speaker, caption, tools FROM docs WHERE sid = ? AND mid = ? "
                               "AND kind = 0", (s.sid, mid)).fetchall()
        if not rows:
            return
        newer = self._newer_fields(s.sid, mid, ev, key)
        if not newer:
            return
        new_tools = None if ev.tool_calls is None else (" ".join(tool_names(ev.tool_calls)) or None)
        for id_, body, role, speaker, caption, tools in rows:
            old_text = unpack(body)
            text = clean(ev.content) if "content" in newer else old_text
            tags = s.message_tags(role)
            self.fts_write(_DELETE_FTS, (id_, old_text, aux_text(speaker, caption, tools),
                                          tags))
            sp = _str(ev.extra, "speaker") if "speaker" in newer else speaker
            cap = _caption(ev.extra) if "caption" in newer else caption
            tl = new_tools if "tools" in newer else tools
            self.db.execute("UPDATE docs SET body = ?, nchars = ?, tseq = ?, speaker = ?, caption = ?, tools = ? "
                            "WHERE id = ?", (self.pack(text), len(text), ev.seq, sp, cap, tl, id_))
            self.fts_write(_INSERT_FTS, (id_, text, aux_text(sp, cap, tl), tags))
            self.nchars += len(text) - len(old_text)
            if sp != speaker:
                if speaker:
                    self.speakers[(s.project, speaker)] = self.speakers.get((s.project, speaker), 0) - 1
                if sp:
                    self.speakers[(s.project, sp)] = self.speakers.get((s.project, sp), 0) + 1

    def delete_session(self, key: str) -> None:
        s = self.sessions.pop(key, None)
        if s is None:
            return
        self.flush()
        for id_, body, role, speaker, caption, tools in self.db.execute(
                "SELECT id, body, role, speaker, caption, tools FROM docs WHERE sid = ? AND kind = 0", (s.sid,)):
            text = unpack(body)
            self.fts_write(_DELETE_FTS, (id_, text, aux_text(speaker, caption, tools),
                                          s.message_tags(role)))
            self.ndocs -= 1
            self.nchars -= len(text)
            if speaker:
                self.speakers[(s.project, speaker)] = self.speakers.get((s.project, speaker), 0) - 1
        self.db.execute("DELETE FROM msg_keys WHERE id IN (SELECT id FROM docs WHERE sid = ? AND kind = 0)", (s.sid,))
        self.db.execute("DELETE FROM docs WHERE sid = ? AND kind = 0", (s.sid,))
        self.db.execute("DELETE FROM msg_edits WHERE sid = ?", (s.sid,))
        self.db.execute("DELETE FROM sessions WHERE sid = ?", (s.sid,))

    # -- history and facts ------------------------------------------------------------------

    def history(self, ev: HistoryAppended) -> None:
        text, project, skey = clean(ev.text), clean(ev.project), clean(ev.session_key)
        self.docs.append((ev.seq, HISTORY, _time(event_time(ev), ev.ts), self.pack(text), len(text), ev.seq, None, None, None,
                          None, None, None, None, skey, project, clean(ev.source), None, None, None, None))
        self.fts_write(_INSERT_FTS, (ev.seq, text, "", self.history_tags(project, skey)), batched=True)
        self.ndocs += 1
        self.nchars += len(text)

    @staticmethod
    def history_tags(project: str, skey: str) -> str:
        tags = f"{kind_tag(HISTORY)} {project_tag(project)}"
        return f"{tags} {session_tag(skey)}" if skey else tags

    @staticmethod
    def fact_tags(project: str, state: int) -> str:
        return f"{kind_tag(FACT)} {project_tag(project)} {state_tag(state)}"

    def _fact_row(self, fact_id: str) -> tuple[Any, ...] | None:
        self.flush()
        row: tuple[Any, ...] | None = self.db.execute(
            "SELECT id, body, project, section, state FROM docs WHERE fact_id = ? AND kind = 2", (fact_id,)).fetchone()
        return row

    def _fold_of(self, fact_id: str) -> _FactFold:
        row = self.db.execute("SELECT data FROM fact_fold WHERE fact_id = ?", (fact_id,)).fetchone()
        return _FactFold() if row is None else _fold_decoder.decode(row[0])

    def keyed(self, k: _Keyed) -> None:
        """A fact's addition or change: kept in ``fact_fold``, then the fact's row follows its fold."""
        fid = clean(k.fact_id)
        fold = self._fold_of(fid)
        clock = self.ix.clock
        again = k.added is not None and fold.key is not None  # a second addition: an edit that keeps the state
        if k.added is not None:
            if fold.key is not None and clock.resolve(fold.key) > clock.resolve(k.key):
                return  # the same id again, older in the order: the newest wins
            fold.key, fold.text, fold.pinned = k.key, k.added.text, k.added.pinned
        elif k.op is not None:
            fold.ops.append(k.op)
        self.db.execute("INSERT OR REPLACE INTO fact_fold(fact_id, data) VALUES (?, ?)", (fid, _fold_encoder.encode(fold)))
        if fold.key is None:
            return  # a change that arrived before its fact: kept until the fact comes
        if k.added is not None:
            self.fact(k.added)
        text, state = settle(fold, clock)
        self.set_fact(_SetFact(fid, None if again else state, text, k.seq))

    def fact(self, ev: MemoryAppended) -> None:
        fact_id, text, project = clean(ev.fact_id), clean(ev.text), clean(ev.project)
        scope, section = clean(ev.scope), clean(ev.section)
        row = self._fact_row(fact_id)
        if row is None:
            self.docs.append((ev.seq, FACT, _time(event_time(ev), ev.ts), self.pack(text), len(text), ev.seq, None, None, None,
                              None, None, None, None, None, project, None, fact_id, scope, section,
                              STATE_CODES["active"]))
            self.fts_write(_INSERT_FTS, (ev.seq, text, section, self.fact_tags(project, 0)),
                           batched=True)
            self.ndocs += 1
            self.nchars += len(text)
            return
        id_, body, old_project, old_section, state = row
        old_text = unpack(body)
        self.fts_write(_DELETE_FTS, (id_, old_text, old_section,
                                      self.fact_tags(old_project, state)))
        self.db.execute("UPDATE docs SET body = ?, nchars = ?, tseq = ?, project = ?, scope = ?, section = ?, "
                        "time = ? WHERE id = ?", (self.pack(text), len(text), ev.seq, project, scope, section,
                                                  _time(event_time(ev), ev.ts), id_))
        self.fts_write(_INSERT_FTS, (id_, text, section, self.fact_tags(project, state)))
        self.nchars += len(text) - len(old_text)

    def set_fact(self, op: _SetFact) -> None:
        row = self._fact_row(op.fact_id)
        if row is None:
            return
        id_, body, project, section, state = row
        old_text = unpack(body)
        text = old_text if op.text is None else op.text
        new_state = state if op.state is None or (op.only_if is not None and state != op.only_if) else op.state
        if text == old_text and new_state == state:
            return
        self.fts_write(_DELETE_FTS, (id_, old_text, section, self.fact_tags(project, state)))
        self.db.execute("UPDATE docs SET body = ?, nchars = ?, state = ?, tseq = CASE WHEN ? > 0 THEN ? ELSE tseq END "
                        "WHERE id = ?", (self.pack(text), len(text), new_state, op.seq, op.seq, id_))
        self.fts_write(_INSERT_FTS, (id_, text, section, self.fact_tags(project, new_state)))
        self.nchars += len(text) - len(old_text)

    # -- writing ----------------------------------------------------------------------------

    def flush(self, *, wait: bool = True) -> None:
        """Write the batched inserts; ``wait=False`` lets a helper thread write them while
        the caller prepares the next batch (SQLite releases the GIL while it works).

        Everything that reads or changes existing rows calls ``flush()`` first, so the
        connection is never used by two threads at once.
        """
        self.wait()
        if self.docs:
            docs, fts, keys = self.docs, self.fts, self.keys
            self.docs, self.fts, self.keys = [], [], []
            if wait:
                self._insert(docs, fts, keys)
            else:
                if self.pool is None:
                    self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-index")
                self.pending = self.pool.submit(self._insert, docs, fts, keys)

    def fts_write(self, sql: str, row: tuple[Any, ...], *, batched: bool = False) -> None:
        """One full-text insert or delete of ``(rowid, text, aux, tags)`` as stored (made what the tokenizer gets
        here, its hash added to the commit's digest); ``batched``: an insert queued with the rows; none in a
        rows-only fold."""
        if not self.fts_on:
            return
        rowid, text, aux, tags = row
        self.ftsdig += ftsproof.row_hash(*row) if sql is _INSERT_FTS else -ftsproof.row_hash(*row)
        row = (rowid, index_text(text), index_text(aux) if aux else "", tags)
        if batched:
            self.fts.append(row)
        else:
            self.db.execute(sql, row)
            if self.count_rows:
                self.db.execute(_DF_IN if sql is _INSERT_FTS else _DF_OUT, (next(self.df_rows), *row[1:]))

    def _insert(self, docs: list[tuple[Any, ...]], fts: list[tuple[Any, ...]],
                keys: list[tuple[int, int, str, int]]) -> None:
        self.db.executemany(_INSERT_DOC, docs)
        self.db.executemany(_INSERT_FTS, fts)
        if fts and self.count_rows:  # (none in a rows-only fold or a build from empty: no scratch tables)
            self.db.executemany(_DF_IN, [(next(self.df_rows), *r[1:]) for r in fts])
        self.db.executemany("INSERT INTO msg_keys(id, hlc, device, oseq) VALUES (?, ?, ?, ?)", keys)

    def wait(self) -> None:
        """Wait for the helper thread's batch (re-raising its error)."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    def close(self) -> None:
        """Stop the helper thread (after waiting for it, even when a fold failed)."""
        if self.pending is not None:
            with contextlib.suppress(BaseException):
                self.pending.result()
            self.pending = None
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def move_dfs(self) -> None:
        """Add this commit's inserted rows per term to ``dfs`` and take its deleted ones away (a term held by
        no row has no entry, as in fts5vocab), then empty the scratch tables."""
        db = self.db
        db.execute("INSERT INTO dfs(term, n) SELECT term, doc FROM temp.df_in_row WHERE true "
                   "ON CONFLICT(term) DO UPDATE SET n = n + excluded.n")
        db.execute("INSERT INTO dfs(term, n) SELECT term, -doc FROM temp.df_out_row WHERE true "
                   "ON CONFLICT(term) DO UPDATE SET n = n + excluded.n")
        db.execute("DELETE FROM dfs WHERE term IN (SELECT term FROM temp.df_out_row) AND n <= 0")
        db.execute("INSERT INTO temp.df_in(df_in) VALUES ('delete-all')")
        db.execute("INSERT INTO temp.df_out(df_out) VALUES ('delete-all')")

    def finish(self, seq: int) -> None:
        self.flush()
        dirty = [s for s in self.sessions.values() if s.dirty]
        if dirty:
            self.db.executemany(
                "INSERT INTO sessions(sid, skey, project, title, created, nmsg) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(sid) DO UPDATE SET nmsg = excluded.nmsg",
                [(s.sid, s.key, s.project, s.title, s.created, s.nmsg) for s in dirty])
            for s in dirty:
                s.dirty = False
        for (project, name), delta in self.speakers.items():
            if delta:
                self.db.execute("INSERT INTO speakers(project, name, n) VALUES (?, ?, ?) "
                                "ON CONFLICT(project, name) DO UPDATE SET n = n + excluded.n", (project, name, delta))
        if self.speakers:
            self.db.execute("DELETE FROM speakers WHERE n <= 0")
        self.db.execute("UPDATE meta SET value = value + ? WHERE key = 'ndocs'", (self.ndocs,))
        self.db.execute("UPDATE meta SET value = value + ? WHERE key = 'nchars'", (self.nchars,))
        if self.fts_on:
            ftsproof.save(self.db, self.ftsdig)
            if self.dfs == _KEEP:
                self.move_dfs()
            elif self.dfs == _BULK:
                self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, 1)", (ftsproof.DFS_PENDING,))
            else:
                _fill_dfs(self.db)
        self.db.execute("UPDATE meta SET value = ? WHERE key = 'seq'", (seq,))
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('clock', ?)",
                        (msgspec.json.encode(self.ix.clock).decode(),))
