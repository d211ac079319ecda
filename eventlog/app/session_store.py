"""The session store: the small API an agent loop embeds to keep its conversations.

``SessionStore`` is the interface; its docstrings are the specification that every
backend follows (the local store here, the MySQL gateway store in
``eventlog.app.gateway.store`` and the in-memory one in ``eventlog.app.gateway.memory_store``)
and that ``tests/contracts/`` checks against each of them.

``LocalSessionStore`` writes every change as an event to the workspace log (the truth)
and answers reads from the sessions projection, which it keeps caught up with the log.
Session files on disk trail the log by at most the workspace's flush interval and are
brought up to date on open after a crash.
"""

from __future__ import annotations

import builtins
import threading
import uuid
from abc import ABC, abstractmethod
from typing import Any

from eventlog.app.session_tree import SessionNode, resolve_key, session_tree
from eventlog.app.workspace import Workspace
from eventlog.errors import InvalidEventError, NotFound
from eventlog.events import MessageAppended, SessionCreated, SessionDeleted, SessionUpdated
from eventlog.timeutil import now_iso
from projections.sessions import Message, SessionInfo, SessionsProjection, info_of, parse_message_line

ROLES = frozenset({"user", "assistant", "system", "tool"})


class SessionStore(ABC):
    """Conversations by session key. Every method is safe to call from several threads."""

    @abstractmethod
    def get_or_create(self, key: str, *, title: str = "", metadata: dict[str, Any] | None = None,
                      project: str = "") -> SessionInfo:
        """The session ``key``, created (with ``title``, ``metadata``, ``project``) if it does not exist.

        An existing session is returned unchanged (the arguments are not applied to it).
        """

    @abstractmethod
    def add_message(self, key: str, role: str, content: str, *, message_id: str | None = None,
                    timestamp: str | None = None, tool_calls: list[Any] | None = None,
                    extra: dict[str, Any] | None = None) -> Message:
        """Append a message to session ``key`` (created if needed); returns the stored message.

        ``message_id`` defaults to a new unique id and ``timestamp`` to now (UTC). Adding a
        message whose id the session already has is a no-op that returns the stored one.
        """

    @abstractmethod
    def history(self, key: str, limit: int | None = None) -> list[Message]:
        """The session's newest ``limit`` messages (all it keeps if None), oldest first.

        Raises ``NotFound`` for an unknown session. The local store keeps the newest 2000.
        """

    @abstractmethod
    def get(self, key: str) -> SessionInfo | None:
        """The session's metadata, or None if there is no such session."""

    @abstractmethod
    def list(self) -> list[SessionInfo]:
        """Every session, newest ``updated_at`` first (ties: by key)."""

    @abstractmethod
    def update(self, key: str, *, title: str | None = None, preview: str | None = None,
               metadata: dict[str, Any] | None = None) -> SessionInfo:
        """Change title, preview or metadata (merged key by key); None leaves a field as is.

        Raises ``NotFound`` for an unknown session.
        """

    @abstractmethod
    def delete(self, key: str) -> bool:
        """Remove the session and its messages; True if it existed."""

    def tree(self, *, probes: bool = False) -> builtins.list[SessionNode]:
        """``list()`` with subagent sessions nested under their parent and probes folded
        (``probes=True`` keeps them); each node has the key's unique short form (``eventlog.app.session_tree``)."""
        return session_tree(self.list(), probes=probes)

    def resolve(self, key: str) -> str:
        """The session key ``key`` names: a whole key or a unique short form of one; ``NotFound`` otherwise."""
        if self.get(key) is not None:
            return key
        return resolve_key(key, (s.key for s in self.list()))

    def close(self) -> None:  # noqa: B027 - optional hook: a store with nothing to release keeps it
        """Release resources (flush files, connections); idempotent."""

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise InvalidEventError(f"role must be one of {', '.join(sorted(ROLES))}, got {role!r}", field="role")


class LocalSessionStore(SessionStore):
    """The session store over a local workspace (see the module docstring)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.RLock()

    @classmethod
    def open(cls, home: str | None = None, **kwargs: Any) -> LocalSessionStore:
        """Open the workspace at ``home`` as its writer and return a store over it."""
        return cls(Workspace.open(home, writable=True, **kwargs))

    @property
    def _sessions(self) -> SessionsProjection:
        return self.ws.sessions

    def _append(self, *events: Any) -> None:
        self.ws.append(list(events))

    def get_or_create(self, key: str, *, title: str = "", metadata: dict[str, Any] | None = None,
                      project: str = "") -> SessionInfo:
        with self._lock:
            s = self._sessions.index.get(key)
            if s is None:
                self._append(SessionCreated(session_key=key, title=title, metadata=metadata or {},
                                            created_at=now_iso(), project=project))
                s = self._sessions.index[key]
            return info_of(s)

    def add_message(self, key: str, role: str, content: str, *, message_id: str | None = None,
                    timestamp: str | None = None, tool_calls: list[Any] | None = None,
                    extra: dict[str, Any] | None = None) -> Message:
        _check_role(role)
        with self._lock:
            mid = message_id or uuid.uuid4().hex
            ev = MessageAppended(session_key=key, message_id=mid, role=role, content=content,
                                 timestamp=timestamp or now_iso(), tool_calls=tool_calls, extra=extra or {},
                                 dedup=f"msg:{key}:{self._generation(key)}:{mid}" if message_id else "")
            events: list[Any] = [ev]
            if key not in self._sessions.index:
                events.insert(0, SessionCreated(session_key=key, created_at=ev.timestamp))
            end = self.ws.log.last_seq
            seq = self.ws.append(events)[-1]
            if seq <= end:  # a message with this id was already stored: return that one
                rec = self.ws.log.find(seq)
                if rec is not None and isinstance(rec.event, MessageAppended):
                    ev = rec.event
            return Message(id=ev.message_id, session_key=key, role=ev.role, content=ev.content,
                           timestamp=ev.timestamp, tool_calls=ev.tool_calls, extra=dict(ev.extra))

    def _generation(self, key: str) -> int:
        """Distinguishes a re-created session from a deleted one of the same key (for dedup keys)."""
        s = self._sessions.index.get(key)
        return s.created_seq if s is not None else self.ws.log.last_seq + 1

    def history(self, key: str, limit: int | None = None) -> list[Message]:
        with self._lock:
            if key not in self._sessions.index:
                raise NotFound(f"no session {key!r}")
            lines = self.ws.read_projection(lambda: self._sessions.lines(key))
        if limit is not None:
            lines = lines[-limit:] if limit > 0 else []
        return [parse_message_line(ln) for ln in lines]

    def get(self, key: str) -> SessionInfo | None:
        with self._lock:
            s = self._sessions.index.get(key)
            return None if s is None else info_of(s)

    def list(self) -> list[SessionInfo]:
        with self._lock:
            entries = list(self._sessions.index.values())
        entries.sort(key=lambda s: s.key)
        entries.sort(key=lambda s: s.updated_at, reverse=True)
        return [info_of(s) for s in entries]

    def update(self, key: str, *, title: str | None = None, preview: str | None = None,
               metadata: dict[str, Any] | None = None) -> SessionInfo:
        with self._lock:
            if key not in self._sessions.index:
                raise NotFound(f"no session {key!r}")
            self._append(SessionUpdated(session_key=key, title=title, preview=preview, metadata=metadata,
                                        updated_at=now_iso()))
            return info_of(self._sessions.index[key])

    def delete(self, key: str) -> bool:
        with self._lock:
            if key not in self._sessions.index:
                return False
            self._append(SessionDeleted(session_key=key))
            return True

    def close(self) -> None:
        self.ws.close()
