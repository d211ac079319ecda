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
  sessions projection does) of every row with that session and message id;
  ``session.deleted`` removes the session's rows, so they can never be found again.
* history entries (``history.appended``): text, source, project, session key.
* facts (``memory.appended``): fact id, scope, section, project, state (active,
  superseded, forgotten, archived) and text; ``set_fact`` changes state or text (the fact
  lifecycle events will call it). A second ``memory.appended`` with a known fact id
  replaces that fact's text, scope, section and project (an edit) and keeps its state.

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

Every decodable event of every type is either folded or ignored: ``apply`` never raises.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
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
from eventlog.timeutil import normalize_time
from projections.recall import ftsproof
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
SCHEMA = 1
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
CREATE TABLE speakers(project TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(project, name))
    WITHOUT ROWID;
CREATE VIRTUAL TABLE fts USING fts5(t, content='', detail=none, columnsize=0, tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE fts_row USING fts5vocab(fts, 'row');
"""

_DOC_COLUMNS = ("id, kind, time, body, nchars, tseq, sid, pos, mid, role, speaker, caption, tools, "
                "skey, project, source, fact_id, scope, section, state")
_INSERT_DOC = f"INSERT INTO docs({_DOC_COLUMNS}) VALUES ({', '.join('?' * 20)})"
# One FTS column holds text, aux and tags (newline-separated): the index keeps no positions
# or column numbers (detail=none) and no lengths (columnsize=0), since ranking happens in
# Python (search.py); FTS5 only finds the rows that hold a term.
_INSERT_FTS = "INSERT INTO fts(rowid, t) VALUES (?1, ?2 || char(10) || ?3 || char(10) || ?4)"
_DELETE_FTS = "INSERT INTO fts(fts, rowid, t) VALUES ('delete', ?1, ?2 || char(10) || ?3 || char(10) || ?4)"


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
        #: Why an existing file was discarded on open ("" if it was not).
        self.reset_reason = ""
        self._ops: list[Any] = []
        self._pending_seq = 0
        self._stem_cache: dict[str, str] = {}
        self._stemmer = False
        self._df_cache: dict[str, int] = {}
        self._cache_seq = -1
        self.db = self._connect()
        self._seq = int(self._meta("seq", 0))
        self._pending_seq = self._seq
        self._sessions = _SessionMap(self.db)

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
                                  f"reads {SCHEMA}: rebuild it")
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
            db.execute("PRAGMA journal_mode = WAL")
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
            raise ConfigError(f"{path} has recall index schema {schema}, this evlog reads {SCHEMA}: rebuild it")
        ix._seq = ix._pending_seq = int(ix._meta("seq", 0))
        ix._load_sessions()
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
        match ev:  # a fact's lifecycle: its state or text changes (an archived fact is still found)
            case MemorySuperseded():
                self._ops.append(_SetFact(ev.fact_id, STATE_CODES["superseded"], None, seq))
            case MemoryForgotten():
                self._ops.append(_SetFact(ev.fact_id, STATE_CODES["forgotten"], None, seq))
            case MemoryArchived():
                self._ops.append(_SetFact(ev.fact_id, STATE_CODES["archived"], None, seq, only_if=STATE_CODES["active"]))
            case MemoryRestored():
                self._ops.append(_SetFact(ev.fact_id, STATE_CODES["active"], None, seq, only_if=STATE_CODES["forgotten"]))
            case MemoryPinned() if ev.pinned:
                self._ops.append(_SetFact(ev.fact_id, STATE_CODES["active"], None, seq, only_if=STATE_CODES["archived"]))
            case MemoryEdited():
                self._ops.append(_SetFact(ev.fact_id, None, clean(ev.text), seq))
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
        """Apply ``events`` and commit every ``batch`` of them and at the end; returns the new seq."""
        for ev in events:
            self.apply(ev)
            if len(self._ops) >= batch:
                self.commit()
        return self.commit()

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
                self._pending_seq = max(self._pending_seq, stored)
                self._load_sessions()
                if not self._ops:
                    return self._seq
                self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise EvlogError(f"recall index {self.path}: {e}") from e
        ops, self._ops = self._ops, []
        target = self._pending_seq
        w = _Writer(self)
        try:
            for op in ops:
                w.fold(op)
            w.finish(target)
            self.db.execute("COMMIT")
        except BaseException as e:
            w.close()
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            self._pending_seq = self._seq
            self._load_sessions()
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
        vals = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN ('seq', 'ndocs', 'nchars')").fetchall())
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
            if prefix:
                row = self.db.execute("SELECT sum(doc) FROM fts_row WHERE term >= ? AND term < ?",
                                      (term, term + "\U0010ffff")).fetchone()
            else:
                row = self.db.execute("SELECT doc FROM fts_row WHERE term = ?", (term,)).fetchone()
            n = int(row[0] or 0) if row else 0
            if len(self._df_cache) > 100_000:
                self._df_cache.clear()
            self._df_cache[key] = n
        return n

    def stems(self, words: list[str]) -> list[str]:
        """The token the index's tokenizer makes of each word ("" if none): query and index stem alike."""
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
                got: dict[int, str] = {}
                for doc, term in self.db.execute("SELECT doc, term FROM temp.stemmer_v ORDER BY doc, offset"):
                    got.setdefault(doc, term)
                for j, w in enumerate(chunk, 1):
                    cache[w] = got.get(j, "")
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
        return "xxh3_128:" + h.hexdigest()

    def _meta_values(self) -> dict[str, Any]:
        return dict(self.db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'seq', 'ndocs', 'nchars') "
                                    "ORDER BY key").fetchall())

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

    def verify(self, *, tokenise: bool = False) -> list[str]:
        """Internal consistency problems ([] when none): the FTS index holds exactly the tokens of
        the stored rows, and the counters match the rows. Reads everything: for checks, not hot paths.

        The FTS index is proved by the digest its writer kept (``ftsproof``: no tokenising) when
        the index has one; ``tokenise`` (or an index made before digests) tokenises every row
        again and compares the two vocabularies, which also sees writes from outside the writer."""
        problems: list[str] = []
        db = self.db
        n, chars = db.execute("SELECT count(*), coalesce(sum(nchars), 0) FROM docs").fetchone()
        if (n, chars) != (int(self._meta("ndocs", 0)), int(self._meta("nchars", 0))):
            problems.append(f"counters say {self._meta('ndocs')} items/{self._meta('nchars')} chars, rows {n}/{chars}")
        speakers = db.execute("SELECT coalesce(s.project, ''), d.speaker, count(*) FROM docs d JOIN sessions s ON "
                              "s.sid = d.sid WHERE d.kind = 0 AND d.speaker IS NOT NULL AND d.speaker != '' "
                              "GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
        if speakers != db.execute("SELECT project, name, n FROM speakers ORDER BY 1, 2").fetchall():
            problems.append("speaker counts do not match the messages")
        orphans = db.execute("SELECT count(*) FROM docs WHERE kind = 0 AND sid NOT IN (SELECT sid FROM sessions)"
                             ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} messages of sessions that are gone")
        if not tokenise and ftsproof.stored(db) is not None:
            read = db.cursor()
            try:
                problems.extend(ftsproof.problems(db, self._stored_fts_rows(read), n))
            finally:
                read.close()
            return problems
        fts = self._fts_difference()
        if fts:
            problems.append(f"the full-text index does not match the rows (expected (term, docs) vs held: {fts})")
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

    def _stored_fts_rows(self, read: sqlite3.Cursor) -> Iterator[tuple[int, str, str, str]]:
        """(rowid, text, aux, tags) of each stored row, before the CJK rewrite (what the writer's digest hashes)."""
        sessions = {sid: _Session(sid, key, project, "", "", 0) for sid, key, project in
                    self.db.execute("SELECT sid, skey, project FROM sessions")}
        for (id_, kind, body, sid, role, speaker, caption, tools, skey, project, section, state) in read.execute(
                "SELECT id, kind, body, sid, role, speaker, caption, tools, skey, project, section, state FROM docs"):
            text = unpack(body)
            if kind == MESSAGE:
                s = sessions.get(sid)
                tags = s.message_tags(role) if s is not None else ""
                yield (id_, text, aux_text(speaker, caption, tools), tags)
            elif kind == HISTORY:
                yield (id_, text, "", _Writer.history_tags(project, skey))
            else:
                yield (id_, text, section, _Writer.fact_tags(project, state))

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


_FOLDED = (MessageAppended, MessageUpdated, SessionCreated, SessionDeleted, HistoryAppended, MemoryAppended, _SetFact)


class _Writer:
    """One commit's worth of folding: batches inserts, flushes them before any read-modify-write."""

    def __init__(self, index: RecallIndex) -> None:
        self.ix = index
        self.db = index.db
        self.fts_on = index.fts  # False: a rows-only scratch fold (no tokenising, no FTS writes)
        self.pack = pack if index.fts else _as_is  # a scratch fold stores texts as they are (compared unpacked)
        self.sessions = index._sessions
        self.sessions.before_read = self.wait
        self.docs: list[tuple[Any, ...]] = []
        self.fts: list[tuple[Any, ...]] = []
        self.speakers: dict[tuple[str, str], int] = {}
        self.ndocs = 0
        self.nchars = 0
        self.ftsdig = 0  # net hash of what this commit inserts into / deletes from the full-text table (ftsproof)
        self.pool: ThreadPoolExecutor | None = None
        self.pending: Future[None] | None = None

    # -- dispatch ---------------------------------------------------------------------------

    def fold(self, op: Any) -> None:
        if isinstance(op, int):
            return
        match op:
            case MessageAppended():
                self.message(op)
            case MessageUpdated():
                self.update(op)
            case SessionCreated():
                if op.session_key not in self.sessions:
                    self.session(op.session_key, op.seq, clean(op.project), clean(op.title),
                                 _time(op.created_at, op.ts))
            case SessionDeleted():
                self.delete_session(op.session_key)
            case HistoryAppended():
                self.history(op)
            case MemoryAppended():
                self.fact(op)
            case _SetFact():
                self.set_fact(op)

    # -- sessions and messages --------------------------------------------------------------

    def session(self, key: str, sid: int, project: str, title: str, created: str) -> _Session:
        s = _Session(sid, key, project, title, created, 0, dirty=True)
        self.sessions[key] = s
        return s

    def message(self, ev: MessageAppended) -> None:
        s = self.sessions.get(ev.session_key)
        if s is None:
            s = self.session(ev.session_key, ev.seq, "", "", _time(ev.timestamp, ev.ts))
        pos = s.nmsg
        s.nmsg += 1
        s.dirty = True
        text = clean(ev.content)
        if ev.extra:
            speaker, caption = _str(ev.extra, "speaker"), _caption(ev.extra)
        else:
            speaker = caption = None
        tools = None if ev.tool_calls is None else (" ".join(tool_names(ev.tool_calls)) or None)
        role = clean(ev.role)
        self.docs.append((ev.seq, MESSAGE, _time(ev.timestamp, ev.ts), self.pack(text), len(text), ev.seq, s.sid, pos,
                          clean(ev.message_id), role, speaker, caption, tools,
                          None, None, None, None, None, None, None))
        if self.fts_on:
            self.fts_write(_INSERT_FTS, (ev.seq, text, aux_text(speaker, caption, tools) if (speaker or caption or tools)
                                         else "", s.message_tags(role)), batched=True)
        if len(self.docs) >= _BATCH:
            self.flush(wait=False)
        self.ndocs += 1
        self.nchars += len(text)
        if speaker:
            k = (s.project, speaker)
            self.speakers[k] = self.speakers.get(k, 0) + 1

    def update(self, ev: MessageUpdated) -> None:
        s = self.sessions.get(ev.session_key)
        if s is None:
            return
        self.flush()
        rows = self.db.execute("SELECT id, body, role, speaker, caption, tools FROM docs WHERE sid = ? AND mid = ? "
                               "AND kind = 0", (s.sid, clean(ev.message_id))).fetchall()
        if not rows:
            return
        text = clean(ev.content)
        new_tools = None if ev.tool_calls is None else (" ".join(tool_names(ev.tool_calls)) or None)
        for id_, body, role, speaker, caption, tools in rows:
            old_text = unpack(body)
            tags = s.message_tags(role)
            self.fts_write(_DELETE_FTS, (id_, old_text, aux_text(speaker, caption, tools),
                                          tags))
            sp = _str(ev.extra, "speaker") if "speaker" in ev.extra else speaker
            cap = _caption(ev.extra) if any(k in ev.extra for k in _CAPTION_KEYS) else caption
            tl = tools if ev.tool_calls is None else new_tools
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
        self.db.execute("DELETE FROM docs WHERE sid = ? AND kind = 0", (s.sid,))
        self.db.execute("DELETE FROM sessions WHERE sid = ?", (s.sid,))

    # -- history and facts ------------------------------------------------------------------

    def history(self, ev: HistoryAppended) -> None:
        text, project, skey = clean(ev.text), clean(ev.project), clean(ev.session_key)
        self.docs.append((ev.seq, HISTORY, _time(ev.ts, ev.ts), self.pack(text), len(text), ev.seq, None, None, None,
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

    def fact(self, ev: MemoryAppended) -> None:
        fact_id, text, project = clean(ev.fact_id), clean(ev.text), clean(ev.project)
        scope, section = clean(ev.scope), clean(ev.section)
        row = self._fact_row(fact_id)
        if row is None:
            self.docs.append((ev.seq, FACT, _time(ev.ts, ev.ts), self.pack(text), len(text), ev.seq, None, None, None,
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
                                                  _time(ev.ts, ev.ts), id_))
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
            docs, fts = self.docs, self.fts
            self.docs, self.fts = [], []
            if wait:
                self._insert(docs, fts)
            else:
                if self.pool is None:
                    self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-index")
                self.pending = self.pool.submit(self._insert, docs, fts)

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

    def _insert(self, docs: list[tuple[Any, ...]], fts: list[tuple[Any, ...]]) -> None:
        self.db.executemany(_INSERT_DOC, docs)
        self.db.executemany(_INSERT_FTS, fts)

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
        self.db.execute("UPDATE meta SET value = ? WHERE key = 'seq'", (seq,))
