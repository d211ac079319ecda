"""The workspace's sync tokens: ``<home>/state/sync-credentials.json``, readable by its owner only.

One entry per gateway URL: the user's e-mail and the token ``evlog sync login`` received. The
file is created with mode 0600 (written to a temporary file of that mode, then renamed), is
refused if anyone but its owner may read it, and is never printed; the token never enters
the log, a report or an error message. Deleting the file logs the workspace out (the server
keeps the token until it is revoked: ``evlog sync logout``, or the user's password changes).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile

from eventlog.errors import ConfigError

CREDENTIALS_FILE = os.path.join("state", "sync-credentials.json")


def credentials_path(home: str) -> str:
    return os.path.join(home, CREDENTIALS_FILE)


def _read(home: str) -> dict[str, dict[str, str]]:
    path = credentials_path(home)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(f"{path} may be read by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                              f"'chmod 600 {path}' or log in again")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read()
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        doc = json.loads(data)
        gateways = doc["gateways"]
        assert isinstance(gateways, dict)
        return {str(k): {"user": str(v["user"]), "token": str(v["token"])} for k, v in gateways.items()}
    except (ValueError, KeyError, TypeError, AssertionError):
        raise ConfigError(f"{path} is damaged; delete it and log in again") from None


def _write(home: str, gateways: dict[str, dict[str, str]]) -> None:
    path = credentials_path(home)
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    data = json.dumps({"version": 1, "gateways": gateways}, indent=1, sort_keys=True).encode()
    fd, tmp = tempfile.mkstemp(prefix=".sync-credentials.", dir=directory)  # mkstemp creates it with mode 0600
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_token(home: str, base_url: str, user: str, token: str) -> None:
    """Keep ``token`` (of ``user``) for the gateway at ``base_url``, replacing any earlier one."""
    gateways = _read(home)
    gateways[base_url] = {"user": user, "token": token}
    _write(home, gateways)


def load_token(home: str, base_url: str) -> tuple[str, str] | None:
    """(user, token) kept for ``base_url``, or None."""
    got = _read(home).get(base_url)
    return None if got is None else (got["user"], got["token"])


def forget_token(home: str, base_url: str) -> bool:
    """Drop the token kept for ``base_url``; True if there was one."""
    gateways = _read(home)
    if gateways.pop(base_url, None) is None:
        return False
    _write(home, gateways)
    return True


def logged_in(home: str) -> dict[str, str]:
    """Gateway URL -> user for every token this workspace keeps (never the tokens)."""
    return {url: v["user"] for url, v in _read(home).items()}
