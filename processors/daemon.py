"""The daemon: run the processors on their schedules until told to stop.

Jobs and their default intervals (``schedule`` in evlog.json, seconds): snapshot 300,
digest 900, autocompact 300, dream 86400, archive 86400, recall 60 (keeps the search
index caught up), watch 0 (off; ingests grown transcripts, ``eventlog.app.agents.watch``,
passed in by the caller through ``jobs`` since it lives above the processors). A job
missing from evlog.json runs at its default; 0 turns a job off. Every job is due at
start, then again ``interval`` seconds after it last ran. Jobs run one at a time in the daemon's
thread; each processor step is one atomic append, so stopping between jobs (SIGINT or
SIGTERM set ``stop``) leaves every offset consistent, and a daemon killed at any moment
resumes where the log says it was. A job that raises is logged and retried at its next
turn; it never stops the others.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from eventlog.errors import ConfigError
from processors.llm import LLM

if TYPE_CHECKING:
    from eventlog.app.workspace import Workspace

JOBS = ("snapshot", "digest", "autocompact", "dream", "archive", "recall", "watch")
#: Jobs that live above the processors (the caller passes them to ``run_daemon``).
EXTERNAL_JOBS = ("watch",)


def job_summary(name: str, result: object) -> str:
    """One log line for a job's result."""
    from processors.runner import RunReport

    if isinstance(result, RunReport):
        return (f"{name}: read {result.events_read}, wrote {result.entries_written}, "
                f"duplicates {result.duplicates_skipped}, trimmed {result.bytes_trimmed} B"
                + (f", resets {len(result.resets)}" if result.resets else ""))
    runs = getattr(result, "runs", None)
    if runs is not None:
        return f"{name}: {len(runs)} run(s): " + ", ".join(f"{r.run_id} {r.outcome} +{len(r.facts)}" for r in runs)
    ran = getattr(result, "ran", None)
    if ran is not None:
        return f"{name}: {len(ran)} consolidation(s): " + ", ".join(f"{r.session_key} {r.status}" for r in ran)
    if isinstance(result, list):  # the watch job: one result per transcript that changed
        events = sum(getattr(getattr(r, "file", None), "events", 0) for r in result)
        return f"{name}: {len(result)} file(s) read, {events} event(s) appended"
    return f"{name}: done"


def run_daemon(
    ws: Workspace,
    llm: LLM,
    *,
    stop: threading.Event,
    log: Callable[[str], None],
    schedule: dict[str, float] | None = None,
    clock: Callable[[], float] = time.monotonic,
    once: bool = False,
    jobs: dict[str, Callable[[Workspace], object]] | None = None,
) -> dict[str, int]:
    """Run due jobs until ``stop`` is set (or one round if ``once``); returns runs per job.

    ``jobs`` supplies the ``EXTERNAL_JOBS`` (name -> function of the workspace); a
    scheduled external job that was not supplied is left out, with a log line.
    """
    import processors

    sched = dict(schedule or ws.config.schedule)
    unknown = set(sched) - set(JOBS)
    if unknown:
        raise ConfigError(f"unknown job(s) in schedule: {', '.join(sorted(unknown))}; known: {', '.join(JOBS)}")
    external = dict(jobs or {})
    for job in EXTERNAL_JOBS:
        if sched.get(job, 0) > 0 and job not in external:
            log(f"{job}: scheduled but not available here; skipped")
            sched[job] = 0
    next_at = {job: clock() for job in JOBS if sched.get(job, 0) > 0}
    counts = {job: 0 for job in next_at}
    log(f"daemon started on {ws.home} with {llm.name} ({llm.model}); jobs: "
        + ", ".join(f"{j} every {sched[j]:g}s" for j in next_at))
    while not stop.is_set():
        for job in sorted(next_at, key=lambda j: (next_at[j], JOBS.index(j))):
            if stop.is_set() or next_at[job] > clock():
                continue
            try:
                result = external[job](ws) if job in external else processors.run(ws, job, llm=llm)
                log(job_summary(job, result))
            except Exception as e:  # noqa: BLE001 - one failing job never stops the others
                log(f"{job}: failed: {e.__class__.__name__}: {e}")
                log("".join(traceback.format_exception_only(e)).strip())
            counts[job] += 1
            next_at[job] = clock() + sched[job]
        if once:
            break
        ws.flush()
        wake = min(next_at.values(), default=clock() + 60) - clock()
        stop.wait(max(0.05, min(wake, 5.0)))
    log("daemon stopping: every offset is committed")
    return counts
