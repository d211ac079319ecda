"""Connections to the gateway database: DSN parsing, transactions, reconnects, error translation.

A DSN is ``mysql://user:password@host:port/database`` (user and password percent-encoded;
``mysql+pymysql://`` is accepted too). When none is given, ``EVLOG_MYSQL_DSN`` is read.
The password lives only in the ``DSN`` object (never in its ``repr``) and in the driver's
connect call: ``DSN.target`` (``host:port/database``) is what events, reports and errors
name.

``Connection.transaction(fn)`` runs ``fn(cursor)`` between BEGIN and COMMIT (ROLLBACK on
any error). If the connection turns out to be dead (server restarted, connection killed,
network dropped) or the server chose this transaction as a deadlock victim, it reconnects
and runs ``fn`` once more. That is safe because a failed transaction was rolled back by the
server, and because every write evlog makes is keyed and guarded by last-write-wins: running
a batch twice (even one whose COMMIT did reach the server before the connection died)
changes nothing the first run did not. Every driver exception leaves as ``BackendError``
(``from e``) whose message names the target, the server's error code and text, and never
the password.

**Timeouts** (``Timeouts``): connecting gives up after ``connect`` seconds (10), and every
read from or write to the server after ``read`` / ``write`` seconds (30 each). The read
timeout also bounds the handshake, so a server that accepts the connection and never
answers fails the call after at most connect + read seconds instead of hanging; a timed
out transaction is rolled back by the server and retried once like any dropped
connection. ``EVLOG_MYSQL_CONNECT_TIMEOUT`` and ``EVLOG_MYSQL_TIMEOUT`` change the defaults
(``evlog sync --connect-timeout/--timeout`` per command).

``max_allowed_packet`` (``Connection.max_packet``) is read once per connection: the
biggest statement the server takes. Rows that cannot fit in one are refused before they
are sent (``eventlog.app.gateway.ops``), never retried forever.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from eventlog.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from eventlog.app.gateway.screen import Limits

T = TypeVar("T")

ENV_DSN = "EVLOG_MYSQL_DSN"
ENV_CONNECT_TIMEOUT = "EVLOG_MYSQL_CONNECT_TIMEOUT"
ENV_TIMEOUT = "EVLOG_MYSQL_TIMEOUT"
DEFAULT_PORT = 3306
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_PACKET = 16 * 1024 * 1024  # the server default of MariaDB 10.4+ and MySQL 8

#: Client and server error codes meaning "this connection is gone": reconnect and retry.
DROPPED = frozenset({
    2003,  # can't connect (server restarting)
    2006,  # server has gone away
    2013,  # lost connection during query
    2055,  # lost connection at '...'
    1927,  # ER_CONNECTION_KILLED (MariaDB)
    1053,  # ER_SERVER_SHUTDOWN
    4031,  # the client was disconnected by the server because of inactivity (MySQL)
})
#: Errors after which the server rolled the transaction back and a retry may succeed.
TRANSIENT = frozenset({1213, 1205})  # deadlock victim, lock wait timeout
ISOLATION_LEVELS = frozenset({"", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})

_SESSION_SETUP = (
    "SET time_zone = '+00:00'",
    "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,"
    "NO_ZERO_DATE,NO_ZERO_IN_DATE'",
)


@dataclass(frozen=True)
class DSN:
    """Where the gateway database is, and how to log in (the password never shows in ``repr``)."""

    host: str
    port: int
    user: str
    database: str
    password: str = field(default="", repr=False)

    @property
    def target(self) -> str:
        """``host:port/database``: how events, reports and errors name the gateway (no credentials)."""
        return f"{self.host}:{self.port}/{self.database}"

    @classmethod
    def parse(cls, url: str | None = None) -> DSN:
        """A DSN from ``url``, else from ``$EVLOG_MYSQL_DSN``; ``ConfigError`` if absent or malformed."""
        url = url or os.environ.get(ENV_DSN, "")
        if not url:
            raise ConfigError(f"no gateway database given: pass --dsn mysql://user:password@host:port/db or set {ENV_DSN}")
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port or DEFAULT_PORT
        except ValueError:
            raise ConfigError("the gateway DSN is not a valid mysql:// URL") from None  # the URL may hold a password
        if parts.scheme not in ("mysql", "mysql+pymysql", "mariadb"):
            raise ConfigError(f"the gateway DSN must start with mysql:// (got {parts.scheme or 'no scheme'}://)")
        database = urllib.parse.unquote(parts.path.lstrip("/"))
        if not parts.hostname or not database or "/" in database:
            raise ConfigError("the gateway DSN needs a host and a database: mysql://user:password@host:port/db")
        return cls(host=parts.hostname, port=port, user=urllib.parse.unquote(parts.username or ""),
                   database=database, password=urllib.parse.unquote(parts.password or ""))


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"${name} must be a number of seconds (got {raw!r})") from None
    if not 0 < value <= 86400:
        raise ConfigError(f"${name} must be in (0, 86400] seconds (got {raw!r})")
    return value


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait for a connection, and for each read and write on it (see the module docstring)."""

    connect: float = DEFAULT_CONNECT_TIMEOUT
    read: float = DEFAULT_TIMEOUT
    write: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        for name in ("connect", "read", "write"):
            value = getattr(self, name)
            if not 0 < value <= 86400:
                raise ConfigError(f"the {name} timeout must be in (0, 86400] seconds (got {value})")

    @classmethod
    def default(cls, connect: float | None = None, read: float | None = None) -> Timeouts:
        """From the arguments, else ``$EVLOG_MYSQL_CONNECT_TIMEOUT`` / ``$EVLOG_MYSQL_TIMEOUT``, else 10 s / 30 s."""
        c = connect if connect is not None else _env_seconds(ENV_CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT)
        r = read if read is not None else _env_seconds(ENV_TIMEOUT, DEFAULT_TIMEOUT)
        return cls(connect=c, read=r, write=r)


def _ms(dt: Any) -> int:
    from eventlog.app.gateway.rows import ms_of_dt

    return ms_of_dt(dt)


def _code(e: BaseException) -> int:
    args: tuple[Any, ...] = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


def backend_error(dsn: DSN, e: BaseException, doing: str) -> BackendError:
    """A ``BackendError`` for driver exception ``e``: target, code and server text, no password."""
    args: tuple[Any, ...] = getattr(e, "args", ())
    text = str(args[1]) if len(args) > 1 else (str(args[0]) if args and not isinstance(args[0], int) else type(e).__name__)
    if dsn.password:
        text = text.replace(dsn.password, "***")
    code = _code(e)
    return BackendError(f"gateway {dsn.target}: {doing} failed: {f'({code}) ' if code else ''}{text}")


class Connection:
    """One PyMySQL connection (opened lazily) with transactions that survive a dropped connection.

    Thread-safe: one transaction at a time (a lock serialises them).
    """

    def __init__(self, dsn: DSN, *, timeouts: Timeouts | None = None) -> None:
        self.dsn = dsn
        self.timeouts = timeouts or Timeouts.default()
        self._conn: Any = None
        self._lock = threading.RLock()
        self.reconnects = 0  # how many times a dead connection was replaced (tests and reports read it)
        self.max_packet = DEFAULT_MAX_PACKET  # the server's max_allowed_packet, read on connecting
        from eventlog.app.gateway import screen  # (screen needs schema, which needs this module)

        self._screen = screen
        self.limits: Limits = screen.STRICTEST  # what the server's flavour takes (``screen.Limits``), read on connecting
        self.clock_offset_ms = 0  # the server's clock minus ours, read on connecting

    def now_ms(self) -> int:
        """The server's clock (ms since the epoch), as of the offset read on connecting."""
        return int(time.time() * 1000) + self.clock_offset_ms

    def _connect(self) -> Any:
        import pymysql

        d, t = self.dsn, self.timeouts
        try:
            conn = pymysql.connect(host=d.host, port=d.port, user=d.user, password=d.password, database=d.database,
                                   charset="utf8mb4", autocommit=False, connect_timeout=t.connect,
                                   read_timeout=t.read, write_timeout=t.write)
            with conn.cursor() as cur:
                for stmt in _SESSION_SETUP:
                    cur.execute(stmt)
                cur.execute("SELECT @@max_allowed_packet, VERSION(), UTC_TIMESTAMP(3)")
                packet, version, server_now = cur.fetchone()
                self.max_packet = int(packet)
                self.limits = self._screen.limits_for(str(version))
                self.clock_offset_ms = _ms(server_now) - int(time.time() * 1000)
            return conn
        except pymysql.MySQLError as e:
            raise backend_error(d, e, "connecting") from e
        except OSError as e:  # a socket timeout during the handshake surfaces as a plain OSError in some paths
            raise BackendError(f"gateway {d.target}: connecting failed: {e.__class__.__name__}: {e}") from e

    def raw(self) -> Any:
        """The live driver connection (opened if needed)."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    def thread_id(self) -> int:
        """The server's id of this connection (what ``KILL`` takes)."""
        return int(self.raw().thread_id())

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a dead socket may fail to close; it is gone either way
                pass

    def transaction(self, fn: Callable[[Any], T], *, doing: str = "a transaction", retry: bool = True,
                    isolation: str = "") -> T:
        """``fn(cursor)`` in one transaction; reconnects and retries once if the connection dropped.

        ``isolation`` ("READ COMMITTED", ...) sets the level of this transaction only (default: the server's).
        """
        import pymysql

        if isolation not in ISOLATION_LEVELS:
            raise ValueError(f"isolation level {isolation!r} is not one of {sorted(ISOLATION_LEVELS)}")
        with self._lock:
            for attempt in (1, 2):
                try:
                    conn = self.raw()
                    if isolation:
                        with conn.cursor() as cur:
                            cur.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")  # the next one only
                    conn.begin()
                    with conn.cursor() as cur:
                        result = fn(cur)
                    conn.commit()
                    return result
                except pymysql.MySQLError as e:
                    code = _code(e)
                    dropped = code in DROPPED or isinstance(e, pymysql.err.InterfaceError)
                    if dropped:
                        self._drop()
                    else:
                        self._rollback()
                    if retry and attempt == 1 and (dropped or code in TRANSIENT):
                        self.reconnects += dropped
                        continue
                    raise backend_error(self.dsn, e, doing) from e
                except BaseException:
                    self._rollback()
                    raise
            raise AssertionError("unreachable")  # pragma: no cover

    def _rollback(self) -> None:
        if self._conn is None:
            return
        try:
            self._conn.rollback()
        except Exception:  # noqa: BLE001 - the connection is unusable: drop it, the server rolls back
            self._drop()

    def close(self) -> None:
        """Close the connection; idempotent (a later transaction reconnects)."""
        with self._lock:
            self._drop()
