#!/usr/bin/env python3
"""How long ``evlog erase`` takes, next to a full ``replay`` of the same workspace (its baseline).

    .venv/bin/python tools/bench_erase.py                       # 20,000 messages, a readable table
    .venv/bin/python tools/bench_erase.py --messages 100000 --json

A seeded generator writes ``--messages`` messages over ``--sessions`` sessions (segments of
``--segment-mb``), runs snapshot and digest, then times, in one process: a full rebuild
(``replay.rebuild``: the baseline, since an erase rebuilds every projection too), the dry
run of erasing one session, and the erase itself (find + segment rewrite + rebuild +
leftover search), and how long ``erasure.commit`` took (it holds the write lock for most of it: other
writers wait that long). Wall and CPU seconds are both reported: on a shared machine the CPU time
of this process is the comparable figure. Only results go to stdout; progress to stderr. The data lives in a
temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import processors  # noqa: E402
from eventlog import erasure  # noqa: E402
from eventlog.app import replay  # noqa: E402
from eventlog.app.erase import Target, erase  # noqa: E402
from eventlog.app.workspace import Workspace, init_workspace  # noqa: E402
from eventlog.events import MessageAppended, SessionCreated  # noqa: E402

WORDS = "the a plan code test deploy user memory log fact session build merge branch review fix bug note".split()


def _build(home: str, messages: int, sessions: int, segment_mb: float, seed: int) -> None:
    rng = random.Random(seed)
    init_workspace(home, segment_bytes=int(segment_mb * 1024 * 1024))
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key=f"s{k}", title=f"session {k}") for k in range(sessions)])
        batch = []
        for i in range(messages):
            k = i % sessions
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
            batch.append(MessageAppended(session_key=f"s{k}", message_id=f"m{i}", role="user" if i % 2 else "assistant",
                                         content=f"{text} #{i}", timestamp="2026-11-01T10:00:00Z"))
            if len(batch) == 1000:
                ws.log.append_batch(batch)
                batch = []
        if batch:
            ws.log.append_batch(batch)
        for p in ("snapshot", "digest"):
            processors.run(ws, p)


def _timed(fn: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result): CPU time is the figure on a shared machine."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return round(time.perf_counter() - t, 3), round(time.process_time() - c, 3), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--segment-mb", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evlog-bench-erase-") as tmp:
        home = os.path.join(tmp, "ws")
        print(f"building {args.messages} messages ...", file=sys.stderr)
        _build(home, args.messages, args.sessions, args.segment_mb, args.seed)
        with Workspace.open(home, writable=True) as ws:
            events = ws.log.last_seq
            segments = len([n for n in os.listdir(ws.log.dir) if n.endswith(".jsonl")])
            rebuild_s, rebuild_cpu, _ = _timed(lambda: replay.rebuild(ws))
            dry_s, dry_cpu, dry = _timed(lambda: erase(ws, Target("session", "s3"), dry_run=True))
            held: list[float] = []  # erasure.commit: the write lock is held within it (event, seal, rewrites)
            commit = erasure.commit

            def timed_commit(*a: Any, **k: Any) -> int:
                t = time.perf_counter()
                try:
                    return commit(*a, **k)
                finally:
                    held.append(time.perf_counter() - t)

            erasure.commit = timed_commit  # type: ignore[assignment]
            try:
                erase_s, erase_cpu, report = _timed(lambda: erase(ws, Target("session", "s3")))
            finally:
                erasure.commit = commit  # type: ignore[assignment]
            problems = [p for p in ws.log.verify() if p.damaged]
        row = {"events": events, "segments": segments, "erased_lines": len(report.seqs),
               "segments_rewritten": len(report.segments), "rebuild_s": rebuild_s, "rebuild_cpu_s": rebuild_cpu,
               "dry_run_s": dry_s, "dry_run_cpu_s": dry_cpu, "erase_s": erase_s, "erase_cpu_s": erase_cpu,
               "commit_s": round(sum(held), 3),  # the write lock is held for at most this long
               "erase_over_rebuild_cpu": round(erase_cpu / rebuild_cpu, 2) if rebuild_cpu else None,
               "dry_run_places": len(list(dry.places())), "remaining": report.remaining, "verify_problems": len(problems)}
    if args.json:
        print(json.dumps(row))
    else:
        for k, v in row.items():
            print(f"{k:<20} {v}")
    return 0 if not row["remaining"] and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
