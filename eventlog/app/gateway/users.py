"""Gateway users: the owner of every session row, and their password hashes.

Every query the store and the sync make names one user id, so one user's rows are
invisible to and unchangeable by another. A user is found by e-mail (lower-cased, trimmed)
and created on first use. ``epoch`` (id and creation time) identifies this user row: a
sync position recorded against another epoch (the database was recreated) is not trusted.

Passwords (for a web login; syncing needs none) are hashed with scrypt from the standard
library, a memory-hard KDF: N = 2**14, r = 8, p = 1 (16 MiB of memory per hash), a 16-byte
random salt, a 32-byte key, stored as ``scrypt$n=16384,r=8,p=1$<salt>$<key>`` (base64). The
parameters travel with each hash, so raising them later keeps old hashes verifiable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass
from typing import Any

from eventlog.app.gateway.rows import ms_of_dt
from eventlog.errors import ConfigError, NotFound

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SCRYPT_DKLEN = 32
SALT_BYTES = 16
_MAXMEM = 64 * 1024 * 1024


def hash_password(password: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """A salted scrypt hash of ``password`` in the self-describing format above."""
    salt = os.urandom(SALT_BYTES)
    key = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=SCRYPT_DKLEN, maxmem=_MAXMEM)
    b64 = base64.b64encode
    return f"scrypt$n={n},r={r},p={p}${b64(salt).decode()}${b64(key).decode()}"


def verify_password(password: str, stored: str) -> bool:
    """True if ``password`` matches ``stored`` (constant-time compare); False for no or a malformed hash."""
    try:
        scheme, params, salt_b64, key_b64 = stored.split("$")
        cost = dict(kv.split("=") for kv in params.split(","))
        n, r, p = int(cost["n"]), int(cost["r"]), int(cost["p"])
        salt, key = base64.b64decode(salt_b64), base64.b64decode(key_b64)
    except (ValueError, KeyError):
        return False
    if scheme != "scrypt":
        return False
    got = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=len(key), maxmem=_MAXMEM)
    return hmac.compare_digest(got, key)


def normalize_email(email: str) -> str:
    """The stored form of an e-mail address; ``ConfigError`` if it cannot be one."""
    e = email.strip().lower()
    if not e or "@" not in e or len(e) > 255 or any(c.isspace() or ord(c) < 32 for c in e):
        raise ConfigError(f"not a usable user e-mail address: {email!r}")
    return e


@dataclass(frozen=True)
class User:
    """A gateway user row."""

    id: int
    email: str
    created_ms: int

    @property
    def epoch(self) -> str:
        """This user row's identity: positions recorded under another epoch are reset."""
        return f"{self.id}@{self.created_ms}"


def resolve_user(cur: Any, user: str | int, *, password: str | None = None, create: bool = True) -> User:
    """The user with this e-mail (created if needed, with ``password`` if given) or this id."""
    if isinstance(user, int):
        cur.execute("SELECT id, email, created_at FROM gateway_users WHERE id = %s", (user,))
        row = cur.fetchone()
        if row is None:
            raise NotFound(f"no gateway user with id {user}")
        return User(int(row[0]), row[1], ms_of_dt(row[2]))
    email = normalize_email(user)
    cur.execute("SELECT id, email, created_at FROM gateway_users WHERE email = %s", (email,))
    row = cur.fetchone()
    if row is None:
        if not create:
            raise NotFound(f"no gateway user {email}")
        cur.execute("INSERT INTO gateway_users (email, password_hash, created_at) VALUES (%s, %s, UTC_TIMESTAMP(3)) "
                    "ON DUPLICATE KEY UPDATE id = id", (email, hash_password(password) if password else ""))
        # A locking read: another process may have created the user since our first look, which
        # this transaction's snapshot does not show (REPEATABLE READ).
        cur.execute("SELECT id, email, created_at FROM gateway_users WHERE email = %s FOR UPDATE", (email,))
        row = cur.fetchone()
    return User(int(row[0]), row[1], ms_of_dt(row[2]))


def set_password(cur: Any, user_id: int, password: str) -> None:
    """Store a new scrypt hash of ``password`` for the user."""
    cur.execute("UPDATE gateway_users SET password_hash = %s WHERE id = %s", (hash_password(password), user_id))


def check_password(cur: Any, user_id: int, password: str) -> bool:
    """True if ``password`` is the user's password (False when none is set)."""
    cur.execute("SELECT password_hash FROM gateway_users WHERE id = %s", (user_id,))
    row = cur.fetchone()
    return bool(row and row[0]) and verify_password(password, row[0])
