"""A workspace: one directory holding the log, its configuration and every projection.

Layout (``evlog init`` creates it; everything but ``log/`` and ``evlog.json`` can be
deleted and rebuilt with ``evlog replay``)::

    <home>/evlog.json         configuration (segment size, durability, budgets)
    <home>/log/               the event log: the only truth (see eventlog.log)
    <home>/state/             disposable checkpoints of projections and processors
    <home>/sessions/          session files (projection)
    <home>/memory/            history.jsonl and the global MEMORY.md (projections)
    <home>/diary/             daily diaries (projection)

The home is ``--home``, else ``$EVLOG_HOME``, else ``~/.evlog``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import msgspec

from eventlog.errors import ConfigError, WorkspaceNotFound
from eventlog.fsio import OS_FS, FileSystem
from eventlog.log import DEFAULT_GROUP_COMMIT_INTERVAL, DEFAULT_SEGMENT_BYTES, DURABILITY_POLICIES, Log

CONFIG_FILE = "evlog.json"
LOG_DIR = "log"
STATE_DIR = "state"


class Config(msgspec.Struct, kw_only=True, omit_defaults=False):
    """Workspace settings, stored in ``evlog.json``. Unknown keys are kept out; missing ones default."""

    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    durability: str = "fsync"
    group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL

    def validate(self) -> Config:
        """Raise ConfigError for values the log cannot work with; return self."""
        if self.segment_bytes < 1024:
            raise ConfigError(f"segment_bytes must be at least 1024 (got {self.segment_bytes})")
        if self.durability not in DURABILITY_POLICIES:
            raise ConfigError(f"durability must be one of {', '.join(DURABILITY_POLICIES)} (got {self.durability!r})")
        if not 0 < self.group_commit_interval <= 10:
            raise ConfigError(f"group_commit_interval must be in (0, 10] seconds (got {self.group_commit_interval})")
        return self


def default_home() -> str:
    """``$EVLOG_HOME`` if set, else ``~/.evlog``."""
    return os.environ.get("EVLOG_HOME") or os.path.join(os.path.expanduser("~"), ".evlog")


def load_config(home: str) -> Config:
    """Read ``evlog.json`` of an initialised workspace."""
    path = os.path.join(home, CONFIG_FILE)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise WorkspaceNotFound(f"{home} is not an evlog workspace (no {CONFIG_FILE}); run 'evlog init' first") from None
    try:
        return msgspec.json.decode(data, type=Config).validate()
    except msgspec.ValidationError as e:
        raise ConfigError(f"{path}: {e}") from e
    except msgspec.DecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e}") from e


def init_workspace(home: str, **settings: Any) -> tuple[Config, list[str]]:
    """Create the workspace at ``home`` or update the given settings; idempotent.

    Returns the configuration and a list of what changed (empty if nothing did).
    Settings left as None keep their current (or default) value.
    """
    settings = {k: v for k, v in settings.items() if v is not None}
    exists = os.path.exists(os.path.join(home, CONFIG_FILE))
    old = load_config(home) if exists else Config()
    new = msgspec.structs.replace(old, **settings).validate()  # validate before creating anything
    changes = [f"{k}: {getattr(old, k)} -> {getattr(new, k)}" for k in new.__struct_fields__ if getattr(old, k) != getattr(new, k)]
    if not exists:
        changes.insert(0, f"created workspace {home}")
    for sub in (LOG_DIR, STATE_DIR):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    if changes:
        OS_FS.atomic_write(os.path.join(home, CONFIG_FILE), msgspec.json.format(msgspec.json.encode(new), indent=2) + b"\n")
    if not os.listdir(os.path.join(home, LOG_DIR)):
        Log.open(os.path.join(home, LOG_DIR), writable=True, create=True, segment_bytes=new.segment_bytes).close()
    return new, changes


class Workspace:
    """An open workspace: its config and its log (read-only unless ``writable``)."""

    def __init__(self, home: str, config: Config, log: Log) -> None:
        self.home = home
        self.config = config
        self.log = log

    @classmethod
    def open(
        cls,
        home: str | None = None,
        *,
        writable: bool = False,
        lock_timeout: float = 0.0,
        repair: bool = False,
        fs: FileSystem = OS_FS,
        clock: Callable[[], float] = time.time,
    ) -> Workspace:
        """Open the workspace at ``home`` (default: ``default_home()``)."""
        home = home or default_home()
        config = load_config(home)
        log = Log.open(
            os.path.join(home, LOG_DIR),
            writable=writable,
            durability=config.durability,  # type: ignore[arg-type]
            segment_bytes=config.segment_bytes,
            group_commit_interval=config.group_commit_interval,
            lock_timeout=lock_timeout,
            repair=repair,
            fs=fs,
            clock=clock,
        )
        return cls(home, config, log)

    def path(self, *parts: str) -> str:
        """A path inside the workspace."""
        return os.path.join(self.home, *parts)

    def close(self) -> None:
        """Close the log (releasing the writer lock if held)."""
        self.log.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
