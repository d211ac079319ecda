"""The daemon: run the processors on their schedules until told to stop.

The jobs, their order within a round and their default intervals come from the registry
(``processors.registry``; ``schedule`` in evlog.json overrides, seconds): snapshot 300,
digest 900, autocompact 300, dream 120 (memory within minutes), archive 86400, recall 60
(keeps the search index caught up), embed 60 (sentence vectors for hybrid recall, computed in a
child process that shutdown terminates: ``processors.embed_job.run_in_background``), watch 0 (off; ingests grown transcripts,
``eventlog.app.agents.watch``, an ``external`` job passed in by the caller through
``jobs`` since it lives above the processors), and any registered plugin job. A job
missing from evlog.json runs at its default; 0 turns a job off. Every job is due at
start, then again ``interval`` seconds after it last ran. Jobs run one at a time in the daemon's
thread; each processor step is one atomic append, so stopping between jobs (SIGINT or
SIGTERM set ``stop``) leaves every offset consistent, and a daemon killed at any moment
resumes where the log says it was. A job that raises is logged and retried at its next
turn; it never stops the others.

**What it leaves for ``evlog status``.** With a ``Heartbeat`` the daemon keeps
``state/daemon.json`` (``DAEMON_STATE``): its pid, host, version, when it started, a heartbeat
every ``HEARTBEAT_SECONDS`` from a thread of its own (so a long job never makes it look dead),
the job running now and since when, when it stopped, and per job the interval, last run (time,
ok or the error, consecutive failures) and next run, replaced atomically each time. ``daemon_logger`` writes the same lines as stderr into ``logs/daemon.log``, rotated at
``LOG_MAX_BYTES`` with ``LOG_BACKUPS`` old files kept. A second daemon on a workspace whose
daemon is alive (its pid runs and its heartbeat is fresh) is refused (``DaemonRunning``).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from eventlog.errors import ConfigError, LockedError
from processors import registry
from processors.llm import LLM

if TYPE_CHECKING:
    from processors.context import Context

DAEMON_STATE = os.path.join("state", "daemon.json")
LOG_FILE = os.path.join("logs", "daemon.log")
LOG_MAX_BYTES = 1024 * 1024
LOG_BACKUPS = 3
HEARTBEAT_SECONDS = 10.0
#: A heartbeat older than this means the daemon is gone (it beats every HEARTBEAT_SECONDS, waits at most 5 s).
STALE_AFTER_SECONDS = 6 * HEARTBEAT_SECONDS
#: Dream's calls in one turn of the daemon (an offline call takes ~2,000 messages, ~1 s); more waits for the next turn.
DREAM_CALLS_PER_TURN = 10



def __getattr__(name: str) -> tuple[str, ...]:
    """``JOBS`` (the daemon's jobs, in order) and ``EXTERNAL_JOBS`` (those the caller supplies), from the registry."""
    if name == "JOBS":
        return tuple(registry.daemon_jobs())
    if name == "EXTERNAL_JOBS":
        return tuple(registry.names(["external"]))
    raise AttributeError(f"module 'processors.daemon' has no attribute {name!r}")


def job_summary(name: str, result: object) -> str:
    """One log line for a job's result (a registered job's report says it; the watch job returns a list)."""
    if isinstance(result, registry.Report):
        return f"{name}: {result.summary()}"
    if isinstance(result, list):  # the watch job: one result per transcript that changed
        events = sum(getattr(getattr(r, "file", None), "events", 0) for r in result)
        return f"{name}: {len(result)} file(s) read, {events} event(s) appended"
    return f"{name}: done"


def run_daemon(
    ws: Context,
    llm: LLM,
    *,
    stop: threading.Event,
    log: Callable[[str], None],
    schedule: dict[str, float] | None = None,
    clock: Callable[[], float] = time.monotonic,
    once: bool = False,
    jobs: dict[str, Callable[[Context], object]] | None = None,
    heartbeat: Heartbeat | None = None,
    wait: Callable[[float], object] | None = None,
) -> dict[str, int]:
    """Run due jobs until ``stop`` is set (or one round if ``once``); returns runs per job.

    ``jobs`` supplies the ``EXTERNAL_JOBS`` (name -> function of the workspace); a
    scheduled external job that was not supplied is left out, with a log line.
    ``heartbeat`` (optional) records the daemon and each job's runs in ``state/daemon.json``.
    ``wait`` sleeps between rounds (default ``stop.wait``; a test passes one that moves its ``clock``).
    """
    order = registry.daemon_jobs()
    sched = dict(schedule) if schedule else {**registry.default_schedule(), **ws.config.schedule}
    unknown = set(sched) - set(order)
    if unknown:
        raise ConfigError(f"unknown job(s) in schedule: {', '.join(sorted(unknown))}; known: {', '.join(order)}")
    external = dict(jobs or {})
    if sched.get("embed", 0) > 0:  # in a child process: torch never loads beside this loop
        from processors.embed_job import run_in_background

        external.setdefault("embed", run_in_background)
    for job in registry.names(["external"]):
        if sched.get(job, 0) > 0 and job not in external:
            log(f"{job}: scheduled but not available here; skipped")
            sched[job] = 0
    next_at = {job: clock() for job in order if sched.get(job, 0) > 0}
    counts = {job: 0 for job in next_at}

    def wall_of(t: float) -> float:  # a time of ``clock`` as wall-clock seconds
        return (heartbeat.wall() if heartbeat else time.time()) + (t - clock())

    if heartbeat is not None:
        heartbeat.claim()
        for job in next_at:
            heartbeat.schedule(job, sched[job], wall_of(next_at[job]))
    log(f"daemon started on {ws.home} with {llm.name} ({llm.model}); jobs: "
        + ", ".join(f"{j} every {sched[j]:g}s" for j in next_at))
    try:
        _loop(ws, llm, stop, log, _Round(sched, next_at, counts, order, wait or stop.wait), clock, once, external,
              heartbeat, wall_of)
    finally:
        if "embed" in external:
            from processors.embed_job import stop_background

            stop_background(ws.home)
        if heartbeat is not None:
            heartbeat.stopped()
    log("daemon stopping: every offset is committed")
    return counts


def _run_job(ws: Context, job: str, external: dict[str, Callable[[Context], object]], llm: LLM,
             log: Callable[[str], None], *, sliced: bool = True) -> tuple[str, bool]:
    """Run one job: ('' or the error it failed with (logged; it never stops the daemon), whether it has more to do).

    ``sliced`` (not in a ``once`` round, which drains): Dream runs at most ``DREAM_CALLS_PER_TURN``
    calls a turn, so a first round over a big log (hundreds of calls) never holds the other jobs
    back; the rest is due again at once.
    """
    import processors

    try:
        if job in external:
            result = external[job](ws)
        else:
            result = processors.run(ws, job, llm=llm, max_calls=DREAM_CALLS_PER_TURN if sliced and job == "dream" else None)
        log(job_summary(job, result))
    except Exception as e:  # noqa: BLE001 - one failing job never stops the others
        error = f"{e.__class__.__name__}: {e}"
        log(f"{job}: failed: {error}")
        log("".join(traceback.format_exception_only(e)).strip())
        return error, False
    return "", bool(getattr(result, "sliced", False))


@dataclass
class _Round:
    """The daemon's schedule: intervals, when each job is due next, runs so far, the jobs' order."""

    sched: dict[str, float]
    next_at: dict[str, float]
    counts: dict[str, int]
    order: list[str]
    wait: Callable[[float], object]


def _loop(ws: Context, llm: LLM, stop: threading.Event, log: Callable[[str], None], plan: _Round,
          clock: Callable[[], float], once: bool, external: dict[str, Callable[[Context], object]],
          heartbeat: Heartbeat | None, wall_of: Callable[[float], float]) -> None:
    sched, next_at, counts = plan.sched, plan.next_at, plan.counts
    while not stop.is_set():
        for job in sorted(next_at, key=lambda j: (next_at[j], plan.order.index(j))):
            if stop.is_set() or next_at[job] > clock():
                continue
            if heartbeat is not None:
                heartbeat.running(job)
            error, more = _run_job(ws, job, external, llm, log, sliced=not once)
            counts[job] += 1
            next_at[job] = clock() + (0.0 if more else sched[job])  # more: due again, after the jobs due now
            if heartbeat is not None:
                heartbeat.ran(job, error, wall_of(next_at[job]))
        if once:
            break
        ws.flush()
        wake = min(next_at.values(), default=clock() + 60) - clock()
        plan.wait(max(0.05, min(wake, 5.0)))


# --- what the daemon leaves for `evlog status`: state/daemon.json and logs/daemon.log ---------------


def utc_iso(t: float) -> str:
    """A wall-clock time as ``2026-12-01T14:30:00Z``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs (on this host)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    except OSError:
        return False
    return True


def read_daemon_state(home: str) -> dict[str, Any] | None:
    """The daemon's ``state/daemon.json`` (None: no daemon ever ran here, or the file is unreadable)."""
    try:
        with open(os.path.join(home, DAEMON_STATE), encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def daemon_alive(state: dict[str, Any] | None, *, now: float | None = None) -> bool:
    """Whether the daemon that wrote ``state`` still runs: not stopped, its pid alive, its heartbeat fresh."""
    if not state or state.get("stopped_at") or state.get("host") != socket.gethostname():
        return False
    pid = state.get("pid")
    beat = state.get("heartbeat_ts")
    if not isinstance(pid, int) or not isinstance(beat, int | float):
        return False
    return pid_alive(pid) and (now if now is not None else time.time()) - beat <= STALE_AFTER_SECONDS


class Heartbeat:
    """Keeps ``state/daemon.json`` for one running daemon (see the module docstring)."""

    def __init__(self, home: str, *, wall: Callable[[], float] = time.time) -> None:
        from eventlog._version import __version__

        self.path = os.path.join(home, DAEMON_STATE)
        self.wall = wall
        now = wall()
        self.state: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname(), "version": __version__,
                                      "started_at": utc_iso(now), "started_ts": now, "heartbeat_at": "",
                                      "heartbeat_ts": 0.0, "stopped_at": "", "log_file": LOG_FILE, "jobs": {}}
        self._last = 0.0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def claim(self) -> None:
        """Refuse to start beside a live daemon of this workspace, write the first heartbeat, keep beating.

        The beats come from a thread of their own, so a long job (a Dream call that takes
        minutes) never makes a running daemon look dead.
        """
        other = read_daemon_state(os.path.dirname(os.path.dirname(self.path)))
        if other and other.get("pid") != os.getpid() and daemon_alive(other, now=self.wall()):
            raise LockedError(f"a daemon already runs on this workspace (pid {other.get('pid')}, since "
                              f"{other.get('started_at')}); 'evlog status' shows it")
        self.beat(force=True)
        self._thread = threading.Thread(target=self._keep_beating, name="evlog-heartbeat", daemon=True)
        self._thread.start()

    def _keep_beating(self) -> None:
        while not self._done.wait(HEARTBEAT_SECONDS):
            self.beat(force=True)

    def running(self, job: str) -> None:
        """Record that ``job`` runs now (``evlog status`` shows it until it ends)."""
        with self._lock:
            self.state["current_job"] = {"job": job, "since": utc_iso(self.wall())}
        self.beat(force=True)

    def schedule(self, job: str, interval: float, next_ts: float) -> None:
        self.state["jobs"].setdefault(job, {"interval": interval, "runs": 0, "failures": 0, "last_run_at": "",
                                            "last_ok": None, "last_error": "", "last_ok_at": ""})
        self.state["jobs"][job]["next_run_at"] = utc_iso(next_ts)

    def ran(self, job: str, error: str, next_ts: float) -> None:
        """Record a job's run (``error`` empty: it succeeded) and when it runs next."""
        with self._lock:
            j = self.state["jobs"][job]
            now = utc_iso(self.wall())
            j.update(runs=j["runs"] + 1, last_run_at=now, last_ok=not error, last_error=error,
                     failures=j["failures"] + 1 if error else 0, next_run_at=utc_iso(next_ts))
            if not error:
                j["last_ok_at"] = now
            self.state.pop("current_job", None)
        self.beat(force=True)

    def beat(self, *, force: bool = False) -> None:
        now = self.wall()
        with self._lock:
            if not force and now - self._last < HEARTBEAT_SECONDS:
                return
            self._last = now
            self.state.update(heartbeat_at=utc_iso(now), heartbeat_ts=now)
            self._write()

    def stopped(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(5)
        now = self.wall()
        with self._lock:
            self.state.pop("current_job", None)
            self.state.update(stopped_at=utc_iso(now), heartbeat_at=utc_iso(now), heartbeat_ts=now)
            self._write()

    def _write(self) -> None:
        """Replace the file with the state (the caller holds ``_lock``)."""
        from eventlog.fsio import OS_FS

        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            OS_FS.atomic_write(self.path, (json.dumps(self.state, indent=1) + "\n").encode(), sync=False)
        except OSError:
            pass  # a status file never stops the daemon's work


def daemon_logger(home: str, *, stream: Any = None) -> logging.Logger:
    """A logger writing to ``logs/daemon.log`` (rotated) and, when given, ``stream`` (stderr)."""
    logger = logging.getLogger(f"evlog.daemon.{os.path.abspath(home)}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    for h in list(logger.handlers):
        logger.removeHandler(h)
        h.close()
    fmt = logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%S")
    path = os.path.join(home, LOG_FILE)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS,
                                                        encoding="utf-8")
    file_handler.setFormatter(fmt)
    logger.addHandler(file_handler)
    if stream is not None:
        console = logging.StreamHandler(stream)
        console.setFormatter(fmt)
        logger.addHandler(console)
    return logger


def close_logger(logger: logging.Logger) -> None:
    for h in list(logger.handlers):
        logger.removeHandler(h)
        h.close()
