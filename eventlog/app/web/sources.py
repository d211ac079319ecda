"""Where the web pages get sessions and messages: the local workspace or the gateway, one interface.

``LocalSource`` reads a workspace opened read-only through ``LocalSessionStore`` (never
locks, never writes: the daemon and agents keep writing meanwhile; its projections catch
up with their appends on each request). ``GatewaySource`` reads one signed-in user's read
models (``eventlog.app.gateway.read_model``: the device's projections of the account's events,
caught up on each request) on a pooled connection, and adds a message as an event of the
account's web view (``web_events``): every query names that user, so another user's sessions
are simply not there (404), whatever key is asked for.

Both give the pages the same things (``Source``): a page of sessions newest first
(filtered by project or text), the projects, one session, a page of its messages, where a
message is, a search, daily message counts, and (gateway only) adding a message.
"""

from __future__ import annotations

import threading
import time
import uuid
from abc import ABC, abstractmethod
from typing import Any

from eventlog.app.gateway import read_model as views
from eventlog.app.session_store import LocalSessionStore, Message, SessionInfo
from eventlog.app.web import data
from eventlog.app.workspace import Workspace
from eventlog.errors import ConfigError, EvlogError, NotFound
from eventlog.events import MessageAppended
from eventlog.timeutil import now_iso

MAX_MESSAGE_CHARS = 100_000
READ_ATTEMPTS = 8  # tries to read a session file that writers keep rewriting (about 0.3 s in all)


class Source(ABC):
    """What the pages read (and, in gateway mode, write). ``user`` is None in local mode."""

    mode: str
    writable: bool = False

    @abstractmethod
    def sessions(self, user: Any, *, offset: int, limit: int, project: str | None,
                 query: str | None) -> tuple[list[SessionInfo], int, list[str]]:
        """A page of sessions newest first, how many match, and every project (for the filter)."""

    @abstractmethod
    def transcript(self, user: Any, key: str, *, page: int | None,
                   per: int) -> tuple[SessionInfo, list[Message], int, int]:
        """(the session, its messages on page ``page`` (1-based; None: the last), how many it has, the page);
        ``NotFound`` for an unknown session (also for another user's key)."""

    @abstractmethod
    def locate(self, user: Any, key: str, message_id: str) -> int:
        """The index of a message in its session; ``NotFound``."""

    @abstractmethod
    def search(self, user: Any, query: str, project: str | None) -> data.SearchView: ...

    @abstractmethod
    def messages_per_day(self, user: Any) -> data.Series: ...

    def add_message(self, user: Any, key: str, content: str) -> tuple[Message, int]:
        """Add a user message (gateway mode); (the message, how many the session has now)."""
        raise ConfigError("this view is read-only")

    def version(self, user: Any) -> str:
        """A value that changes when what the pages show may have changed ("" when there is no cheap one)."""
        return ""

    def close(self) -> None:  # noqa: B027 - optional hook: a source with nothing to release keeps it
        """Release the workspace or the pool."""


class LocalSource(Source):
    """A local workspace, read-only (see the module docstring)."""

    mode = "local"

    def __init__(self, home: str) -> None:
        self.ws = Workspace.open(home)
        self.store = LocalSessionStore(self.ws)
        self.lock = threading.RLock()
        self.stats = data.Stats()
        self._listed: tuple[int, list[SessionInfo]] = (-1, [])
        self._read: tuple[str, int, list[Message]] | None = None
        self._projects: tuple[Any, list[str]] = (None, [])

    @property
    def home(self) -> str:
        return self.ws.home

    def _all(self) -> list[SessionInfo]:
        """Every session newest first, cached until the log moves."""
        with self.lock:
            self.ws.catch_up()  # catch up with other processes' appends
            seq = self.ws.log.last_seq
            if self._listed[0] != seq:
                self._listed = (seq, self.store.list())
            return self._listed[1]

    def sessions(self, user: Any, *, offset: int, limit: int, project: str | None,
                 query: str | None) -> tuple[list[SessionInfo], int, list[str]]:
        everything = found = self._all()
        if project is not None:
            found = [s for s in found if s.project == project]
        if query:
            q = query.casefold()
            found = [s for s in found if q in s.title.casefold() or q in (s.display or "").casefold() or q in s.preview.casefold() or q in s.key.casefold()]
        with self.lock:
            if self._projects[0] is not everything:
                self._projects = (everything, sorted({s.project for s in everything if s.project}))
            projects = self._projects[1]
        return found[offset:offset + limit], len(found), projects

    def transcript(self, user: Any, key: str, *, page: int | None,
                   per: int) -> tuple[SessionInfo, list[Message], int, int]:
        with self.lock:
            self.ws.catch_up()
            info = self.store.get(key)
            if info is None:
                raise NotFound(f"no session {key!r}")
            msgs = self._history(key)
        last = max(1, -(-len(msgs) // per))
        n = last if page is None else min(max(1, page), last)
        return info, msgs[(n - 1) * per:n * per], len(msgs), n

    def _history(self, key: str) -> list[Message]:
        """The session's messages (all its file keeps), cached until the log moves."""
        with self.lock:
            self.ws.catch_up()
            seq = self.ws.log.last_seq
            cached = self._read
            if cached is not None and cached[0] == key and cached[1] == seq:
                return cached[2]
            for attempt in range(READ_ATTEMPTS):
                try:
                    msgs = self.store.history(key)
                    break
                except NotFound:
                    raise
                except EvlogError:  # the session files keep moving under us (a writer flushing): wait, retry
                    if attempt == READ_ATTEMPTS - 1:
                        raise
                    time.sleep(0.01 * (attempt + 1))
            self._read = (key, seq, msgs)
            return msgs

    def locate(self, user: Any, key: str, message_id: str) -> int:
        for i, m in enumerate(self._history(key)):
            if str(m.id) == message_id:
                return i
        raise NotFound(f"no message {message_id!r} in session {key!r} (older messages leave the session file)")

    def search(self, user: Any, query: str, project: str | None) -> data.SearchView:
        with self.lock:
            return data.search(self.ws, query, project=project)

    def messages_per_day(self, user: Any) -> data.Series:
        with self.lock:
            self.stats.update(self.ws)
        return self.stats.view().messages

    # local-only pages: memory, audit, processors, plots
    def memory_files(self) -> list[data.MemoryFileView]:
        with self.lock:
            return data.memory_files(self.ws)

    def why(self, fact_id: str) -> data.WhyView | None:
        with self.lock:
            return data.why(self.ws, fact_id)

    def dream_runs(self) -> list[data.RunView]:
        with self.lock:
            return data.dream_runs(self.ws)

    def offsets(self) -> list[data.OffsetView]:
        with self.lock:
            return data.offsets(self.ws)

    def plots(self) -> data.PlotsView:
        with self.lock:
            self.stats.update(self.ws)
        return self.stats.view()

    def log_end(self) -> int:
        with self.lock:
            return self.ws.log.last_seq

    def version(self, user: Any) -> str:
        """The log's last seq, caught up with other processes' appends (every page is a view of the log)."""
        with self.lock:
            self.ws.projections  # noqa: B018 - catch up with other processes' appends
            return str(self.ws.log.last_seq)

    def past_facts(self) -> list[tuple[str, list[data.FactView]]]:
        with self.lock:
            self.ws.projections  # noqa: B018
            return data.past_facts(self.ws)

    def close(self) -> None:
        self.ws.close()


class GatewaySource(Source):
    """The gateway database for signed-in users: its read models (see the module docstring)."""

    mode = "gateway"
    writable = True

    def __init__(self, pool: Any) -> None:
        from eventlog.app.gateway.read_model import ReadModel

        self.pool = pool
        self.views = ReadModel(pool)

    def _read(self, user: Any, fn: Any) -> Any:
        """``fn(cursor, user id)`` on the user's caught-up view; ``NotMigrated`` while their rows wait for
        'evlog gateway migrate' (an empty view would hide them)."""
        if user is None:
            raise NotFound("not signed in")
        from eventlog.app.gateway.row_migration import refuse_unmigrated

        def run(cur: Any, uid: int) -> Any:
            refuse_unmigrated(cur, uid)
            return fn(cur, uid)

        return self.views.read(user.id, run)

    def sessions(self, user: Any, *, offset: int, limit: int, project: str | None,
                 query: str | None) -> tuple[list[SessionInfo], int, list[str]]:
        def run(cur: Any, uid: int) -> tuple[list[SessionInfo], int, list[str]]:
            found, total = views.sessions(cur, uid, offset=offset, limit=limit, project=project, query=query)
            return found, total, views.projects(cur, uid)

        return self._read(user, run)

    def transcript(self, user: Any, key: str, *, page: int | None,
                   per: int) -> tuple[SessionInfo, list[Message], int, int]:
        def run(cur: Any, uid: int) -> tuple[SessionInfo, list[Message], int, int]:
            info = views.session(cur, uid, key)
            if info is None:
                raise NotFound(f"no session {key!r}")
            total = views.messages(cur, uid, key, limit=0)[1]
            last = max(1, -(-total // per))
            n = last if page is None else min(max(1, page), last)
            return info, views.messages(cur, uid, key, offset=(n - 1) * per, limit=per)[0], total, n

        return self._read(user, run)

    def locate(self, user: Any, key: str, message_id: str) -> int:
        found = self._read(user, lambda cur, uid: views.message_index(cur, uid, key, message_id))
        if found is None:
            raise NotFound(f"no message {message_id!r} in session {key!r}")
        return int(found)

    def search(self, user: Any, query: str, project: str | None) -> data.SearchView:
        hits = []
        for m in self._read(user, lambda cur, uid: views.search(cur, uid, query, limit=data.SEARCH_LIMIT)):
            snippet = _snippet(m.content, query)
            hits.append(data.SearchHit(m.session_key, m.id, m.role, m.timestamp, snippet, "", 0.0,
                                       data.query_parts(snippet, query)))
        return data.SearchView("substring", hits, "the newest messages containing these words")

    def messages_per_day(self, user: Any) -> data.Series:
        rows = self._read(user, views.messages_per_day)
        values: dict[str, dict[str, float]] = {}
        for day, project, n in rows:
            values.setdefault(project, {})[day] = values.get(project, {}).get(day, 0) + n
        return data.Series(sorted({d for d, _, _ in rows}), values)

    def memory_files(self, user: Any) -> list[data.MemoryFileView]:
        """The account's MEMORY.md files as a device that pulled its events renders them (active facts), each
        fact with its author."""
        files: dict[str, list[Any]] = {}
        for f in self._read(user, views.facts):
            files.setdefault(f.project if f.scope == "project" and f.project else "", []).append(f)
        return data.file_views(files)

    def add_message(self, user: Any, key: str, content: str) -> tuple[Message, int]:
        """Add a user message to the session as an event of the account's web view (``web_events``); (the
        message, how many the session has now)."""
        if user is None:
            raise NotFound("not signed in")
        if not content.strip():
            raise ConfigError("the message is empty")
        if len(content) > MAX_MESSAGE_CHARS:
            raise ConfigError(f"a message may have at most {MAX_MESSAGE_CHARS} characters")
        from eventlog.app.gateway import web_events
        from eventlog.app.gateway.event_store import retrying

        info = self._read(user, lambda cur, uid: views.session(cur, uid, key))
        if info is None:
            raise NotFound(f"no session {key!r}")
        ev = MessageAppended(session_key=key, message_id=uuid.uuid4().hex, role="user", content=content,
                             timestamp=now_iso())
        with self.pool.connection() as conn:  # its own transaction: its snapshot starts at the position lock
            retrying(conn, lambda cur: web_events.append(cur, user, [(ev, info.project)]), doing="adding a message")
        message_id = ev.message_id

        def added(cur: Any, uid: int) -> tuple[Message, int]:
            msgs, total = views.messages(cur, uid, key)
            return next(m for m in msgs if m.id == message_id), total

        return self._read(user, added)

    def close(self) -> None:
        self.pool.close()


def _snippet(text: Any, query: str, width: int = 160) -> str:
    text = text if isinstance(text, str) else str(text)
    flat = " ".join(text.split())
    i = flat.casefold().find(query.casefold())
    if i < 0 or len(flat) <= width:
        return flat[:width]
    start = max(0, i - width // 3)
    return ("…" if start else "") + flat[start:start + width] + ("…" if start + width < len(flat) else "")
