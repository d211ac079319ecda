"""Helpers for the tests that need a real MySQL/MariaDB server (``EVLOG_TEST_MYSQL_URL``).

``.ci/run`` sets the URL (``mysql://root@127.0.0.1:3306/evlog_ci``, a fresh database), so
these tests never skip in CI; elsewhere they skip with the reason below. Isolation comes
from fresh users: every test works under its own random e-mail addresses, so tests share
the database without seeing each other's rows.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

MYSQL_URL = os.environ.get("EVLOG_TEST_MYSQL_URL", "")

requires_mysql = pytest.mark.skipif(
    not MYSQL_URL,
    reason="EVLOG_TEST_MYSQL_URL is not set (e.g. mysql://root@127.0.0.1:3306/evlog_test on a server you may "
           "create tables in; .ci/run sets it)",
)


def fresh_email(label: str = "user") -> str:
    """A user e-mail no other test uses."""
    return f"{label}-{uuid.uuid4().hex[:12]}@example.test"


def admin_connection() -> Any:
    """A plain PyMySQL connection to the test database (autocommit), for checks behind the store's back."""
    import pymysql

    from eventlog.app.gateway.connection import DSN

    d = DSN.parse(MYSQL_URL)
    return pymysql.connect(host=d.host, port=d.port, user=d.user, password=d.password, database=d.database,
                           charset="utf8mb4", autocommit=True, init_command="SET time_zone = '+00:00'")


def query(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on a fresh admin connection; its rows."""
    conn = admin_connection()
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params or None)
            return list(cur.fetchall())
    finally:
        conn.close()


def kill(thread_id: int) -> None:
    """Kill a server connection by id (from another connection), as a crash or a network cut would."""
    query(f"KILL {int(thread_id)}")
