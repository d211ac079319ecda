"""A small pool of gateway connections for servers (``evlog web --gateway`` and its sync API).

Each request borrows one ``Connection`` (``with pool.connection() as conn``) and gives it
back; a connection that turned out dead is reopened by ``Connection.transaction`` itself.
At most ``size`` connections are open; a request that finds none free waits up to
``wait`` seconds, then fails with ``BackendError`` (the server answers 503).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator

from eventlog.app.gateway.connection import DSN, Connection, Timeouts
from eventlog.app.gateway.schema import migrate
from eventlog.errors import BackendError


class Pool:
    """Up to ``size`` connections to one database (see the module docstring)."""

    def __init__(self, dsn: str | DSN | None, *, size: int = 16, wait: float = 10.0,
                 timeouts: Timeouts | None = None) -> None:
        self.dsn = dsn if isinstance(dsn, DSN) else DSN.parse(dsn)
        self.size, self.wait, self.timeouts = size, wait, timeouts
        self._free: queue.LifoQueue[Connection] = queue.LifoQueue()
        self._open = 0
        self._lock = threading.Lock()
        self._closed = False

    @property
    def target(self) -> str:
        return self.dsn.target

    def migrate(self) -> list[str]:
        """Apply pending schema migrations (once, at server start)."""
        with self.connection() as conn:
            return migrate(conn)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        conn = self._take()
        try:
            yield conn
        finally:
            if self._closed:
                conn.close()
            else:
                self._free.put(conn)

    def _take(self) -> Connection:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._open < self.size:
                self._open += 1
                return Connection(self.dsn, timeouts=self.timeouts)
        try:
            return self._free.get(timeout=self.wait)
        except queue.Empty:
            raise BackendError(f"gateway {self.target}: all {self.size} connections busy for {self.wait:g} s") from None

    @property
    def max_packet(self) -> int:
        """The server's max_allowed_packet (as the most recently opened connection read it)."""
        with self.connection() as conn:
            conn.raw()
            return conn.max_packet

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._free.get_nowait().close()
            except queue.Empty:
                return
