"""A workspace: one directory holding the log, its configuration and every projection.

Layout (``evlog init`` creates it; everything but ``log/`` and ``evlog.json`` can be
deleted and rebuilt with ``evlog replay``)::

    <home>/evlog.json         configuration (segment size, durability, budgets, projects)
    <home>/log/               the event log: the only truth (see eventlog.log)
    <home>/state/             disposable checkpoints and lock files
    <home>/sessions/          session files (projection)
    <home>/memory/            history.jsonl and the MEMORY.md files (projections)
    <home>/diary/             daily diaries (projection)

The home is ``--home``, else ``$EVLOG_HOME``, else ``~/.evlog``.

**Many processes, one workspace.** Any number of processes open the same workspace for
writing (the daemon, agents' session stores, ingest, the CLI, an MCP server); the log's
writers take turns on a short-held lock (``eventlog.writer``). Each process keeps the
projections in memory, folding its own appends at once and catching up with others'
by reading the log. Projection *files* are written by ``flush`` (a background thread,
every ``projection_flush_interval``, and on close) under a second short-held lock,
``state/projections.lock``: the flusher first adopts the newest checkpoint if another
process flushed since (its files are on disk), catches up with the log, writes what
changed and saves the checkpoint. So files always move forward, whoever writes them.
Read-only workspaces load the checkpoint and catch up in memory; they never write.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from eventlog.errors import ConfigError, EvlogError, ProjectionWriteError, WorkspaceNotFound
from eventlog.events import Event
from eventlog.fsio import OS_FS, FileSystem
from eventlog.lock import FileLock
from eventlog.log import (
    DEFAULT_GROUP_COMMIT_INTERVAL,
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SEGMENT_BYTES,
    DURABILITY_POLICIES,
    Durability,
    Log,
)
from eventlog.redact import redact_events
from processors.registry import default_schedule

if TYPE_CHECKING:
    from processors.context import Views
    from projections.compaction import CompactionProjection
    from projections.diary import DiaryProjection
    from projections.dream_runs import DreamRunsProjection
    from projections.history import HistoryProjection
    from projections.memory import MemoryProjection
    from projections.memory_entries import MemoryEntriesProjection
    from projections.offsets import OffsetsProjection
    from projections.projector import Projector
    from projections.sessions import SessionsProjection

T = TypeVar("T")

CONFIG_FILE = "evlog.json"
#: Each built-in daemon job's default interval, from the registry (``processors.builtins``).
DEFAULT_SCHEDULE = default_schedule(plugins=False)
LOG_DIR = "log"
STATE_DIR = "state"
PROJECTIONS_LOCK = os.path.join(STATE_DIR, "projections.lock")
_READ_RETRIES = 3


class WatchConfig(msgspec.Struct, kw_only=True):
    """``watch`` in evlog.json: what ``evlog watch`` and the daemon's watch job follow."""

    paths: list[str] = []  # transcript folders or files; empty: the usual Claude Code, Codex and nanobot folders
    debounce: float = 2.0  # seconds a file must be quiet before it is ingested
    interval: float = 1.0  # seconds between polls


class Config(msgspec.Struct, kw_only=True, omit_defaults=False):
    """Workspace settings, stored in ``evlog.json``. Unknown keys are kept out; missing ones default."""

    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    durability: str = "fsync"
    group_commit_interval: float = DEFAULT_GROUP_COMMIT_INTERVAL
    projection_flush_interval: float = 1.0  # seconds projection files may trail the log
    diary_budget_bytes: int = 200_000  # a day's diary never exceeds this many bytes of UTF-8
    digest_batch_bytes: int = 50_000  # the digest reads at most this much diary per entry
    stale_after_days: float = 7.0  # the archive drops short-term entries unused this long
    dream_token_budget: int = 20_000  # tokens one Dream run may spend (prompt + answer, retry included)
    dream_daily_token_budget: int = 400_000  # tokens a model-backed Dream may spend per UTC day (0: no daily limit)
    idle_minutes: float = 30.0  # AutoCompact leaves sessions active more recently alone
    schedule: dict[str, float] = msgspec.field(default_factory=lambda: dict(DEFAULT_SCHEDULE))  # seconds between daemon runs
    projects: list[str] = msgspec.field(default_factory=list)  # project directories MEMORY.md may be mirrored into
    memory_max_lines: int = 200  # a MEMORY.md keeps at most this many lines (what Claude Code loads at start-up)
    memory_max_bytes: int = 25_000  # ... and at most this many bytes
    watch: WatchConfig = msgspec.field(default_factory=WatchConfig)  # evlog watch and the daemon's watch job
    llm: str = ""  # the model provider Dream uses ("" = $EVLOG_LLM / an API key / offline); evlog init picks one
    llm_model: str = ""  # its model ("" = the provider's default, or $EVLOG_MODEL)

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
        if self.dream_daily_token_budget < 0:
            raise ConfigError(f"dream_daily_token_budget must be >= 0 (0: no daily limit; got {self.dream_daily_token_budget})")
        if self.memory_max_lines < 10 or self.memory_max_bytes < 1000:
            raise ConfigError("memory_max_lines must be at least 10 and memory_max_bytes at least 1000")
        if not 0 < self.projection_flush_interval <= 3600:
            raise ConfigError(f"projection_flush_interval must be in (0, 3600] seconds (got {self.projection_flush_interval})")
        for p in self.projects:
            if not os.path.isabs(p):
                raise ConfigError(f"projects must be absolute directories (got {p!r})")
        if not (0 <= self.watch.debounce <= 3600 and 0 < self.watch.interval <= 3600):
            raise ConfigError("watch.debounce must be in [0, 3600] and watch.interval in (0, 3600] seconds")
        if self.llm not in ("", "claude-code", "openai", "anthropic", "offline"):
            raise ConfigError(f"llm must be claude-code, openai, anthropic or offline (got {self.llm!r})")
        for job, interval in self.schedule.items():
            if not 0 <= interval < 1e9:
                raise ConfigError(f"schedule.{job} must be seconds >= 0 (0 turns the job off; got {interval})")
        # a job added after this file was written runs at its default interval
        self.schedule = {**DEFAULT_SCHEDULE, **self.schedule}
        return self


def _finish_erasure(ws: Workspace) -> None:
    """Roll a killed ``evlog erase`` forward before anything else reads the files it was cleaning."""
    from eventlog import erasure

    if erasure.pending(ws.log.dir):
        from eventlog.app.erase import resume

        try:
            resume(ws)
        except BaseException:
            ws.close()
            raise


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
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    try:
        return msgspec.json.decode(data, type=Config).validate()
    except msgspec.ValidationError as e:
        raise ConfigError(f"{path}: {e}") from e
    except msgspec.DecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e}") from e


def save_config(home: str, config: Config) -> None:
    """Write ``evlog.json`` atomically (validated first)."""
    config.validate()
    OS_FS.atomic_write(os.path.join(home, CONFIG_FILE), msgspec.json.format(msgspec.json.encode(config), indent=2) + b"\n")


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
    if not os.path.isdir(home):
        # transcripts and memory are private: a new workspace is readable by its owner only
        os.makedirs(home, mode=0o700)
    for sub in (LOG_DIR, STATE_DIR):
        os.makedirs(os.path.join(home, sub), mode=0o700, exist_ok=True)
    if changes:
        save_config(home, new)
    if not os.listdir(os.path.join(home, LOG_DIR)):
        Log.open(os.path.join(home, LOG_DIR), writable=True, create=True, segment_bytes=new.segment_bytes).close()
    return new, changes


class Workspace:
    """An open workspace: its config, its log and (on first use) its projections; see the module docstring.

    Opened ``writable``, it may append (taking turns with other writers) and writes
    projection files in the background; opened read-only, it only reads.
    """

    def __init__(self, home: str, config: Config, log: Log, fs: FileSystem) -> None:
        self.home = home
        self.config = config
        self.log = log
        self.fs = fs
        self.lock = threading.RLock()  # guards this process's projections (appends, catch-up, flush)
        self._projector: Projector | None = None
        self._views: Views | None = None
        self._flushed_seq = -1
        self._ckpt_seen: tuple[int, int, int] | None = None  # (inode, size, mtime_ns) of the checkpoint we hold
        self._flush_lock = FileLock(os.path.join(home, PROJECTIONS_LOCK), what=f"the projection files of {home}")
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None

    @classmethod
    def open(
        cls,
        home: str | None = None,
        *,
        writable: bool = False,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
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
            durability=cast(Durability, config.durability),  # Config.validate checked it
            segment_bytes=config.segment_bytes,
            group_commit_interval=config.group_commit_interval,
            lock_timeout=lock_timeout,
            repair=repair,
            fs=fs,
            clock=clock,
        )
        ws = cls(home, config, log, fs)
        if writable:
            _finish_erasure(ws)
        return ws

    @property
    def writable(self) -> bool:
        """True when this workspace may append (and writes projection files)."""
        return self.log.writable

    def path(self, *parts: str) -> str:
        """A path inside the workspace."""
        return os.path.join(self.home, *parts)

    @contextmanager
    def processor_lock(self, name: str) -> Iterator[None]:
        """Hold ``state/locks/<name>.lock``: one run of a processor at a time, across processes."""
        lock = self._processor_file_lock(name)
        lock.acquire(self.log.writer.lock_timeout if self.log.writer is not None else 0.0)
        try:
            yield
        finally:
            lock.close()

    @contextmanager
    def try_processor_lock(self, name: str) -> Iterator[bool]:
        """Hold ``name``'s processor lock if it is free right now: yields True, else False (someone runs it)."""
        lock = self._processor_file_lock(name)
        try:
            yield lock.try_acquire()
        finally:
            lock.close()

    def _processor_file_lock(self, name: str) -> FileLock:
        return FileLock(self.path(STATE_DIR, "locks", f"{name}.lock"), what=f"processor {name!r} of {self.home}")

    # -- registered projects ---------------------------------------------------------

    def register_project(self, directory: str) -> bool:
        """Let the project's MEMORY.md be mirrored into ``<directory>/memory/``; True if it was new.

        Only directories registered here (by a user: ``evlog project add``, or an explicit
        ``--project``) ever receive a file from evlog outside the workspace (INVARIANTS I22).
        The directory must exist: evlog never creates a project directory (ConfigError).
        """
        directory = os.path.abspath(directory)
        if not os.path.isdir(directory):
            raise ConfigError(f"{directory} is not a directory; a project's MEMORY.md is mirrored only into one that exists")
        return self._edit_projects(directory, add=True)

    def unregister_project(self, directory: str) -> bool:
        """Stop mirroring into ``directory`` (files already there stay); True if it was registered."""
        return self._edit_projects(os.path.abspath(directory), add=False)

    def _edit_projects(self, directory: str, *, add: bool) -> bool:
        lock = FileLock(self.path(STATE_DIR, "config.lock"), what=f"the configuration of {self.home}")
        lock.acquire(DEFAULT_LOCK_TIMEOUT)
        try:
            config = load_config(self.home)  # another process may have changed it
            present = directory in config.projects
            if present == add:
                self.config = config
                return False
            projects = sorted({*config.projects, directory}) if add else [p for p in config.projects if p != directory]
            config = msgspec.structs.replace(config, projects=projects)
            save_config(self.home, config)
            self.config = config
        finally:
            lock.close()
        with self.lock:
            if self._views is not None:
                mem = self._views.memory
                mem.mirror_projects = frozenset(config.projects)
                if add and self.writable:
                    mem.after_rebuild()  # copy what the project already knows
        return True

    # -- projections -----------------------------------------------------------------

    @property
    def projections(self) -> Projector:
        """The workspace's projector, caught up with the log."""
        with self.lock:
            self.catch_up()
            return self._proj()

    def catch_up(self) -> Views:
        """Read what other writers appended into the projections (built on first use); returns their views."""
        with self.lock:
            if self._projector is None:
                self._build_projector()
            else:
                self._catch_up()  # what others appended, if anything (a writer folds its own appends in append())
            assert self._views is not None  # _build_projector set them
            return self._views

    @property
    def views(self) -> Views:
        """The typed projections as of the last ``catch_up`` (built and caught up on first use)."""
        return self._views if self._views is not None else self.catch_up()

    def _proj(self) -> Projector:
        """The projector (the caller made sure it is built)."""
        assert self._projector is not None, "the projections are built by catch_up()"
        return self._projector

    def _build_projector(self) -> None:
        from processors.context import Views
        from projections import default_projections
        from projections.projector import Projector

        live = self.writable
        proj = Projector(self.log, self.home, default_projections(self.home, self.fs, live=live,
                                                                   mirror_projects=self.config.projects),
                         self.fs, checkpoint=True)
        self._projector = proj
        self._views = Views.of(proj.projections)
        self._ckpt_seen = proj.checkpoint_identity()
        if proj.seq and proj.seq == proj.written_seq:
            # the files on disk are those of the checkpoint just loaded: a flush with nothing new writes nothing
            # (at 10M events the checkpoint is ~50 MB; a writer that only read used to rewrite it at close)
            self._flushed_seq = proj.seq
        if live:
            with self._flushing():
                proj.clean_temp_files()
                if proj.outputs_missing():
                    self._rebuild()  # a projection file was deleted: give it back (costs a replay)
            self._flusher = threading.Thread(target=self._flush_loop, name="evlog-projections", daemon=True)
            self._flusher.start()
        self._catch_up()

    # typed accessors (one per projection)
    @property
    def sessions(self) -> SessionsProjection:
        """Sessions and their files."""
        return self.catch_up().sessions

    @property
    def history(self) -> HistoryProjection:
        """Dream's input, ``memory/history.jsonl``."""
        return self.catch_up().history

    @property
    def memory(self) -> MemoryProjection:
        """The MEMORY.md files."""
        return self.catch_up().memory

    @property
    def diary(self) -> DiaryProjection:
        """Daily diaries."""
        return self.catch_up().diary

    @property
    def offsets(self) -> OffsetsProjection:
        """Processor positions and recorded losses."""
        return self.catch_up().offsets

    @property
    def memory_entries(self) -> MemoryEntriesProjection:
        """Short- and long-term memory entries."""
        return self.catch_up().memory_entries

    @property
    def dream_runs(self) -> DreamRunsProjection:
        """Dream's runs and cursor."""
        return self.catch_up().dream_runs

    @property
    def compaction(self) -> CompactionProjection:
        """AutoCompact's backoff."""
        return self.catch_up().compaction

    def _catch_up(self) -> None:
        from projections.base import ProjectionDrift

        proj = self._proj()
        last = self.log.last_seq  # for a writer one fstat; asked once per catch-up
        if proj.seq == last:
            return  # nothing new: no read that has to find the end first
        try:
            if self.writable:
                self._catch_up_in_steps(last)
            proj.catch_up()
        except ProjectionDrift:
            self._recover_drift()

    def _catch_up_in_steps(self, last: int) -> None:
        """A writer far behind the log (after an ingest of a big folder, or opening a workspace
        whose files lag) writes the files every ``REBUILD_FLUSH_EVENTS`` events, so the lines
        waiting to be written stay bounded instead of growing with the log."""
        from projections.projector import REBUILD_FLUSH_EVENTS as step

        proj = self._proj()
        memory = self.views.memory
        while last - proj.seq > step:  # (what others append meanwhile, the final catch_up reads)
            proj.catch_up(until_seq=proj.seq + step)
            if memory.hand_edits():
                return  # a MEMORY.md edited by hand: the next flush turns that into events first
            try:
                if self._flush_lock.held:
                    proj.flush()
                else:
                    with self._flushing():
                        proj.flush()
            except OSError:
                return  # files cannot be written now (disk full, read-only): the regular flush reports it
            self._flushed_seq = proj.seq
            self._ckpt_seen = proj.checkpoint_identity()

    def rebuild_projections(self) -> Projector:
        """Replay the log into fresh projection files and swap them in (writer only; see ``Projector.rebuild``)."""
        with self.lock:
            proj = self.projections
            with self._flushing():
                self._rebuild()
            return proj

    def _rebuild(self) -> None:
        proj = self._proj()
        proj.rebuild()
        self._flushed_seq = proj.seq
        self._ckpt_seen = proj.checkpoint_identity()

    def _recover_drift(self) -> None:
        if self.writable:
            with self._flushing():
                self._rebuild()
        else:
            self._reload()

    def _reload(self) -> None:
        """Start again from the newest checkpoint on disk and catch up (what a reader does when files moved)."""
        proj = self._proj()
        proj.reload()
        self._ckpt_seen = proj.checkpoint_identity()
        proj.catch_up()

    def read_projection(self, fn: Callable[[], T]) -> T:
        """Run a read that may touch projection files; if they moved under it, catch up and retry."""
        from projections.base import ProjectionDrift

        with self.lock:
            for attempt in range(_READ_RETRIES + 1):
                try:
                    return fn()
                except ProjectionDrift:
                    if self.writable:
                        self.flush()  # our own pending changes, or another process's newer files: settle them
                        if attempt == _READ_RETRIES - 1:
                            self._recover_drift()
                    elif attempt < _READ_RETRIES:
                        self._reload()
            raise EvlogError("projection files keep changing while being read (a writer is rewriting them, or they "
                             "were edited by hand); retry, or run 'evlog replay' to rebuild them")

    def append(self, events: Sequence[Event], *, sync: bool = True) -> list[int]:
        """Append events as one atomic batch (one event: one append) and bring the projections up to date.

        ``sync=False``: as ``Log.append_batch``'s (a bulk writer that syncs later, ingest)."""
        events = redact_events(events)  # what the writer's door writes: the fold below must see the same
        with self.lock:
            writer = self.log.writer
            before = writer.last_append if writer is not None else (0, 0)
            one = len(events) == 1 and sync
            seqs = [self.log.append(events[0])] if one else self.log.append_batch(events, sync=sync)
            proj = self._projector
            if proj is None or writer is None or writer.last_append == before:
                return seqs
            first, _last = writer.last_append
            if proj.seq == first - 1:  # fold what was just written without reading it back
                ts, fingerprint = writer.last_written()
                replace = msgspec.structs.replace
                proj.apply_appended([replace(ev, seq=s, ts=ts) for ev, s in zip(events, seqs, strict=True) if s >= first],
                                    fingerprint)
            else:
                self._catch_up()  # others appended before us: read theirs (and ours) back
            return seqs

    # -- writing projection files ----------------------------------------------------

    @contextmanager
    def _flushing(self) -> Iterator[None]:
        """Hold the projection-files lock; adopt a newer checkpoint another process wrote meanwhile."""
        self._flush_lock.acquire(self.log.writer.lock_timeout if self.log.writer else 0.0)
        try:
            proj = self._projector
            if proj is not None and proj.checkpoint_identity() != self._ckpt_seen:
                self._reload()  # another process flushed: its files are on disk
            yield
        finally:
            self._flush_lock.release()

    def flush(self) -> None:
        """Write every projection file that changed (and their checkpoint) now.

        A failure to write them (disk full, read-only, a path taken by a directory) raises
        ``ProjectionWriteError``: the log already holds every event, and the next flush,
        command or ``evlog replay`` writes the files again.
        """
        if not self.writable:
            return
        try:
            self._flush()
        except OSError as e:
            last = self.log.writer.last_append[1] if self.log.writer is not None else 0
            stored = f"this process appended up to seq {last}" if last else "nothing new was appended by this process"
            where = f" ({e.filename})" if e.filename else ""
            raise ProjectionWriteError(
                f"the log holds every event ({stored}), but writing the projection files failed: "
                f"{e.strerror or e}{where}; they are written again by the next command or 'evlog replay' "
                "once the cause is fixed") from e

    def _flush(self) -> None:
        with self.lock:
            if self._projector is None:
                self._build_projector()
            proj = self._proj()
            with self._flushing():
                self._catch_up()
                memory = self.views.memory
                edits = memory.hand_edits()
                if edits:  # a MEMORY.md changed by hand: the log says so before the file is written again
                    from processors.memory_budget import budget_events

                    self.append(edits)
                    over = budget_events(memory, self.config, [])
                    if over:
                        self.append(over)
                if proj.seq != self._flushed_seq or proj.checkpoint_identity() != self._ckpt_seen:
                    proj.flush()
                    self._flushed_seq = proj.seq
                    self._ckpt_seen = proj.checkpoint_identity()

    def _flush_loop(self) -> None:
        while not self._stop.wait(self.config.projection_flush_interval):
            try:
                with self.lock:
                    if self.writable and self._projector is not None and self._projector.seq != self._flushed_seq:
                        self._flush()
            except Exception:  # noqa: BLE001 - a background flush must never kill the process
                pass  # the next flush (or close) retries; the log already holds everything

    def close(self) -> None:
        """Flush projections (if this is a writer) and close the log; idempotent."""
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join()
            self._flusher = None
        try:
            wrote = self.log.writer is not None and self.log.writer.last_append != (0, 0)
            if self.writable and (self._projector is not None or wrote):
                self.flush()  # projection files always follow what this writer appended
        finally:
            self.log.close()
            self._flush_lock.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if TYPE_CHECKING:
    from processors.context import Context

    def _a_workspace_is_a_context(ws: Workspace) -> Context:
        return ws  # mypy checks here that Workspace satisfies the processors' Context protocol
