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
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from eventlog.errors import ConfigError, EvlogError, WorkspaceNotFound
from eventlog.events import Event
from eventlog.fsio import OS_FS, FileSystem
from eventlog.log import DEFAULT_GROUP_COMMIT_INTERVAL, DEFAULT_SEGMENT_BYTES, DURABILITY_POLICIES, Log

if TYPE_CHECKING:
    from projections.projector import Projector

T = TypeVar("T")

CONFIG_FILE = "evlog.json"
DEFAULT_SCHEDULE = {"snapshot": 300.0, "digest": 900.0, "autocompact": 300.0, "dream": 86400.0, "archive": 86400.0}
LOG_DIR = "log"
STATE_DIR = "state"


class Config(msgspec.Struct, kw_only=True, omit_defaults=False):
    """Workspace settings, stored in ``evlog.json``. Unknown keys are kept out; missing ones default."""

    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    durability: str = "fsync"
    group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL
    projection_flush_interval: float = 1.0  # seconds session files etc. may trail the log
    diary_budget_bytes: int = 200_000  # a day's diary never exceeds this many bytes of UTF-8
    digest_batch_bytes: int = 50_000  # the digest reads at most this much diary per entry
    stale_after_days: float = 7.0  # the archive drops short-term entries unused this long
    dream_token_budget: int = 20_000  # tokens one Dream run may spend (prompt + answer, retry included)
    idle_minutes: float = 30.0  # AutoCompact leaves sessions active more recently alone
    schedule: dict[str, float] = msgspec.field(default_factory=lambda: dict(DEFAULT_SCHEDULE))  # seconds between daemon runs

    def validate(self) -> Config:
        """Raise ConfigError for values the log cannot work with; return self."""
        if self.segment_bytes < 1024:
            raise ConfigError(f"segment_bytes must be at least 1024 (got {self.segment_bytes})")
        if self.durability not in DURABILITY_POLICIES:
            raise ConfigError(f"durability must be one of {', '.join(DURABILITY_POLICIES)} (got {self.durability!r})")
        if not 0 < self.group_commit_interval <= 10:
            raise ConfigError(f"group_commit_interval must be in (0, 10] seconds (got {self.group_commit_interval})")
        if self.diary_budget_bytes < 1 or self.digest_batch_bytes < 1 or self.stale_after_days <= 0:
            raise ConfigError("diary_budget_bytes, digest_batch_bytes and stale_after_days must be positive")
        if not 0 < self.projection_flush_interval <= 3600:
            raise ConfigError(f"projection_flush_interval must be in (0, 3600] seconds (got {self.projection_flush_interval})")
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
    """An open workspace: its config, its log and (on first use) its projections.

    Opened ``writable``, it is the log's one writer: ``append`` writes events and brings
    the projections up to date in memory; their files are written by ``flush`` (called
    by a background thread every ``projection_flush_interval`` seconds, and on close).
    Opened read-only, projections are loaded from their checkpoint and caught up in
    memory; no file is written.
    """

    def __init__(self, home: str, config: Config, log: Log, fs: FileSystem) -> None:
        self.home = home
        self.config = config
        self.log = log
        self.fs = fs
        self.lock = threading.RLock()  # guards the projections (appends, catch-up, flush)
        self._projector: Projector | None = None
        self._flushed_seq = -1
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None

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
        return cls(home, config, log, fs)

    def path(self, *parts: str) -> str:
        """A path inside the workspace."""
        return os.path.join(self.home, *parts)

    # -- projections -----------------------------------------------------------------

    @property
    def projections(self) -> Projector:
        """The workspace's projections, caught up with the log."""
        with self.lock:
            if self._projector is None:
                from projections import default_projections
                from projections.projector import Projector

                live = self.log.writable
                proj = Projector(self.log, self.home, default_projections(self.home, self.fs, live=live), self.fs,
                                 checkpoint=True)
                if live:
                    proj.clean_temp_files()
                self._projector = proj
                if live and proj.outputs_missing():
                    self._recover_drift()  # a projection file was deleted: give it back (costs a replay)
                self._catch_up()
                if live:
                    self._flusher = threading.Thread(target=self._flush_loop, name="evlog-projections", daemon=True)
                    self._flusher.start()
            elif not (self.log.writable and self._projector.seq == self.log.last_seq):
                self._catch_up()  # a writer's own appends are folded by append(); readers follow the log
            return self._projector

    def _catch_up(self) -> None:
        from projections.base import ProjectionDrift

        try:
            self._projector.catch_up()  # type: ignore[union-attr]
        except ProjectionDrift:
            self._recover_drift()

    def rebuild_projections(self) -> Projector:
        """Throw every projection file and the checkpoint away and replay the log (writer only)."""
        with self.lock:
            proj = self.projections
            self._recover_drift()
            return proj

    def _recover_drift(self) -> None:
        if self.log.writable:
            proj = self._projector
            proj.rebuild()  # type: ignore[union-attr]
            self._flushed_seq = proj.seq  # type: ignore[union-attr]
        else:
            raise EvlogError("projection files changed while being read (a writer is rewriting them, or they "
                             "were edited by hand); retry, or run 'evlog replay' to rebuild them")

    def read_projection(self, fn: Callable[[], T]) -> T:
        """Run a read that may touch projection files; a drift found there is repaired (writer) or reported."""
        from projections.base import ProjectionDrift

        with self.lock:
            try:
                return fn()
            except ProjectionDrift:
                self._recover_drift()
                return fn()

    def append(self, events: Sequence[Event]) -> list[int]:
        """Append events as one atomic batch and bring the projections up to date."""
        with self.lock:
            before = self.log.last_seq
            seqs = self.log.append_batch(events) if len(events) != 1 else [self.log.append(events[0])]
            proj = self._projector
            if proj is None:
                return seqs
            new = [(ev, s) for ev, s in zip(events, seqs, strict=True) if s > before]
            if new and proj.seq == before:  # fold what was just written without reading it back
                ts, fingerprint = self.log.last_written()
                replace = msgspec.structs.replace
                proj.apply_appended([replace(ev, seq=s, ts=ts) for ev, s in new], fingerprint)
            elif new:
                self._catch_up()
            return seqs

    def flush(self) -> None:
        """Write every projection file that changed (and their checkpoint) now."""
        if not self.log.writable:
            return
        with self.lock:
            if self._projector is None:
                self.projections  # noqa: B018  (builds and catches up)
            self._catch_up()
            if self._projector.seq != self._flushed_seq:  # type: ignore[union-attr]
                self._projector.flush()  # type: ignore[union-attr]
                self._flushed_seq = self._projector.seq  # type: ignore[union-attr]

    def _flush_loop(self) -> None:
        while not self._stop.wait(self.config.projection_flush_interval):
            try:
                with self.lock:
                    if self.log.writable and self._projector is not None and self._projector.seq != self._flushed_seq:
                        self._projector.flush()
                        self._flushed_seq = self._projector.seq
            except Exception:  # noqa: BLE001 - a background flush must never kill the process
                pass  # the next flush (or close) retries; the log already holds everything

    def close(self) -> None:
        """Flush projections (if this is the writer) and close the log; idempotent."""
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join()
            self._flusher = None
        try:
            if self.log.writable:
                self.flush()  # projections always follow what this writer appended
        finally:
            self.log.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
