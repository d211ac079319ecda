"""Login rate limits: an attempt takes its slot atomically *before* its password is checked.

A login attempt first counts itself in two buckets, each one atomic increment that every
server process shares (a row of ``gateway_login_attempts`` in MySQL, ``MemoryAttempts``
in the in-memory gateway):

* **per source and account**: (client address, e-mail), at most ``LoginPolicy.per_email``
  attempts within ``window`` seconds;
* **per source**: the client address alone, at most ``per_client`` (guessing across many
  accounts from one address). A caller that names no address (a library call) has no
  source bucket, and its (source, account) bucket is the account's for every such caller.

An attempt whose count passes a limit is refused (``TooManyAttempts``) without a password
check, right password or not, until that bucket's window (which starts at its first
attempt) ends. Because the count is taken before the check, N concurrent guesses take N
slots: no more than the limit of them ever reach scrypt, in one process or many. There is
deliberately no bucket for the account alone: someone who only knows an e-mail can use up
the slots of *their* address, never the owner's, who still logs in from anywhere else. A
successful login gives its slots back (it forgets its (source, account) bucket and takes
its one attempt off the source's), so an owner's own logins never lock them out.

Buckets are named by a SHA-256 of what they count (``bucket_ids``): the table holds no
e-mail address or client address in clear.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class LoginPolicy:
    """Attempts tolerated within ``window`` seconds: per (client address, e-mail) and per client address."""

    per_email: int = 10
    per_client: int = 50
    window: int = 900


DEFAULT_POLICY = LoginPolicy()


class AttemptCounter(Protocol):
    """Where attempt counts live; each method is atomic on its own."""

    def bump(self, bucket: bytes, now_ms: int, window_ms: int) -> tuple[int, int]:
        """Count one attempt; (attempts in the bucket's current window including this one, window start in ms).

        A window that started ``window_ms`` or longer ago is over: the count starts again at 1.
        """

    def forget(self, bucket: bytes) -> None:
        """Drop a bucket's count."""

    def take_back(self, bucket: bytes) -> None:
        """Take one attempt off a bucket's count (never below zero)."""


def bucket_ids(email_key: bytes, client: str) -> tuple[bytes, bytes]:
    """(the (source, account) bucket, the source bucket) of an attempt: SHA-256 ids."""
    source = client.encode("utf-8", "surrogatepass")
    pair = hashlib.sha256(b"account\0" + source + b"\0" + email_key).digest()
    return pair, hashlib.sha256(b"source\0" + source).digest()


def take_slots(counter: AttemptCounter, policy: LoginPolicy, email_key: bytes, client: str, now_ms: int) -> int:
    """Count this attempt in its buckets; 0 if it may check its password, else seconds until it may retry."""
    window_ms = policy.window * 1000
    pair, source = bucket_ids(email_key, client)
    wait_ms = 0
    buckets = [(pair, policy.per_email), (source, policy.per_client)] if client else [(pair, policy.per_email)]
    for bucket, limit in buckets:
        n, started_ms = counter.bump(bucket, now_ms, window_ms)
        if n > limit:
            wait_ms = max(wait_ms, started_ms + window_ms - now_ms)
    return 0 if wait_ms <= 0 else max(1, -(-wait_ms // 1000))


def give_back(counter: AttemptCounter, email_key: bytes, client: str) -> None:
    """After a successful login: forget its (source, account) bucket and take its attempt off the source's."""
    pair, source = bucket_ids(email_key, client)
    counter.forget(pair)
    if client:
        counter.take_back(source)


class SQLAttempts:
    """``AttemptCounter`` over ``gateway_login_attempts`` (call inside one transaction, with its cursor)."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def bump(self, bucket: bytes, now_ms: int, window_ms: int) -> tuple[int, int]:
        from eventlog.app.gateway.rows import ms_of_dt, sql_of_ms

        now, over = sql_of_ms(now_ms), sql_of_ms(now_ms - window_ms)
        # One statement: the row lock it takes makes concurrent bumps wait for each other, so
        # each sees the count the previous one left. ``n`` is assigned before ``started_at``
        # and so still compares the old window start.
        self.cur.execute("INSERT INTO gateway_login_attempts (bucket, started_at, n) VALUES (%s, %s, 1) "
                         "ON DUPLICATE KEY UPDATE n = IF(started_at <= %s, 1, n + 1), "
                         "started_at = IF(started_at <= %s, %s, started_at)", (bucket, now, over, over, now))
        self.cur.execute("SELECT n, started_at FROM gateway_login_attempts WHERE bucket = %s", (bucket,))
        n, started = self.cur.fetchone()
        return int(n), ms_of_dt(started)

    def forget(self, bucket: bytes) -> None:
        self.cur.execute("DELETE FROM gateway_login_attempts WHERE bucket = %s", (bucket,))

    def take_back(self, bucket: bytes) -> None:
        self.cur.execute("UPDATE gateway_login_attempts SET n = n - 1 WHERE bucket = %s AND n > 0", (bucket,))

    def drop_expired(self, now_ms: int, window_ms: int) -> None:
        """Delete (some of) the buckets whose window is over: housekeeping, at most 1000 rows a call."""
        from eventlog.app.gateway.rows import sql_of_ms

        self.cur.execute("DELETE FROM gateway_login_attempts WHERE started_at <= %s LIMIT 1000",
                         (sql_of_ms(now_ms - window_ms),))


class MemoryAttempts:
    """``AttemptCounter`` in memory (the in-memory gateway's), thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[bytes, tuple[int, int]] = {}  # bucket -> (count, window start ms)

    def bump(self, bucket: bytes, now_ms: int, window_ms: int) -> tuple[int, int]:
        with self._lock:
            n, started = self._buckets.get(bucket, (0, now_ms))
            if started <= now_ms - window_ms:
                n, started = 0, now_ms
            self._buckets[bucket] = (n + 1, started)
            return n + 1, started

    def forget(self, bucket: bytes) -> None:
        with self._lock:
            self._buckets.pop(bucket, None)

    def take_back(self, bucket: bytes) -> None:
        with self._lock:
            if bucket in self._buckets:
                n, started = self._buckets[bucket]
                self._buckets[bucket] = (max(0, n - 1), started)
