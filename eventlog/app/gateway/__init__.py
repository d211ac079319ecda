"""The gateway: a MySQL/MariaDB copy of the sessions for several devices, a web view or a team.

The local log stays the truth; the gateway is a cache that devices sync with
(``eventlog.app.gateway.sync``) and that a web app may read and write through the same
``SessionStore`` interface. Modules: ``connection`` (DSN, transactions, reconnects, errors
without credentials), ``schema`` (numbered migrations: tables, indexes, triggers),
``users`` (user rows, scrypt password hashes), ``rows`` (versions, the last-write-wins
rule, guarded upserts) and ``store`` (``MySQLSessionStore``). PyMySQL (pure Python) is the
driver; it is imported only when a connection is opened.
"""

from __future__ import annotations

from eventlog.app.gateway.connection import DSN, Connection
from eventlog.app.gateway.store import MySQLSessionStore

__all__ = ["DSN", "Connection", "MySQLSessionStore"]
