"""Who may act as a gateway user: passwords, login rate limits, web sessions and device sync tokens.

**Accounts** are managed by whoever runs the gateway (``evlog gateway user add|passwd|remove|list``):
``add_user`` creates one with a password (scrypt, ``users.hash_password``), ``set_user_password``
changes it and signs the user out everywhere (every web session and sync token is revoked),
``remove_user`` deletes the user and, by cascade, their sessions, messages and tokens.

**Logging in** (``login``) checks an e-mail and password and hands out a random token of 256
bits: a web session (``kind="web"``, kept in an HttpOnly cookie, expires after ``WEB_TTL``)
or a device's sync token (``kind="sync"``, kept in the workspace's credentials file, until
revoked). Only the token's SHA-256 is stored (``gateway_tokens``), so reading the table
gives nobody a working token. A token names exactly one user; the server takes the user
from the token, never from the request.

* **No user enumeration.** An unknown e-mail, a user without a password and a wrong
  password fail the same way (``LoginFailed``, one message), after the same work: an unknown
  user's password is checked against a dummy scrypt hash.
* **Rate limits, shared by every server process** (``login_limit``; they live in the
  database, ``gateway_login_attempts``): every attempt takes a slot, atomically and before
  its password is checked, per (client address, e-mail) (``LoginPolicy.per_email``) and per
  client address (``per_client``) within ``window`` seconds; past either, the attempt
  (right or wrong, known user or not) gets ``TooManyAttempts`` without a check until that
  window ends. So N concurrent guesses never get more than the limit of checks, and a
  guesser from one address cannot lock the owner out from another. A successful login
  gives its slots back.
* **Bounded cost.** At most ``SCRYPT_SLOTS`` password checks run at once in a process
  (scrypt takes 16 MiB each); the others wait their turn.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from eventlog.app.gateway.connection import Connection
from eventlog.app.gateway.login_limit import DEFAULT_POLICY, LoginPolicy, SQLAttempts, give_back, take_slots
from eventlog.app.gateway.rows import ms_of_dt, sql_of_ms
from eventlog.app.gateway.users import User, hash_password, normalize_email, verify_password
from eventlog.errors import ConfigError, EvlogError, NotFound

WEB_TTL = 12 * 3600  # seconds a web login lasts
TOUCH_EVERY_MS = 60_000  # last_used_at is written at most this often per token
MIN_PASSWORD_CHARS = 8
SCRYPT_SLOTS = 4
KINDS = ("web", "sync")

_scrypt_turns = threading.BoundedSemaphore(SCRYPT_SLOTS)
_dummy: list[str] = []


class AuthError(EvlogError):
    """Logging in or using a token failed (the message never says whether the user exists)."""


class LoginFailed(AuthError):
    """Wrong e-mail or password (deliberately one message for both)."""

    def __init__(self) -> None:
        super().__init__("wrong e-mail or password")


class TooManyAttempts(AuthError):
    """Too many login attempts for this e-mail from this client, or from this client, within the window."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed logins; try again in {max(1, -(-retry_after // 60))} minute(s)")
        self.retry_after = retry_after


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe text)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> bytes:
    """What the table stores for a token: its SHA-256."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def check_password_strength(password: str) -> None:
    """``ConfigError`` unless the password is usable (at least MIN_PASSWORD_CHARS characters)."""
    if len(password) < MIN_PASSWORD_CHARS:
        raise ConfigError(f"a password needs at least {MIN_PASSWORD_CHARS} characters")


def verify_or_dummy(password: str, stored: str) -> bool:
    """Check ``password`` against ``stored``; with no hash, check a dummy one (same work) and say False."""
    if not stored:
        if not _dummy:
            _dummy.append(hash_password(secrets.token_hex(16)))
        stored = _dummy[0]
        with _scrypt_turns:
            verify_password(password, stored)
        return False
    with _scrypt_turns:
        return verify_password(password, stored)


# --------------------------------------------------------------------------- accounts


def add_user(conn: Connection, email: str, password: str) -> User:
    """Create a user with this password; ``ConfigError`` if one with a password exists already.

    A user that exists without a password (created by direct ``--dsn`` sync) gets it.
    """
    check_password_strength(password)
    email = normalize_email(email)
    hashed = hash_password(password)

    def run(cur: Any) -> User:
        cur.execute("SELECT id, password_hash FROM gateway_users WHERE email = %s FOR UPDATE", (email,))
        row = cur.fetchone()
        if row is not None and row[1]:
            raise ConfigError(f"user {email} exists already (use 'evlog gateway user passwd' to change the password)")
        if row is None:
            cur.execute("INSERT INTO gateway_users (email, password_hash, created_at) VALUES (%s, %s, UTC_TIMESTAMP(3))",
                        (email, hashed))
        else:
            cur.execute("UPDATE gateway_users SET password_hash = %s WHERE id = %s", (hashed, row[0]))
        return _user_by_email(cur, email)

    return conn.transaction(run, doing="adding a user", retry=False)


def set_user_password(conn: Connection, email: str, password: str) -> User:
    """Change a user's password and revoke every web session and sync token they hold."""
    check_password_strength(password)
    email = normalize_email(email)
    hashed = hash_password(password)

    def run(cur: Any) -> User:
        user = _user_by_email(cur, email)
        cur.execute("UPDATE gateway_users SET password_hash = %s WHERE id = %s", (hashed, user.id))
        cur.execute("DELETE FROM gateway_tokens WHERE user_id = %s", (user.id,))
        return user

    return conn.transaction(run, doing="changing a password")


def remove_user(conn: Connection, email: str) -> User:
    """Delete a user with all their sessions, messages and tokens."""
    email = normalize_email(email)

    def run(cur: Any) -> User:
        user = _user_by_email(cur, email)
        cur.execute("DELETE FROM gateway_users WHERE id = %s", (user.id,))
        return user

    return conn.transaction(run, doing="removing a user")


@dataclass
class UserRow:
    """A user as ``evlog gateway user list`` shows it (never the hash)."""

    email: str
    created_at: str
    password_set: bool
    sessions: int
    web_sessions: int
    sync_tokens: int


def list_users(conn: Connection) -> list[UserRow]:
    """Every user, by e-mail."""

    def run(cur: Any) -> list[UserRow]:
        cur.execute("SELECT u.email, u.created_at, u.password_hash <> '', "
                    "(SELECT COUNT(*) FROM gateway_sessions s WHERE s.user_id = u.id AND s.deleted_at IS NULL), "
                    "(SELECT COUNT(*) FROM gateway_tokens t WHERE t.user_id = u.id AND t.kind = 'web' "
                    " AND (t.expires_at IS NULL OR t.expires_at > UTC_TIMESTAMP(3))), "
                    "(SELECT COUNT(*) FROM gateway_tokens t WHERE t.user_id = u.id AND t.kind = 'sync') "
                    "FROM gateway_users u ORDER BY u.email")
        return [UserRow(email, created.strftime("%Y-%m-%dT%H:%M:%SZ"), bool(pw), int(s), int(w), int(t))
                for email, created, pw, s, w, t in cur.fetchall()]

    return conn.transaction(run, doing="listing users")


def _user_by_email(cur: Any, email: str) -> User:
    cur.execute("SELECT id, email, created_at FROM gateway_users WHERE email = %s", (email,))
    row = cur.fetchone()
    if row is None:
        raise NotFound(f"no gateway user {email}")
    return User(int(row[0]), row[1], ms_of_dt(row[2]))


# --------------------------------------------------------------------------- logging in


def login(conn: Connection, email: str, password: str, *, kind: str, client: str = "", label: str = "",
          policy: LoginPolicy = DEFAULT_POLICY, ttl: int | None = None, clock: Any = time.time) -> tuple[User, str]:
    """Check the password and hand out a token of ``kind`` ("web" or "sync"); (user, token).

    Raises ``TooManyAttempts`` past the rate limits and ``LoginFailed`` for anything else that
    is wrong (see the module docstring). ``ttl``: seconds until the token expires (None:
    ``WEB_TTL`` for web sessions, never for sync tokens).
    """
    if kind not in KINDS:
        raise ConfigError(f"token kind must be one of {', '.join(KINDS)}")
    try:
        email = normalize_email(email)
    except ConfigError:
        email = ""
    email_key = email_key_of(email)
    client = client[:64]
    now_ms = int(clock() * 1000)

    def take_and_find(cur: Any) -> tuple[int, User | None, str]:
        wait = take_slots(SQLAttempts(cur), policy, email_key, client, now_ms)
        if wait or not email:
            return wait, None, ""
        cur.execute("SELECT id, email, created_at, password_hash FROM gateway_users WHERE email = %s", (email,))
        row = cur.fetchone()
        if row is None:
            return 0, None, ""
        return 0, User(int(row[0]), row[1], ms_of_dt(row[2])), row[3]

    # The slot is committed before the check (raising inside the transaction would roll it back).
    wait, user, stored = conn.transaction(take_and_find, doing="checking a login")
    if wait:
        raise TooManyAttempts(wait)
    if not (verify_or_dummy(password, stored) and user is not None):
        conn.transaction(lambda cur: SQLAttempts(cur).drop_expired(now_ms, policy.window * 1000),
                         doing="recording a failed login")
        raise LoginFailed()
    assert user is not None
    token = new_token()
    life = ttl if ttl is not None else (WEB_TTL if kind == "web" else None)

    def grant(cur: Any) -> None:
        give_back(SQLAttempts(cur), email_key, client)
        cur.execute("INSERT INTO gateway_tokens (token_hash, user_id, kind, label, created_at, expires_at, last_used_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (token_hash(token), user.id, kind, label[:255], sql_of_ms(now_ms),
                     sql_of_ms(now_ms + life * 1000) if life is not None else None, sql_of_ms(now_ms)))

    conn.transaction(grant, doing="starting a session")
    return user, token


def email_key_of(email: str) -> bytes:
    """What the rate limit counts an e-mail (normalised, or "" if unusable) by: its SHA-256."""
    return hashlib.sha256(email.encode("utf-8", "surrogatepass")).digest()


def lookup(conn: Connection, token: str, kind: str, *, clock: Any = time.time) -> User | None:
    """The user holding this live token of ``kind``, or None (unknown, revoked, expired or another kind)."""
    if not token or len(token) > 512:
        return None
    h = token_hash(token)
    now_ms = int(clock() * 1000)

    def run(cur: Any) -> User | None:
        cur.execute("SELECT u.id, u.email, u.created_at, t.kind, t.expires_at, t.last_used_at FROM gateway_tokens t "
                    "JOIN gateway_users u ON u.id = t.user_id WHERE t.token_hash = %s", (h,))
        row = cur.fetchone()
        if row is None:
            return None
        uid, email, created, got_kind, expires, used = row
        if not hmac.compare_digest(got_kind, kind) or (expires is not None and ms_of_dt(expires) <= now_ms):
            return None
        if used is None or now_ms - ms_of_dt(used) >= TOUCH_EVERY_MS:
            cur.execute("UPDATE gateway_tokens SET last_used_at = %s WHERE token_hash = %s", (sql_of_ms(now_ms), h))
        return User(int(uid), email, ms_of_dt(created))

    return conn.transaction(run, doing="checking a token")


def revoke(conn: Connection, token: str) -> bool:
    """Forget a token (logout); True if it existed."""
    h = token_hash(token)
    return bool(conn.transaction(lambda cur: cur.execute("DELETE FROM gateway_tokens WHERE token_hash = %s", (h,)),
                                 doing="revoking a token"))
