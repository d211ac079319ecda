"""The gateway web view's read models: a projection of each account's events, kept in MySQL/MariaDB.

The gateway stores the log (``event_store``: ``gateway_events``); what the web view shows is
folded from it, per account, by the **same projections a device runs** (``SessionsProjection``
and ``MemoryProjection``), so the gateway shows what a device that pulled the same events
shows: the same sessions in the same order, the same transcripts, the same facts.

* **What it folds**: the envelopes the account sees (``event_store.pull_events``: its own and
  those of the projects shared with it), each turned into the event a device would append
  (``replication.sync.receive``: origin, clock and author kept), in gateway position order.
  The projections order what they fold by clock (``eventlog.replication.clock``), not by
  arrival, as on a device.
* **The tables** (migration m011): ``gateway_view_cursor`` (one row per account: the gateway
  position folded up to, how many events that is, and the projections' state), and the rows
  the pages read: ``gateway_view_sessions`` (one ``SessionInfo`` per session, by its file
  name), ``gateway_view_messages`` (a session's message lines, as its file on a device holds
  them, in order) and ``gateway_view_facts`` (one ``FactRow`` per fact).
* **One row model**: ``SessionInfo`` and ``Message`` (``projections.sessions``, what every
  session store returns) and ``FactRow``, msgspec structs; the rows hold their JSON and the
  HTTP API's answers are those structs encoded (``wire_json``): no positional converters.
* **Incremental by position** (``catch_up``): under a lock on the account's cursor row, the
  envelopes above the cursor are folded page by page; only the sessions and facts they
  changed are written; the cursor moves in the same transaction (all or nothing, so a
  gateway killed halfway leaves the previous view, and the next read folds again).
* **Rebuildable from scratch** (``rebuild``; ``invalidate``): an emptied cursor makes the next
  catch-up drop the account's rows and fold every envelope again. An erasure (its bodies are
  gone, ``event_store.erase_events``) and a share or unshare (what the account sees changed)
  invalidate the views they touch (an erasure drops their rows at once: no erased text waits in a
  view for its next read).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from eventlog.errors import ConfigError, NotFound
from eventlog.events import Event
from eventlog.fsio import MemoryFS
from eventlog.replication.envelope import Replicated
from eventlog.replication.origin import OriginFold
from projections.memory import Fact, MemoryProjection
from projections.naming import safe_name
from projections.sessions import SESSIONS_DIR, Message, SessionInfo, SessionsProjection, info_of, parse_message_line

PAGE = 1000  # envelopes folded per page of a catch-up
VIEW_TABLES = ("gateway_view_messages", "gateway_view_sessions", "gateway_view_facts")
ROOT = "/gateway-view"  # where the projections think their files are (they live in a MemoryFS, then in the tables)


class FactRow(msgspec.Struct, kw_only=True):
    """One fact as the gateway's memory page shows it: a subset of ``projections.memory.Fact``'s fields,
    each of the same name and type (``fact_row`` copies them by name; a test holds the two together)."""

    fact_id: str
    text: str
    section: str
    scope: str = "user"
    project: str = ""
    subject: str = ""
    state: str = "active"
    pinned: bool = False
    by: str = ""
    changed_by: str = ""
    author: str = ""  # the account that pushed it ("" for one of this account's own devices: see ``fact_row``)
    superseded_by: str = ""
    supersedes: str = ""

    @property
    def target(self) -> str:
        """Its MEMORY.md: "" for the global one, else the project (``Fact.target``)."""
        return self.project if self.scope == "project" and self.project else ""


def fact_row(f: Fact) -> FactRow:
    """The row of a fact: each of ``FactRow``'s fields taken from the ``Fact`` field of that name."""
    return FactRow(**{name: getattr(f, name) for name in FactRow.__struct_fields__})


_encoder = msgspec.json.Encoder()


def wire_json(rows: Sequence[msgspec.Struct] | msgspec.Struct) -> bytes:
    """The HTTP wire format of read-model rows: their structs as JSON."""
    return _encoder.encode(rows)


class _State(msgspec.Struct):
    sessions: Any
    memory: Any
    folded: int  # events folded so far (their seqs in the view: 1, 2, ...)


class ViewSessions(SessionsProjection):
    """``SessionsProjection`` whose session files are the account's message rows (read back by ``lines_of``)."""

    def __init__(self, lines_of: Any) -> None:
        super().__init__(ROOT, MemoryFS(), live=False)
        self.lines_of = lines_of

    def file_lines(self, s: Any) -> list[bytes]:
        return self.lines_of(s.file) if s.file_hash else []


class View:
    """One account's projections, loaded from (and saved to) its cursor row."""

    def __init__(self, cur: Any, user_id: int, state: bytes) -> None:
        self.cur, self.user_id = cur, user_id
        self.sessions = ViewSessions(self._lines)
        self.memory = MemoryProjection(ROOT, MemoryFS(), live=False)
        self.folded = 0
        if state:
            st = msgspec.msgpack.decode(state, type=_State)
            self.sessions.load(st.sessions)
            self.memory.load(st.memory)
            self.folded = st.folded
        self.facts: set[str] = set()
        self.stored: dict[str, list[bytes]] = {}  # a session's message rows as read (what a save need not rewrite)

    def _lines(self, file: str) -> list[bytes]:
        if file not in self.stored:
            self.cur.execute("SELECT line FROM gateway_view_messages WHERE user_id = %s AND file_hash = %s "
                             "ORDER BY idx", (self.user_id, _hash(file)))
            self.stored[file] = [bytes(r[0]) for r in self.cur.fetchall()]
        return list(self.stored[file])

    def fold(self, envelopes: Iterable[Replicated]) -> None:
        """Fold envelopes (as a device receives them) into both projections."""
        origins = OriginFold()  # seq fields are not shown by the view: their refs need no local seqs
        for env in envelopes:
            from eventlog.replication.sync import receive

            self.folded += 1
            ev: Event = msgspec.structs.replace(receive(env, origins), seq=self.folded)
            if ev.type in SessionsProjection.consumes:
                self.sessions.apply(ev)
            if ev.type in MemoryProjection.consumes:
                self.memory.apply(ev)
                self._touch(ev)

    def _touch(self, ev: Event) -> None:
        self.facts.add(getattr(ev, "fact_id", ""))
        self.facts.add(getattr(ev, "by_fact_id", ""))  # a supersede changes the newer fact too

    def save(self, position: int) -> None:
        """Write what changed (sessions, their messages, facts) and the cursor."""
        written = self._flush_sessions()
        for name, data in written.items():
            self._store_session(name, data)
        self._store_facts()
        state = msgspec.msgpack.encode(_State(self.sessions.state(), self.memory.state(), self.folded))
        self.cur.execute("UPDATE gateway_view_cursor SET position = %s, state = %s WHERE user_id = %s",
                         (position, state, self.user_id))

    def _store_facts(self) -> None:
        """The rows of every fact of each file a changed fact belongs to, with its place in that file's order."""
        facts = self.memory.s.facts
        targets = sorted({facts[fid].target for fid in self.facts if fid in facts})
        rows = []
        for target in targets:
            order = self.memory.s.order.get(target, [])
            placed = [facts[fid] for fid in order if fid in facts]
            rest = sorted((f for f in facts.values() if f.target == target and f.fact_id not in set(order)),
                          key=lambda f: f.fact_id)
            rows += [(self.user_id, f.fact_id, _hash(target), i, wire_json(fact_row(f)))
                     for i, f in enumerate(placed + rest)]
        for i in range(0, len(rows), 500):
            self.cur.executemany("REPLACE INTO gateway_view_facts (user_id, fact_id, target_hash, rank, row_json) "
                                 "VALUES (%s, %s, %s, %s, %s)", rows[i:i + 500])

    def _flush_sessions(self) -> dict[str, bytes | None]:
        """The session files the flush wrote (name -> bytes) or removed (name -> None)."""
        fs = self.sessions.fs
        assert isinstance(fs, MemoryFS)
        removed = set(self.sessions.removed)
        fs.files.clear()
        self.sessions.flush()
        prefix = f"{ROOT}/{SESSIONS_DIR}/"
        out: dict[str, bytes | None] = dict.fromkeys(removed)
        out.update((path[len(prefix):], data) for path, data in fs.files.items())
        return out

    def _store_session(self, name: str, data: bytes | None) -> None:
        """The session's row and its message rows, rewritten from the first line that changed."""
        h = _hash(name)
        lines = [] if data is None else data.split(b"\n")[1:-1]
        old = self.stored.get(name)
        same = 0 if old is None else next((i for i, (a, b) in enumerate(zip(old, lines, strict=False)) if a != b),
                                          min(len(old), len(lines)))
        self.cur.execute("DELETE FROM gateway_view_messages WHERE user_id = %s AND file_hash = %s AND idx >= %s",
                         (self.user_id, h, same))
        if data is None:
            self.cur.execute("DELETE FROM gateway_view_sessions WHERE user_id = %s AND file_hash = %s",
                             (self.user_id, h))
            return
        key = msgspec.json.decode(data[:data.index(b"\n")])["key"]
        info = info_of(self.sessions.index[key])
        self.cur.execute("REPLACE INTO gateway_view_sessions (user_id, file_hash, updated_at, session_key, project, "
                         "row_json) VALUES (%s, %s, %s, %s, %s, %s)",
                         (self.user_id, h, info.updated_at, info.key, info.project, wire_json(info)))
        for i in range(same, len(lines), 500):
            chunk = lines[i:i + 500]
            self.cur.executemany("INSERT INTO gateway_view_messages (user_id, file_hash, idx, line) "
                                 "VALUES (%s, %s, %s, %s)", [(self.user_id, h, i + j, ln) for j, ln in enumerate(chunk)])


def _hash(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest()


# --------------------------------------------------------------------------- keeping it current


def _cursor(cur: Any, user_id: int) -> tuple[int, bytes]:
    """The account's cursor row, locked (created empty if new); an empty state drops its rows (a rebuild)."""
    cur.execute("INSERT IGNORE INTO gateway_view_cursor (user_id, position, state) VALUES (%s, 0, '')", (user_id,))
    cur.execute("SELECT position, state FROM gateway_view_cursor WHERE user_id = %s FOR UPDATE", (user_id,))
    position, state = cur.fetchone()
    state = bytes(state)
    if not state:
        for table in VIEW_TABLES:
            cur.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,))
        position = 0
    return int(position), state


def catch_up(cur: Any, user_id: int) -> int:
    """Fold the account's envelopes above its cursor into its view (one transaction: ``cur``'s); the new position."""
    from eventlog.app.gateway.event_store import pull_events

    position, state = _cursor(cur, user_id)
    view: View | None = None
    while True:
        page = pull_events(cur, user_id, position, PAGE, snapshot=False)  # VIEW_ISOLATION: no one snapshot
        if page.events:
            view = view or View(cur, user_id, state)
            view.fold(page.events)
        moved = page.cursor != position
        position = page.cursor
        if not page.more:
            break
    if view is not None:
        view.save(position)
    elif moved or not state:
        _save_position(cur, user_id, position, state)
    return position


def _save_position(cur: Any, user_id: int, position: int, state: bytes) -> None:
    if not state:
        state = msgspec.msgpack.encode(_State(ViewSessions(None).state(), MemoryProjection(ROOT, MemoryFS()).state(), 0))
    cur.execute("UPDATE gateway_view_cursor SET position = %s, state = %s WHERE user_id = %s", (position, state, user_id))


def invalidate(cur: Any, user_ids: Iterable[int], *, drop: bool = False) -> None:
    """Make the next catch-up of these accounts' views rebuild them from scratch (``drop``: delete their rows now,
    as an erasure must: no erased text stays in a view until its next read)."""
    ids = sorted(set(user_ids))
    if not ids:
        return
    marks = ", ".join(["%s"] * len(ids))
    cur.execute(f"UPDATE gateway_view_cursor SET position = 0, state = '' WHERE user_id IN ({marks})", tuple(ids))
    if drop:
        for table in VIEW_TABLES:
            cur.execute(f"DELETE FROM {table} WHERE user_id IN ({marks})", tuple(ids))


def rebuild(cur: Any, user_id: int) -> int:
    """The account's view dropped and folded again from every envelope it sees; the position."""
    invalidate(cur, [user_id])
    return catch_up(cur, user_id)


# --------------------------------------------------------------------------- reading (after ``catch_up``)


_SESSION = msgspec.json.Decoder(SessionInfo)
_FACT = msgspec.json.Decoder(FactRow)


def sessions(cur: Any, user_id: int, *, offset: int = 0, limit: int = 50, project: str | None = None,
             query: str | None = None) -> tuple[list[SessionInfo], int]:
    """A page of the account's sessions, newest ``updated_at`` first (ties: by key), as a device lists them;
    and how many match (``project``: only that project's; ``query``: a substring of the title, display,
    preview or key, case-folded as the local view filters)."""
    where = "user_id = %s"
    params: list[Any] = [user_id]
    if project is not None:
        where += " AND project = %s"
        params.append(project)
    cur.execute(f"SELECT row_json FROM gateway_view_sessions WHERE {where} ORDER BY updated_at DESC, session_key",
                tuple(params))
    found = [_SESSION.decode(bytes(r[0])) for r in cur.fetchall()]
    if query:
        q = query.casefold()
        found = [s for s in found if any(q in v.casefold() for v in (s.title, s.display, s.preview, s.key))]
    return found[offset:offset + limit], len(found)


def projects(cur: Any, user_id: int) -> list[str]:
    """Every project the account's sessions name, sorted."""
    cur.execute("SELECT DISTINCT project FROM gateway_view_sessions WHERE user_id = %s AND project <> ''", (user_id,))
    return sorted(str(r[0]) for r in cur.fetchall())


def session(cur: Any, user_id: int, key: str) -> SessionInfo | None:
    """One session of the account (None if it has none of that key)."""
    cur.execute("SELECT row_json FROM gateway_view_sessions WHERE user_id = %s AND file_hash = %s",
                (user_id, _hash(_file_of(key))))
    row = cur.fetchone()
    info = _SESSION.decode(bytes(row[0])) if row else None
    return info if info is not None and info.key == key else None


def messages(cur: Any, user_id: int, key: str, *, offset: int = 0, limit: int | None = None) -> tuple[list[Message], int]:
    """A page of the session's messages as its file on a device holds them (oldest first), and how many it holds."""
    h = _hash(_file_of(key))
    cur.execute("SELECT COUNT(*) FROM gateway_view_messages WHERE user_id = %s AND file_hash = %s", (user_id, h))
    total = int(cur.fetchone()[0])
    cur.execute("SELECT line FROM gateway_view_messages WHERE user_id = %s AND file_hash = %s AND idx >= %s "
                "ORDER BY idx LIMIT %s", (user_id, h, offset, total if limit is None else limit))
    return [parse_message_line(bytes(r[0])) for r in cur.fetchall()], total


def facts(cur: Any, user_id: int, *, state: str | None = "active") -> list[FactRow]:
    """The account's facts (``state``: only those in it; None: all), file by file (the global one first, then
    by project), each file's in the order its MEMORY.md on a device shows them."""
    cur.execute("SELECT rank, row_json FROM gateway_view_facts WHERE user_id = %s", (user_id,))
    rows = [(int(rank), _FACT.decode(bytes(j))) for rank, j in cur.fetchall()]
    rows = [(rank, r) for rank, r in rows if state is None or r.state == state]
    rows.sort(key=lambda x: (x[1].target != "", x[1].target, x[0]))
    return [r for _rank, r in rows]


#: The view's transactions run READ COMMITTED: under REPEATABLE READ the first read of a new account
#: (a DELETE of rows it does not have yet, then INSERTs) took gap locks reaching into its neighbours'
#: ranges, so 50 accounts' first reads at once deadlocked each other (1213) until the pool ran dry and
#: pages answered 503 (tools/bench_web.py --only gateway_page_loads). One account's catch-ups are still
#: serialised by its cursor row (FOR UPDATE), and positions commit in order, so each statement sees a
#: prefix of them; the cursor moves only to the last envelope read (``pull_events(snapshot=False)``),
#: never to a maximum a later statement saw (which skipped a message added meanwhile: tested).
VIEW_ISOLATION = "READ COMMITTED"


class ReadModel:
    """The read models of a gateway database: each read catches the account's view up first (one transaction)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def read(self, user_id: int, fn: Any, *, doing: str = "reading the web view") -> Any:
        """``fn(cursor, user_id)`` on the account's view, caught up with every envelope it sees."""
        from eventlog.app.gateway.event_store import retrying

        def run(cur: Any) -> Any:
            catch_up(cur, user_id)
            return fn(cur, user_id)

        with self.pool.connection() as conn:
            return retrying(conn, run, doing=doing, isolation=VIEW_ISOLATION)

    def rebuild(self, user_id: int) -> int:
        """Drop the account's view and fold it again from its events; the position."""
        from eventlog.app.gateway.event_store import retrying

        with self.pool.connection() as conn:
            return retrying(conn, lambda cur: rebuild(cur, user_id), doing="rebuilding the web view",
                            isolation=VIEW_ISOLATION)


def _every_message(cur: Any, user_id: int) -> list[tuple[SessionInfo, Message]]:
    """Every message the account's sessions hold, newest session first, each session's newest message first."""
    listed, _ = sessions(cur, user_id, limit=2**31)
    by_file = {_hash(_file_of(s.key)): s for s in listed}
    cur.execute("SELECT file_hash, line FROM gateway_view_messages WHERE user_id = %s ORDER BY file_hash, idx DESC",
                (user_id,))
    found: dict[bytes, list[Message]] = {}
    for h, line in cur.fetchall():
        found.setdefault(bytes(h), []).append(parse_message_line(bytes(line)))
    return [(s, m) for h, s in by_file.items() for m in found.get(h, [])]


def _file_of(key: str) -> str:
    return safe_name(key, ".jsonl")


def search(cur: Any, user_id: int, query: str, *, limit: int = 50) -> list[Message]:
    """Messages whose content contains ``query`` (case-folded), newest session first, at most ``limit``."""
    q = query.casefold()
    hits = [m for _s, m in _every_message(cur, user_id) if isinstance(m.content, str) and q in m.content.casefold()]
    return hits[:max(0, limit)]


def messages_per_day(cur: Any, user_id: int) -> list[tuple[str, str, int]]:
    """(day, project, messages) for every day the account's messages were written (their own timestamps)."""
    counts: dict[tuple[str, str], int] = {}
    for s, m in _every_message(cur, user_id):
        day = m.timestamp[:10]
        if len(day) == 10 and day[4] == "-" and day[7] == "-":
            counts[(day, s.project)] = counts.get((day, s.project), 0) + 1
    return [(d, p, n) for (d, p), n in sorted(counts.items())]


def message_index(cur: Any, user_id: int, key: str, message_id: str) -> int | None:
    """The place of a message in its session's messages (None if the session holds no such message)."""
    msgs, _ = messages(cur, user_id, key)
    return next((i for i, m in enumerate(msgs) if m.id == message_id), None)


# --------------------------------------------------------------------------- the HTTP wire format (``http_api``'s /view/...)


class SessionsQuery(msgspec.Struct, forbid_unknown_fields=True):
    offset: int = 0
    limit: int = 50
    project: str | None = None
    query: str | None = None


class SessionsPage(msgspec.Struct):
    sessions: list[SessionInfo]
    total: int
    projects: list[str]


class TranscriptQuery(msgspec.Struct, forbid_unknown_fields=True):
    key: str
    offset: int = 0
    limit: int = 100


class TranscriptPage(msgspec.Struct):
    session: SessionInfo
    messages: list[Message]
    total: int


class FactsPage(msgspec.Struct):
    facts: list[FactRow]


MAX_PAGE = 1000  # sessions or messages one /view request may ask for


def _check_page(offset: int, limit: int) -> None:
    if offset < 0 or not 0 <= limit <= MAX_PAGE:
        raise ConfigError(f"a page needs offset >= 0 and limit in 0..{MAX_PAGE} (got offset={offset}, limit={limit})")


def sessions_page(cur: Any, user_id: int, q: SessionsQuery) -> SessionsPage:
    """``POST /view/sessions``: a page of the sessions list."""
    _check_page(q.offset, q.limit)
    found, total = sessions(cur, user_id, offset=q.offset, limit=q.limit, project=q.project, query=q.query)
    return SessionsPage(found, total, projects(cur, user_id))


def transcript_page(cur: Any, user_id: int, q: TranscriptQuery) -> TranscriptPage:
    """``POST /view/transcript``: a page of one session's messages; ``NotFound`` for a session it does not have."""
    _check_page(q.offset, q.limit)
    info = session(cur, user_id, q.key)
    if info is None:
        raise NotFound(f"no session {q.key[:200]!r}")
    msgs, total = messages(cur, user_id, q.key, offset=q.offset, limit=q.limit)
    return TranscriptPage(info, msgs, total)


def facts_page(cur: Any, user_id: int) -> FactsPage:
    """``GET /view/facts``: every fact of the account (any state), file by file."""
    return FactsPage(facts(cur, user_id, state=None))
