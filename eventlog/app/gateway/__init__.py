"""The gateway: a MySQL/MariaDB copy of the sessions for several devices, a web view or a team.

The local log stays the truth; the gateway is a cache that devices sync with
(``eventlog.app.gateway.sync``) and that a web app may read and write through the same
``SessionStore`` interface. Modules: ``connection`` (DSN, transactions, reconnects,
timeouts, errors without credentials), ``schema`` (numbered migrations: tables, indexes,
triggers), ``users`` (user rows, scrypt password hashes), ``rows`` (versions, the
last-write-wins rule, guarded upserts), ``store`` (``MySQLSessionStore``), ``ops`` (what
the gateway does for one user: write a push batch, read changes; refuses rows too big for
the server), ``screen`` (the one screen of every path: rows
the database or the log would refuse, the server's limits, versions from peers clamped), ``sync`` (push, pull, status
over a ``Remote``), ``auth`` (accounts, logins with rate limits, web sessions and device
tokens), ``pool`` (connections for servers), ``wire`` / ``http_api`` / ``http_client``
(the HTTP sync API: messages, server routes, the device's ``HttpRemote``) and
``credentials`` (the device's token file). PyMySQL (pure Python) is the driver; it is
imported only when a connection is opened. ``memory_store`` is the same gateway in memory
(a session store and a sync remote, same rules, no server): for tests and examples.

Trust: with direct ``--dsn`` sync whoever holds the database credentials may act as any
user (``--user`` is not authenticated): one trusted user. ``evlog web --gateway`` holds the
credentials alone and serves users who sign in (web) or hold a per-user token (HTTP sync);
it takes the user from the login or token, never from the request.
"""

from __future__ import annotations

from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.store import MySQLSessionStore

__all__ = ["DSN", "Connection", "MySQLSessionStore"]
