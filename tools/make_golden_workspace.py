#!/usr/bin/env python3
"""Write tests/golden/workspace-<version>/: a small workspace as a released evlog leaves it.

It runs the whole pipeline of the version on PYTHONPATH over the bundled examples
(examples/events.ndjson and examples/transcripts/): init, append, ingest, snapshot,
digest, dream (the offline extractor), archive, with a fixed clock, then keeps what a
user's workspace holds that a newer evlog must read: evlog.json, the log segments, the
projection checkpoint and the projection files (sessions/, memory/, diary/). Disposable
files (indexes, the recall index, locks) are left out: a newer evlog rebuilds them.
tests/app/test_upgrade.py opens the result with today's code, verifies it, replays it and
compares MEMORY.md and the session files.

Run it with the RELEASED code (not the working tree), e.g. for 0.2 from a checkout of it:

    PYTHONPATH=/path/to/evlog-0.2 python tools/make_golden_workspace.py v0.2
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, REPO)

FIXED_CLOCK = 1_796_100_000.0  # every event gets this ts, so a rerun writes the same files
KEEP = ("evlog.json", "log", "sessions", "memory", "diary", os.path.join("state", "projections.ckpt"))
DROP_SUFFIXES = (".idx", "LOCK", ".lock", ".tmp")


def build(home: str) -> None:
    """The released pipeline over the examples, into ``home``."""
    import processors
    from eventlog.app.append import append_ndjson
    from eventlog.app.workspace import Workspace, init_workspace
    from eventlog.ingest import ingest_paths
    from processors.llm import OfflineExtractor

    init_workspace(home)
    with Workspace.open(home, writable=True, clock=lambda: FIXED_CLOCK) as ws:
        events = os.path.join(REPO, "examples", "events.ndjson")
        with open(events, "rb") as f:
            append_ndjson(ws, f, events)
        report = ingest_paths(ws.log, [os.path.join(REPO, "examples", "transcripts")])
        assert report.ok, report
        for job in ("snapshot", "digest", "dream", "archive"):
            processors.run(ws, job, llm=OfflineExtractor() if job == "dream" else None)
        ws.flush()


def copy_kept(home: str, dest: str) -> None:
    for rel in KEEP:
        src = os.path.join(home, rel)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, rel),
                            ignore=lambda _d, names: [n for n in names if n.endswith(DROP_SUFFIXES)])
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)) or dest, exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].startswith("v"):
        print(__doc__, file=sys.stderr)
        return 2
    dest = os.path.join(REPO, "tests", "golden", f"workspace-{argv[0]}")
    if os.path.exists(dest):
        print(f"{dest} exists: a released version's golden workspace is never rewritten", file=sys.stderr)
        return 1
    import eventlog

    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "ws")
        build(home)
        copy_kept(home, dest)
    print(f"wrote {dest} with evlog from {os.path.dirname(os.path.dirname(eventlog.__file__))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
